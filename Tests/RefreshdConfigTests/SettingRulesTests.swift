import RefreshdCore
import Testing
@testable import RefreshdConfig

@Suite struct SettingRulesTests {
    private let head = "identifier: com.example.refresh\ncommand: [true]\n"

    @Test func environmentNamesAndValues() {
        let errors = TestSupport.errors(head + """
            environment:
              GOOD_NAME: ok
              1BAD: x
              WITH-DASH: y
              EMPTY:
              LIST: [a]
            """)
        #expect(errors.map(\.position) == ["5:3", "6:3", "7:9", "8:9"])
        #expect(errors[0].message == "environment: expected a variable name matching [A-Za-z_][A-Za-z0-9_]*, found \"1BAD\"")
        #expect(errors[2].message == "environment.EMPTY: expected a string, found nothing (null)")
        #expect(errors[3].message == "environment.LIST: expected a string, found a list")
    }

    @Test func environmentValuesKeepTheirText() throws {
        let config = try #require(TestSupport.config(head + "environment: {A: 'x y', B: true, C: \"\", _D: 1.50}\n"))
        #expect(config.environment == ["A": "x y", "B": "true", "C": "", "_D": "1.50"])
    }

    @Test func retryRules() {
        let errors = TestSupport.errors(head + """
            retry:
              initial: 10m
              max: 1m
            """)
        #expect(errors.map(\.position) == ["5:8"])
        #expect(errors.first?.message == "retry.max: expected at least retry.initial (10m), found 1m")

        let more = TestSupport.errors(head + "retry: {limit: -1, initial: 0s}\n")
        #expect(more.map(\.position) == ["3:16", "3:29"])
        #expect(more.first?.message == "retry.limit: expected a whole number 0 or greater, found \"-1\"")
        #expect(more.last?.message == "retry.initial: expected a duration greater than zero, found \"0s\"")

        #expect(TestSupport.onlyError(head + "retry: 5\n")?.message
            == "retry: expected a mapping with keys backoff, initial, max, limit, found \"5\"")
    }

    @Test func retryBackoffValues() throws {
        #expect(TestSupport.onlyError(head + "retry: {backoff: random}\n")?.message
            == "retry.backoff: expected one of exponential, linear, found \"random\"")
        let config = try #require(TestSupport.config(head + "retry: {}\n"))
        #expect(config.definition.retry == RetryPolicy())
    }

    @Test func resubmitRules() {
        #expect(TestSupport.onlyError(head + "resubmit: 6h\n")?.description
            == "Jobs/test.yaml:3:11: resubmit: expected a mapping with keys after, calendar, timezone, found \"6h\"")
        #expect(TestSupport.onlyError(head + "resubmit: {}\n")?.description
            == "Jobs/test.yaml:3:11: resubmit: missing required key \"after\" or \"calendar\" "
                + "(expected after: DURATION, like after: 6h, or calendar: EXPRESSION, like calendar: \"*-*-* 04:00\")")
        #expect(TestSupport.onlyError(head + "resubmit: {after: 0ms}\n")?.position == "3:19")
    }

    @Test func namespaceRules() {
        #expect(TestSupport.onlyError(head + "namespace: \"\"\n")?.position == "3:12")
        #expect(TestSupport.onlyError(head + "namespace: my app\n")?.message
            == "namespace: expected a name of letters, digits, ., - and _ (like default or com.example), found \"my app\"")
        #expect(TestSupport.onlyError(head + "namespace:\n")?.message.hasSuffix("found nothing (null)") == true)
    }

    @Test func requiresWithBadKindReportsOnlyTheKind() {
        let errors = TestSupport.errors(head + "kind: proccessing\nrequires: [network]\n")
        #expect(errors.map(\.position) == ["3:7"])
    }

    @Test(arguments: ["a.b", "com.example.wallpaper-refresh", "x_1.Y_2.z-3"])
    func validIdentifiers(identifier: String) {
        #expect(TestSupport.config("identifier: \(identifier)\ncommand: [true]\n")?.identifier == identifier)
    }

    @Test func emptyProgramString() {
        #expect(TestSupport.onlyError("identifier: a.b\ncommand: ['', x]\n")?.description
            == "Jobs/test.yaml:2:11: command: expected a program name or path, found an empty string")
    }
}
