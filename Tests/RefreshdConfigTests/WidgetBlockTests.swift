import RefreshdCore
import RefreshdRuntime
import Testing
@testable import RefreshdConfig

@Suite struct WidgetBlockTests {
    @Test func aTimelineJobWithACommandProvider() throws {
        let config = try #require(TestSupport.config("""
            identifier: design.example.wallpaper.widget
            kind: timeline
            command: [true]
            allowance: 20s
            widget:
              kind: wallpaper
              families: [systemSmall, systemMedium]
              budget: 40
              shared-fetch: 2m
            """))
        #expect(config.widget == WidgetSpec(kind: "wallpaper", families: ["systemSmall", "systemMedium"], budget: 40,
                                            sharedFetch: .seconds(120), provider: .command))
        #expect(config.definition.kind == .processing)
        #expect(config.spec.widget == config.widget)
    }

    @Test func defaultsUnlimitedAndThePlaylistProvider() throws {
        let config = try #require(TestSupport.config("""
            identifier: design.example.wallpaper.widget
            kind: timeline
            provider: playlist
            widget: {kind: wallpaper, families: [accessoryRectangular], budget: unlimited}
            """))
        #expect(config.widget?.budget == nil)
        #expect(config.widget?.families == ["accessoryRectangular"])
        guard case let .action(action)? = config.widget?.provider else {
            Issue.record("expected the built-in playlist provider, found \(String(describing: config.widget?.provider))")
            return
        }
        #expect(action.name == "playlist")
        #expect(config.command.isEmpty)
        let defaulted = try #require(TestSupport.config("""
            identifier: a.b
            kind: timeline
            command: [true]
            widget: {kind: w, families: [systemLarge]}
            """))
        #expect(defaulted.widget?.budget == 50)
        #expect(defaulted.widget?.sharedFetch == .seconds(300))
        #expect(defaulted.widget?.minReloadInterval == .seconds(300))
        #expect(defaulted.widget?.budgetScope == .family)
    }

    @Test func theMinimumIntervalAndTheBudgetScope() throws {
        let config = try #require(TestSupport.config("""
            identifier: test.app.weather
            kind: timeline
            command: [true]
            widget: {kind: weather, families: [systemSmall], min-reload-interval: 0s, budget-scope: namespace}
            """))
        #expect(config.widget?.minReloadInterval == .zero)
        #expect(config.widget?.budgetScope == .namespace)
        #expect(config.widget?.budgetGroup(namespace: config.definition.namespace) == "namespace \(config.definition.namespace)")
        let kind = try #require(TestSupport.config("identifier: a.b\nkind: timeline\ncommand: [true]\nwidget: {kind: w, families: [systemSmall], budget-scope: kind}"))
        #expect(kind.widget?.budgetGroup(namespace: "x") == "kind w")
    }

    @Test(arguments: [
        ("kind: timeline\ncommand: [true]", "kind: timeline needs a widget: block"),
        ("command: [true]\nwidget: {kind: w, families: [systemSmall]}", "widget: applies only to kind: timeline"),
        ("kind: timeline\ncommand: [true]\nwidget: {kind: w, families: [systemSmal]}", "widget.families: expected one of"),
        ("kind: timeline\ncommand: [true]\nwidget: {kind: w, families: [systemSmall, systemSmall]}", "systemSmall is listed twice"),
        ("kind: timeline\ncommand: [true]\nwidget: {kind: w, families: []}", "expected a non-empty list of families"),
        ("kind: timeline\ncommand: [true]\nwidget: {kind: w, families: [systemSmall], budget: 0}", "expected 1 to 1440 reloads a day"),
        ("kind: timeline\ncommand: [true]\nwidget: {kind: w, families: [systemSmall], budget: 99999999999999999999}", "widget.budget"),
        ("kind: timeline\ncommand: [true]\nwidget: {kind: ../etc, families: [systemSmall]}", "widget.kind: expected 1 to 64 letters"),
        ("kind: timeline\ncommand: [true]\nwidget: {families: [systemSmall]}", "missing required key \"kind\""),
        ("kind: timeline\ncommand: [true]\nprovider: playlist\nwidget: {kind: w, families: [systemSmall]}", "provider: playlist replaces command:"),
        ("command: [true]\nprovider: playlist", "provider: applies only to kind: timeline"),
        ("kind: timeline\nprovider: rss\nwidget: {kind: w, families: [systemSmall]}", "provider: expected one of"),
        ("kind: timeline\ncommand: [true]\nwidget: {kind: w, families: [systemSmall], budget-scope: app}",
         "widget.budget-scope: expected one of family, kind, namespace"),
        ("kind: timeline\ncommand: [true]\nwidget: {kind: w, families: [systemSmall], min-reload-interval: 2d}",
         "widget.min-reload-interval: expected at most 24h"),
        ("kind: timeline\ncommand: [true]\nwidget: {kind: w, families: [systemSmall], min-reload-interval: soon}",
         "widget.min-reload-interval"),
    ])
    func mistakesAreNamedWhereTheyAre(body: String, message: String) {
        let errors = TestSupport.errors("identifier: a.b\n" + body)
        #expect(errors.contains { $0.message.contains(message) }, "\(errors.map(\.message))")
        #expect(errors.allSatisfy { $0.line > 1 }, "errors point into the file: \(errors)")
    }

    @Test func thePlaylistProvidersPolicy() throws {
        func fingerprint(_ policy: String) throws -> String? {
            let config = try #require(TestSupport.config("""
                identifier: a.b
                kind: timeline
                provider: playlist
                timezone: Europe/Paris
                widget: {kind: w, families: [systemSmall]\(policy)}
                """))
            guard case let .action(action)? = config.widget?.provider else { return nil }
            return action.fingerprint
        }
        #expect(try fingerprint("") == "zone=Europe/Paris\npolicy=atEnd\nfolder=wallpaper")
        #expect(try fingerprint(", policy: after-start-of-tomorrow") == "zone=Europe/Paris\npolicy=afterStartOfTomorrow\nfolder=wallpaper")
        let wrong = try #require(TestSupport.onlyError("identifier: a.b\nkind: timeline\nprovider: playlist\nwidget: {kind: w, families: [systemSmall], policy: never}"))
        #expect(wrong.message == "widget.policy: expected one of after-start-of-tomorrow, atEnd, found \"never\"")
        let command = try #require(TestSupport.onlyError("identifier: a.b\nkind: timeline\ncommand: [true]\nwidget: {kind: w, families: [systemSmall], policy: atEnd}"))
        #expect(command.message.hasPrefix("widget.policy: applies only to provider: playlist"))
        #expect(command.position == "4:44")
    }
}
