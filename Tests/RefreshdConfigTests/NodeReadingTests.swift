import Testing
import Yams
@testable import RefreshdConfig

@Suite struct NodeReadingTests {
    func value(_ yaml: String) throws -> Node {
        let root = try #require(try Yams.compose(yaml: yaml))
        guard case .mapping(let mapping) = root, let value = mapping.first?.value else {
            Issue.record("expected a one-key mapping")
            return root
        }
        return value
    }

    @Test func textColumnsInPlainAndQuotedScalars() throws {
        // "v: " puts the value's first character (or its quote) at column 4.
        #expect(try value("v: abc d").location(ofTextColumn: 5) == Location(line: 1, column: 8))
        #expect(try value("v: \"abc d\"").location(ofTextColumn: 5) == Location(line: 1, column: 9))
        #expect(try value("v: 'abc d'").location(ofTextColumn: 5) == Location(line: 1, column: 9))
        #expect(try value("v:   abc").location(ofTextColumn: 1) == Location(line: 1, column: 6))
    }

    @Test func doubledSingleQuotesCountTwice() throws {
        // Text a'b c: 'c' is character 5, written at column 10 ('a''b c' starting at column 4).
        #expect(try value("v: 'a''b c'").location(ofTextColumn: 5) == Location(line: 1, column: 10))
    }

    @Test func blockAndMultiLineScalarsPointAtTheValue() throws {
        #expect(try value("v: |\n  abc\n").location(ofTextColumn: 2) == Location(line: 1, column: 4))
        #expect(try value("v: \"a\\nb\"").location(ofTextColumn: 3) == Location(line: 1, column: 4))
    }

    @Test func flowMappingValues() throws {
        let outer = try value("r: {calendar: \"x y\", timezone: UTC}")
        guard case .mapping(let inner) = outer, let calendar = inner["calendar"] else { Issue.record("mapping"); return }
        #expect(calendar.location(ofTextColumn: 3) == Location(line: 1, column: 18))
    }
}
