import Testing
@testable import RefreshdCore

/// A budget shared by several widget kinds (`budgetGroup`): their counted reloads count
/// together, a full group defers every member to the instant the shared window frees a slot,
/// and without a group each family keeps its own budget. Input -> exact effects.
@Suite struct TimelineBudgetGroupTests {
    static let weather = WidgetID(kind: "weather", family: .systemSmall)
    static let photos = WidgetID(kind: "photos", family: .systemSmall)
    static let t0 = TimelineDriver.start
    static let day = Duration.seconds(86_400)

    static func definitions(group: String?) -> [WidgetDefinition] {
        ["weather", "photos"].map {
            WidgetDefinition(kind: $0, families: [.systemSmall], job: "\($0).provider", budget: .limited(3), budgetGroup: group)
        }
    }

    static func quiet(_: WidgetID, _ now: Instant) -> ProviderResult {
        .timeline(timeline([now], .never), upstreamFetch: false)
    }

    @Test func kindsInOneGroupSpendOneBudget() {
        var d = TimelineDriver(Self.definitions(group: "namespace app"), provider: Self.quiet)
        d.advance(by: .seconds(10))  // each kind's first timeline: 2 of the shared 3
        #expect(d.calls(of: Self.photos) == [Self.t0] && d.calls(of: Self.weather) == [Self.t0])
        d.advance(to: .at(1, 0))
        d.send(.reload(kind: "weather", reason: .explicitAPI))  // the third
        #expect(d.logs.last == .providerAsked(Self.weather, .explicitAPI, exempt: false, used: 3, limit: 3, window: Self.day))
        d.advance(by: .seconds(10))
        let before = d.effects.count
        d.send(.reload(kind: "photos", reason: .explicitAPI))  // photos has made one reload, yet the group's 3 are spent
        let acts = d.effects[before...].filter { if case .persist = $0 { false } else { true } }
        #expect(Array(acts) == [
            .log(.deferred(Self.photos, .explicitAPI, used: 3, limit: 3, window: Self.day, release: Self.t0 + Self.day)),
            .log(.staleStarted(Self.photos, since: .at(1, 0) + .seconds(10), .budgetSpent)),
        ])
        let snapshot = d.machine.snapshot()
        #expect(snapshot.widgets.map(\.budgetUsed) == [3, 3])
        #expect(snapshot.widgets.map(\.budgetLeft) == [0, 0])
        // Released when the first reloads leave the window, then the group is full again.
        d.advance(to: Self.t0 + Self.day)
        #expect(d.calls(of: Self.photos).last == Self.t0 + Self.day)
        // An exempt reload still goes through at once.
        d.send(.reload(kind: "weather", reason: .widgetIntent))
        #expect(d.calls(of: Self.weather).last == Self.t0 + Self.day)
    }

    @Test func withoutAGroupEachFamilyHasItsOwnBudget() {
        var d = TimelineDriver(Self.definitions(group: nil), provider: Self.quiet)
        d.advance(to: .at(1, 0))
        d.send(.reload(kind: "weather", reason: .explicitAPI))
        d.advance(by: .seconds(10))
        d.send(.reload(kind: "photos", reason: .explicitAPI))
        #expect(d.calls(of: Self.photos) == [Self.t0, .at(1, 0) + .seconds(10)])
        #expect(d.machine.snapshot().widgets.map(\.budgetUsed) == [2, 2])
    }

    @Test func aRestartKeepsTheSharedCount() {
        var d = TimelineDriver(Self.definitions(group: "kind shared"), provider: Self.quiet)
        d.advance(to: .at(1, 0))
        d.send(.reload(kind: "weather", reason: .explicitAPI))
        d.advance(by: .seconds(10))
        d.restart(at: .at(2, 0))
        d.send(.reload(kind: "photos", reason: .explicitAPI))
        #expect(d.machine.record(Self.photos)?.release == Self.t0 + Self.day)
        #expect(d.machine.checkInvariants().isEmpty)
    }
}
