import Testing
@testable import RefreshdConfig

@Suite struct ConfigErrorTests {
    @Test func descriptionIsCompilerStyle() {
        let error = ConfigError(file: "Jobs/bad.yaml", line: 4, column: 12,
                                message: "allowance: expected a duration like 30s, 10m or 1h30m, found \"thirty\"")
        #expect(error.description
            == "Jobs/bad.yaml:4:12: allowance: expected a duration like 30s, 10m or 1h30m, found \"thirty\"")
    }

    @Test func errorsAreSortedByFileLineAndColumn() {
        let errors = ConfigErrors([
            ConfigError(file: "b.yaml", line: 1, column: 1, message: "x"),
            ConfigError(file: "a.yaml", line: 10, column: 1, message: "y"),
            ConfigError(file: "a.yaml", line: 2, column: 5, message: "z"),
            ConfigError(file: "a.yaml", line: 2, column: 3, message: "w"),
        ])
        #expect(errors.description == "a.yaml:2:3: w\na.yaml:2:5: z\na.yaml:10:1: y\nb.yaml:1:1: x")
    }

    @Test func yamlMarksAreOneBased() throws {
        // libYAML counts from 0; the composer adds 1. The value `x` sits at line 2, column 7.
        let error = try #require(TestSupport.errors("identifier: a.b\nkind: x\ncommand: [true]\n").first)
        #expect(error.position == "2:7")
        #expect(SourceText.location(ofUTF8Offset: 5, in: "ab\ncdef") == Location(line: 2, column: 3))
    }
}
