import Foundation
import RefreshdCore
import Testing
@testable import RefreshdConfig

/// `template: true` and `parameters:` (issue 23): a template is read with its parameters, its
/// instances get their own namespace, and every placeholder problem is located at its column.
@Suite struct TemplateFileTests {
    @Test func aTemplateIsReadWithItsParametersAndANamespaceOfItsOwn() throws {
        let config = try #require(TestSupport.config("""
            identifier: app.feed.refresh
            template: true
            parameters: [user, region]
            command: [/bin/sh, "-c", "refresh --user={user} --in {region} {{not a placeholder}", "{user}"]
            environment: {FEED_USER: "{user}", PLAIN: "x"}
            resubmit: {after: 1h}
            """))
        #expect(config.parameters == ["user", "region"])
        // Not the app prefix (app.feed): a million pending instances never fill the app's quota.
        #expect(config.definition.namespace == "app.feed.refresh")
        let spec = config.spec
        #expect(spec.template == TemplateSpec(parameters: ["user", "region"], firstRequest: .core))
        let filled = spec.command.filled(["user": "alice", "region": "eu"])
        #expect(filled.argv == ["/bin/sh", "-c", "refresh --user=alice --in eu {not a placeholder}", "alice"])
        #expect(filled.environment == ["FEED_USER": "alice", "PLAIN": "x"])
    }

    @Test func anUnknownPlaceholderIsLocatedAtItsColumn() throws {
        let error = try #require(TestSupport.onlyError("""
            identifier: app.feed.refresh
            template: true
            parameters: [user]
            command: [/bin/true, "--user={usr}"]
            """))
        #expect(error.line == 4)
        #expect(error.column == 30)
        #expect(error.message == "command: unknown placeholder {usr}; expected one of the parameters {user} (or {{ for a literal brace)")
    }

    @Test func anUnknownPlaceholderInTheEnvironmentIsLocated() throws {
        let error = try #require(TestSupport.onlyError("""
            identifier: app.feed.refresh
            template: true
            parameters: [user]
            command: [/bin/true]
            environment:
              REGION: "eu-{region}"
            """))
        #expect(error.line == 6)
        #expect(error.column == 15)
        #expect(error.message.hasPrefix("environment.REGION: unknown placeholder {region}"))
    }

    @Test func anUnclosedBraceIsLocated() throws {
        let error = try #require(TestSupport.onlyError("""
            identifier: app.feed.refresh
            template: true
            parameters: [user]
            command: [/bin/true, "x{user"]
            """))
        #expect(error.line == 4 && error.column == 24)
        #expect(error.message.contains("an unclosed '{'"))
    }

    @Test func aTemplateWithoutParametersIsAnError() throws {
        let error = try #require(TestSupport.onlyError("""
            identifier: app.feed.refresh
            template: true
            command: [/bin/true]
            """))
        #expect(error.line == 2 && error.column == 11)
        #expect(error.message.hasPrefix("template: true needs parameters:"))
    }

    @Test func parametersWithoutATemplateAndBadNamesAreErrors() throws {
        let lone = try #require(TestSupport.onlyError("""
            identifier: app.feed.refresh
            parameters: [user]
            command: [/bin/true]
            """))
        #expect(lone.line == 2 && lone.column == 1)
        #expect(lone.message.hasPrefix("parameters: applies only to a template"))
        let errors = TestSupport.errors("""
            identifier: app.feed.refresh
            template: true
            parameters: [user, "1x", user]
            command: [/bin/true]
            """)
        #expect(errors.map { "\($0.line):\($0.column)" } == ["3:20", "3:26"])
    }

    @Test func theProgramCannotHoldAPlaceholderNorCanATimelineOrAnAction() throws {
        let program = try #require(TestSupport.errors("""
            identifier: app.feed.refresh
            template: true
            parameters: [user]
            command: ["/bin/{user}"]
            """).first { $0.message.hasPrefix("command: the program cannot hold a placeholder") })
        #expect(program.line == 4 && program.column == 11)
        let timeline = try #require(TestSupport.errors("""
            identifier: app.feed.refresh
            kind: timeline
            template: true
            parameters: [user]
            command: [/bin/true]
            widget: {kind: feed, families: [systemSmall]}
            """).first { $0.message.hasPrefix("kind: timeline cannot be a template yet") })
        #expect(timeline.line == 2 && timeline.column == 7)
    }

    @Test func withoutATemplateBracesAreLiteralAsBefore() throws {
        let config = try #require(TestSupport.config("""
            identifier: app.feed.refresh
            command: [/bin/echo, "{user}", "{"]
            """))
        #expect(config.command == ["/bin/echo", "{user}", "{"])
        #expect(config.parameters == nil)
        #expect(config.definition.namespace == "app.feed")
    }

    /// `instances: FILE`: one key per line, or a CSV with a header of parameter names; every
    /// problem is located in the list file.
    @Test func anInstancesFileIsReadAndItsProblemsAreLocated() throws {
        try TestSupport.withTemporaryDirectory { dir in
            TestSupport.write("# users\nalice\n\nbob@example.com\r\n", to: "Jobs/users.txt", in: dir)
            let job = "identifier: app.feed.refresh\ntemplate: true\nparameters: [user]\ncommand: [/bin/true, \"{user}\"]\ninstances: users.txt\n"
            let file = TestSupport.write(job, to: "Jobs/feed.yaml", in: dir)
            let config = try JobDirectory.parse(yaml: job, file: file, projectRoot: dir, searchPath: TestSupport.searchPath,
                                                 now: TestSupport.now, timeZone: TestSupport.machineZone).get()
            #expect(config.instances?.map(\.key) == ["alice", "bob@example.com"])
            #expect(config.spec.instanceSource?.records.first?.values == ["user": "alice"])

            TestSupport.write("region,user\neu,alice\nus,a b\nus\n", to: "Jobs/pairs.csv", in: dir)
            let csvJob = "identifier: app.sync\ntemplate: true\nparameters: [user, region]\ncommand: [/bin/true]\ninstances: pairs.csv\n"
            let csvFile = TestSupport.write(csvJob, to: "Jobs/sync.yaml", in: dir)
            let errors: [ConfigError]
            switch JobDirectory.parse(yaml: csvJob, file: csvFile, projectRoot: dir, searchPath: TestSupport.searchPath,
                                      now: TestSupport.now, timeZone: TestSupport.machineZone) {
            case .success: errors = []
            case let .failure(all): errors = all.errors
            }
            #expect(errors.map { "\(($0.file as NSString).lastPathComponent):\($0.position)" } == ["pairs.csv:3:4", "pairs.csv:4:1"])
            #expect(errors.first?.message.hasPrefix("instances: the value \"a b\" holds") == true)

            TestSupport.write("region,user\neu,alice\n", to: "Jobs/ok.csv", in: dir)
            let okJob = csvJob.replacingOccurrences(of: "pairs.csv", with: "ok.csv")
            let ok = try JobDirectory.parse(yaml: okJob, file: csvFile, projectRoot: dir, searchPath: TestSupport.searchPath,
                                            now: TestSupport.now, timeZone: TestSupport.machineZone).get()
            #expect(ok.instances == [InstanceRecord(template: "app.sync", key: "alice.eu", values: ["user": "alice", "region": "eu"])])
        }
    }
}
