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

    @Test func theProgramCannotHoldAPlaceholder() throws {
        let program = try #require(TestSupport.errors("""
            identifier: app.feed.refresh
            template: true
            parameters: [user]
            command: ["/bin/{user}"]
            """).first { $0.message.hasPrefix("command: the program cannot hold a placeholder") })
        #expect(program.line == 4 && program.column == 11)
    }

    static let timelineTemplate = """
        identifier: app.feed.widget
        kind: timeline
        template: true
        parameters: [user]
        command: [/bin/true, "--user", "{user}"]
        widget: {kind: "feed.{user}", families: [systemSmall, systemMedium], budget: 40}
        """

    /// A timeline template (issue 23): its widget's kind is a pattern, kept in its template
    /// spec (the job itself has no widget: only its instances do), each instance's derived.
    @Test func aTimelineTemplateKeepsItsKindPatternForItsInstances() throws {
        let config = try #require(TestSupport.config(Self.timelineTemplate))
        let spec = config.spec
        #expect(spec.widget == nil)
        let widget = try #require(spec.template?.widget)
        #expect(widget.kind == "feed.{user}")
        #expect(widget.budget == 40)
        #expect(spec.template?.instanceWidget(["user": "alice"])?.kind == "feed.alice")
        // '@' is not in a kind's alphabet: written "-at-".
        #expect(spec.template?.instanceWidget(["user": "bob@example.com"])?.kind == "feed.bob-at-example.com")
    }

    /// Every problem of a template's kind is located where it is written.
    @Test func aTimelineTemplatesKindProblemsAreLocated() throws {
        let unknown = try #require(TestSupport.onlyError(Self.timelineTemplate.replacingOccurrences(
            of: "\"feed.{user}\"", with: "\"feed.{usr}\"")))
        #expect(unknown.line == 6 && unknown.column == 22)
        #expect(unknown.message.hasPrefix("widget.kind: unknown placeholder {usr}"))
        let fixed = try #require(TestSupport.onlyError(Self.timelineTemplate.replacingOccurrences(
            of: "\"feed.{user}\"", with: "feed")))
        #expect(fixed.line == 6 && fixed.column == 16)
        #expect(fixed.message.hasPrefix("widget.kind: a template's widget kind needs a placeholder"))
        let slash = try #require(TestSupport.onlyError(Self.timelineTemplate.replacingOccurrences(
            of: "\"feed.{user}\"", with: "\"feed/{user}\"")))
        #expect(slash.line == 6 && slash.column == 16)
        #expect(slash.message.hasPrefix("widget.kind: expected letters, digits, '.', '_' or '-' around the placeholders"))
        let dot = try #require(TestSupport.onlyError(Self.timelineTemplate.replacingOccurrences(
            of: "\"feed.{user}\"", with: "\".{user}\"")))
        #expect(dot.message.hasPrefix("widget.kind: expected letters"))
        let scope = try #require(TestSupport.onlyError(Self.timelineTemplate.replacingOccurrences(
            of: "budget: 40}", with: "budget: 40, budget-scope: namespace}")))
        #expect(scope.line == 6 && scope.column == 96)
        #expect(scope.message.hasPrefix("widget.budget-scope: namespace would make every instance's widget share one budget"))
    }

    static let playlistTemplate = """
        identifier: app.wallpaper.widget
        kind: timeline
        template: true
        parameters: [user]
        provider: playlist
        widget: {kind: "wallpaper-{user}", families: [systemSmall], folder: "wallpaper-{user}"}
        """

    /// A `provider: playlist` template (issue 23): each instance's provider reads its own
    /// folder, `widget.folder` filled with its values; the parameter is a path parameter.
    @Test func aPlaylistTimelineTemplateReadsEachInstancesFolder() throws {
        let config = try #require(TestSupport.config(Self.playlistTemplate))
        let template = try #require(config.spec.template)
        #expect(template.pathParameters == ["user"])
        let widget = try #require(template.instanceWidget(["user": "bob@example.com"]))
        #expect(widget.kind == "wallpaper-bob-at-example.com")
        guard case let .action(provider) = widget.provider else {
            Issue.record("expected the playlist provider, found \(widget.provider)")
            return
        }
        #expect(provider.fingerprint.contains("folder=wallpaper-{user}"))
        // Filled as a path is: the value as it is (the folder its staging instance writes).
        #expect(provider.filled(["user": "bob@example.com"]).payload.contains("folder=wallpaper-bob@example.com"))
        // A value beginning with '.' would make a hidden folder (or '..' with folder: "{user}"): refused at the add.
        #expect(template.pathProblem(["user": ".."])?.contains("begins with '.'") == true)
        // Without folder: the one folder a job's playlist provider reads, as before.
        let plain = try #require(TestSupport.config(Self.playlistTemplate.replacingOccurrences(of: ", folder: \"wallpaper-{user}\"", with: "")))
        #expect(plain.spec.template?.pathParameters == [])
        if case let .action(provider)? = plain.spec.template?.widget?.provider {
            #expect(provider.fingerprint.hasSuffix("folder=wallpaper"))
        }
    }

    @Test func aPlaylistWidgetsFolderProblemsAreLocated() throws {
        let unknown = try #require(TestSupport.onlyError(Self.playlistTemplate.replacingOccurrences(
            of: "folder: \"wallpaper-{user}\"", with: "folder: \"wallpaper-{usr}\"")))
        #expect(unknown.line == 6 && unknown.column == 80)
        #expect(unknown.message.hasPrefix("widget.folder: unknown placeholder {usr}"))
        let slash = try #require(TestSupport.onlyError(Self.playlistTemplate.replacingOccurrences(
            of: "folder: \"wallpaper-{user}\"", with: "folder: \"a/{user}\"")))
        #expect(slash.line == 6 && slash.column == 69)
        #expect(slash.message.hasPrefix("widget.folder: expected one folder name under the shared container"))
        let long = try #require(TestSupport.onlyError(Self.playlistTemplate.replacingOccurrences(
            of: "folder: \"wallpaper-{user}\"", with: "folder: \"{user}-{user}\"")))
        #expect(long.message.hasPrefix("widget.folder: with 128-byte values the folder name could be 257 bytes"))
        // A command provider reads no folder.
        let command = try #require(TestSupport.onlyError(Self.timelineTemplate.replacingOccurrences(
            of: "budget: 40}", with: "budget: 40, folder: x}")))
        #expect(command.line == 6 && command.message.hasPrefix("widget.folder: applies only to provider: playlist"))
    }

    static let stageTemplate = """
        identifier: app.wallpaper.stage
        template: true
        parameters: [user]
        action: stage-playlist
        stage-playlist:
          library: "libraries/{user}"
          folder: "wallpaper-{user}"
          switch-times: ["06:00"]
          families: [systemMedium]
          widget: wallpaper
        """

    /// A `stage-playlist` template (issue 23): its library and folder hold `{user}`, filled per
    /// instance in the action's fingerprint and payload; `user` is a path parameter.
    @Test func aStagePlaylistTemplateFillsItsPathsPerInstance() throws {
        let config = try #require(TestSupport.config(Self.stageTemplate))
        let spec = config.spec
        #expect(spec.template?.pathParameters == ["user"])
        let action = try #require(spec.filled(["user": "alice"]).action)
        #expect(action.fingerprint.contains("folder=wallpaper-alice"))
        #expect(action.fingerprint.contains("library=/libraries/alice\n"))
        let options = try JSONDecoder().decode(StageOptions.self, from: Data(action.payload.utf8))
        #expect(options.folder == "wallpaper-alice")
        #expect(options.library == "/libraries/alice")
        #expect(options.widgetKind == "wallpaper")
        #expect(options.problems().isEmpty)
        // The template's own action is left with its placeholders (only instances run).
        #expect(spec.action?.fingerprint.contains("folder=wallpaper-{user}") == true)
    }

    @Test func aStagePlaylistTemplatesPlaceholdersAreCheckedAndLocated() throws {
        let unknown = try #require(TestSupport.onlyError(Self.stageTemplate.replacingOccurrences(
            of: "folder: \"wallpaper-{user}\"", with: "folder: \"wallpaper-{usr}\"")))
        #expect(unknown.line == 7 && unknown.column == 22)
        #expect(unknown.message.hasPrefix("stage-playlist.folder: unknown placeholder {usr}"))
        // With 128-byte values the name could pass NAME_MAX (255 bytes): refused when read.
        let long = try #require(TestSupport.onlyError(Self.stageTemplate.replacingOccurrences(
            of: "folder: \"wallpaper-{user}\"", with: "folder: \"{user}-{user}\"")))
        #expect(long.line == 7)
        #expect(long.message.hasPrefix("stage-playlist.folder: with 128-byte values the folder name could be 257 bytes"))
        // The reload kind's placeholders are checked as a timeline template's kind's are.
        let widget = try #require(TestSupport.onlyError(Self.stageTemplate.replacingOccurrences(
            of: "widget: wallpaper", with: "widget: \"wallpaper.{usr}\"")))
        #expect(widget.line == 10 && widget.column == 22)
        #expect(widget.message.hasPrefix("stage-playlist.widget: unknown placeholder {usr}"))
        let slash = try #require(TestSupport.onlyError(Self.stageTemplate.replacingOccurrences(
            of: "widget: wallpaper", with: "widget: \"wallpaper/{user}\"")))
        #expect(slash.line == 10 && slash.message.hasPrefix("stage-playlist.widget: expected letters, digits"))
    }

    /// Each instance of a staging template reloads its own widget kind (issue 23): the kind
    /// pattern is kept (`stagedKind`), values that cannot make a kind are refused at the add.
    @Test func aStagePlaylistTemplatesWidgetIsAKindPerInstance() throws {
        let config = try #require(TestSupport.config(Self.stageTemplate.replacingOccurrences(
            of: "widget: wallpaper", with: "widget: \"wallpaper-{user}\"")))
        let template = try #require(config.spec.template)
        #expect(template.stagedKind == "wallpaper-{user}")
        let action = try #require(config.spec.filled(["user": "bob@example.com"]).action)
        let options = try JSONDecoder().decode(StageOptions.self, from: Data(action.payload.utf8))
        #expect(options.widgetKind == "wallpaper-bob@example.com")
        #expect(options.problems().isEmpty)
        // Too long to make a kind: refused with the field and the parameter named.
        let long = String(repeating: "a", count: 60)
        let problem = try #require(template.pathProblem(["user": long]))
        #expect(problem.hasPrefix("user: stage-playlist.widget \"wallpaper-{user}\" would be"), "\(problem)")
        #expect(template.pathProblem(["user": "alice"]) == nil)
        // A fixed kind: every instance reloads the same widget, as before.
        #expect(try #require(TestSupport.config(Self.stageTemplate)).spec.template?.stagedKind == nil)
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

    /// A timeline template's `instances:` list: a row whose values cannot make a kind, or make
    /// one another row's values already make, is an error at its line, naming the instance.
    @Test func anInstancesFileOfATimelineTemplateRefusesRowsThatCannotMakeAKindOfTheirOwn() {
        TestSupport.withTemporaryDirectory { dir in
            let long = String(repeating: "x", count: 70)
            TestSupport.write("alice\nbob@example.com\nbob-at-example.com\n\(long)\n", to: "Jobs/users.txt", in: dir)
            let job = Self.timelineTemplate + "\ninstances: users.txt\n"
            let file = TestSupport.write(job, to: "Jobs/feed.yaml", in: dir)
            let errors: [ConfigError]
            switch JobDirectory.parse(yaml: job, file: file, projectRoot: dir, searchPath: TestSupport.searchPath,
                                      now: TestSupport.now, timeZone: TestSupport.machineZone) {
            case .success: errors = []
            case let .failure(all): errors = all.errors
            }
            #expect(errors.map { "\(($0.file as NSString).lastPathComponent):\($0.position)" } == ["users.txt:3:1", "users.txt:4:1"])
            #expect(errors.first?.message == "instances: app.feed.widget[bob-at-example.com]: its widget kind \"feed.bob-at-example.com\" "
                + "is already app.feed.widget[bob@example.com]'s (each '@' of a value is written \"-at-\"); expected values that make a kind of its own")
            #expect(errors.last?.message.hasPrefix("instances: app.feed.widget[\(long)]: user: widget.kind \"feed.{user}\" would be") == true)
        }
    }

    /// A plain timeline job whose kind an instance listed beside a timeline template would have
    /// is refused in the folder, at its widget.kind (issue 23): the two would share one widget.
    @Test func aPlainTimelineJobCannotTakeTheKindOfAListedInstance() {
        TestSupport.withTemporaryDirectory { dir in
            TestSupport.write("alice\nbob@example.com\n", to: "Jobs/users.txt", in: dir)
            TestSupport.write(Self.timelineTemplate + "\ninstances: users.txt\n", to: "Jobs/feed.yaml", in: dir)
            TestSupport.write("""
                identifier: app.plain.widget
                kind: timeline
                command: [/bin/true]
                widget: {families: [systemSmall], kind: feed.bob-at-example.com}
                """, to: "Jobs/plain.yaml", in: dir)
            let errors: [ConfigError]
            switch JobDirectory.load(dir + "/Jobs", searchPath: TestSupport.searchPath, now: TestSupport.now,
                                     timeZone: TestSupport.machineZone) {
            case .success: errors = []
            case let .failure(all): errors = all.errors
            }
            #expect(errors.map { "\(($0.file as NSString).lastPathComponent):\($0.position)" } == ["plain.yaml:4:41"])
            #expect(errors.first?.message.hasPrefix("widget.kind: \"feed.bob-at-example.com\" is the widget kind of instance "
                + "app.feed.widget[bob@example.com] (its template's kind \"feed.{user}\", each '@' of a value is written \"-at-\")") == true,
                "\(errors)")
        }
    }
}
