import Testing
@testable import RefreshdConfig

@Suite struct NodeReadingTests {
    /// The value of a one-key mapping, and the source to place its characters in.
    func value(_ yaml: String) throws -> (node: YAMLNode, source: SourceText) {
        let document = try YAMLComposer.compose(yaml).get()
        guard case .mapping(let pairs, _)? = document.root, let value = pairs.first?.value else {
            Issue.record("expected a one-key mapping")
            throw YAMLComposer.Failure(location: .start, message: "not a mapping")
        }
        return (value, SourceText(text: yaml))
    }

    func column(_ yaml: String, _ column: Int) throws -> Location {
        let (node, source) = try value(yaml)
        return node.location(ofTextColumn: column, in: source)
    }

    @Test func textColumnsInPlainAndQuotedScalars() throws {
        // "v: " puts the value's first character (or its quote) at column 4.
        #expect(try column("v: abc d", 5) == Location(line: 1, column: 8))
        #expect(try column("v: \"abc d\"", 5) == Location(line: 1, column: 9))
        #expect(try column("v: 'abc d'", 5) == Location(line: 1, column: 9))
        #expect(try column("v:   abc", 1) == Location(line: 1, column: 6))
    }

    @Test func doubledSingleQuotesCountTwice() throws {
        // Text a'b c: 'c' is character 5, written at column 10 ('a''b c' starting at column 4).
        #expect(try column("v: 'a''b c'", 5) == Location(line: 1, column: 10))
    }

    @Test func escapesInDoubleQuotesCountAsWritten() throws {
        // Text "a<newline>b": b is character 3, written at column 8 ("a\nb" starting at column 4).
        #expect(try column("v: \"a\\nb\"", 3) == Location(line: 1, column: 8))
        #expect(try column("v: \"\\x41\\u0042c\"", 3) == Location(line: 1, column: 15))
    }

    @Test func multiLineValuesArePlacedOnTheirOwnLine() throws {
        // A plain scalar folded over two lines: "Mon..Fri 25:00", the hour is character 10.
        #expect(try column("v: Mon..Fri\n  25:00\n", 10) == Location(line: 2, column: 3))
        // A folded block scalar: its text starts on the line after the indicator.
        #expect(try column("v: >\n  *-*-*\n  25:00\n", 7) == Location(line: 3, column: 3))
        #expect(try column("v: |\n  abc\n", 2) == Location(line: 2, column: 4))
        // A double-quoted value continued on the next line.
        #expect(try column("v: \"*-*-*\n   25:00\"\n", 7) == Location(line: 2, column: 4))
    }

    @Test func tagsAndAnchorsBeforeTheValueAreSkipped() throws {
        #expect(try column("v: &a !!str abc d", 5) == Location(line: 1, column: 17))
    }

    @Test func flowMappingValues() throws {
        let (outer, source) = try value("r: {calendar: \"x y\", timezone: UTC}")
        guard case .mapping(let inner, _) = outer, let calendar = inner.first(where: { $0.key.scalarText == "calendar" })?.value else {
            Issue.record("mapping"); return
        }
        #expect(calendar.location(ofTextColumn: 3, in: source) == Location(line: 1, column: 18))
    }
}
