import RefreshdCore
import Testing
@testable import RefreshdConfig

/// `on-failure:` and `on-recovery:` in job files (issue 25): what is accepted, and each bad
/// value as a located error saying what was expected.
@Suite struct NotifierReaderTests {
    private let head = "identifier: com.example.refresh\ncommand: [true]\n"

    @Test func webhookAndCommandAreRead() throws {
        let config = try #require(TestSupport.config(head + """
            on-failure: {webhook: "https://hooks.example.net/refreshd?team=ops", timeout: 3s}
            on-recovery:
              command: [sh, -c, "echo ok"]
            """))
        #expect(config.notifiers.onFailure == Notifier(.webhook(url: "https://hooks.example.net/refreshd?team=ops"), timeout: .seconds(3)))
        #expect(config.notifiers.onRecovery == Notifier(.command(argv: ["/usr/bin/sh", "-c", "echo ok"], workingDirectory: "/")))
        #expect(config.notifiers.onRecovery?.timeout == .seconds(10))
        #expect(config.spec.notifiers == config.notifiers)
    }

    @Test func aJobWithoutThemHasNone() throws {
        let config = try #require(TestSupport.config(head))
        #expect(config.notifiers.isEmpty)
    }

    @Test func badValuesAreLocatedErrors() {
        let errors = TestSupport.errors(head + """
            on-failure: https://hooks.example.net
            on-recovery: {webhook: "ftp://example.net/x", timeout: 0s}
            """)
        #expect(errors.map(\.position) == ["3:13", "4:24", "4:56"])
        #expect(errors[0].message.hasPrefix("on-failure: expected a mapping like {webhook: "))
        #expect(errors[0].message.hasSuffix("found \"https://hooks.example.net\""))
        #expect(errors[1].message == "on-recovery.webhook: expected an http:// or https:// URL like https://hooks.example.net/refreshd, found \"ftp://example.net/x\"")
        #expect(errors[2].message == "on-recovery.timeout: expected a duration greater than zero, found \"0s\"")
    }

    @Test func exactlyOneTargetAndKnownKeys() {
        let both = TestSupport.errors(head + "on-failure: {command: [true], webhook: \"http://127.0.0.1:9/x\"}\n")
        #expect(both.map(\.position) == ["3:31"])
        #expect(both.first?.message == "on-failure: expected either command: or webhook:, found both")

        let neither = TestSupport.errors(head + "on-failure: {timeout: 5s}\n")
        #expect(neither.map(\.position) == ["3:13"])
        #expect(neither.first?.message.hasPrefix("on-failure: expected command: or webhook: (like ") == true)

        let misspelt = TestSupport.errors(head + "on-failure: {webhok: \"http://127.0.0.1:9/x\"}\n")
        #expect(misspelt.first?.message.contains("unknown key \"webhok\"") == true, "\(misspelt)")

        let long = TestSupport.errors(head + "on-failure: {webhook: \"http://127.0.0.1/\", timeout: 10m}\n")
        #expect(long.map(\.message) == ["on-failure.timeout: expected a duration of at most 5m, found \"10m\""])

        let spaced = TestSupport.errors(head + "on-failure: {webhook: \"http://exa mple.net/\"}\n")
        #expect(spaced.first?.message.hasPrefix("on-failure.webhook: expected an http:// or https:// URL") == true)

        let missing = TestSupport.errors(head + "on-failure: {command: [no-such-notifier-program]}\n")
        #expect(missing.map(\.position) == ["3:24"])
    }
}
