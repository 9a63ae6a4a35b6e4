import Testing
@testable import RefreshdCore

/// Each reload policy asks at the right instant, and only then.
@Suite struct TimelinePolicyTests {
    static let small = WidgetID(kind: "photos", family: .systemSmall)
    static func definition(_ budget: ReloadBudget = .default) -> WidgetDefinition {
        WidgetDefinition(kind: "photos", families: [.systemSmall], job: "photos.provider", budget: budget)
    }

    @Test func firstTimelineIsAskedForOnceRestored() {
        let d = TimelineDriver([Self.definition()])
        #expect(d.calls.map(\.1) == [.added])
        #expect(d.machine.nextDeadline == nil)  // the call is in flight: nothing else is due
    }

    @Test func declaresBeforeRestoreAskForNothing() {
        var machine = TimelineMachine()
        let effects = machine.handle(.declare(Self.definition()), at: TimelineDriver.start)
        #expect(!effects.contains { if case .runProvider = $0 { true } else { false } })
    }

    @Test func atEndReloadsWhenTheLastEntryComes() {
        var d = TimelineDriver([Self.definition()]) { _, now in
            .timeline(timeline([now, now + .hours(6), now + .hours(12)], .atEnd), upstreamFetch: true)
        }
        d.advance(by: .hours(30))
        let calls = d.calls(of: Self.small)
        // Asked at start, answered 2 s later; then at each timeline's last entry (12 h after it).
        #expect(calls == [.at(0, 0), .at(12, 0) + .seconds(2), .at(24, 0) + .seconds(4)])
    }

    @Test func afterReloadsAtItsDate() {
        var d = TimelineDriver([Self.definition()]) { _, now in
            .timeline(timeline([now], .after(now + .minutes(90))), upstreamFetch: false)
        }
        d.advance(by: .hours(4))
        #expect(d.calls(of: Self.small).map { $0.duration(since: .at(0, 0)) }
            == [.zero, .seconds(2 + 5400), .seconds(4 + 2 * 5400)])
    }

    @Test func neverReloadsOnlyWhenAsked() {
        var d = TimelineDriver([Self.definition()]) { _, now in
            .timeline(timeline([now, now + .hours(1)], .never), upstreamFetch: false)
        }
        d.advance(by: .hours(48))
        #expect(d.calls.count == 1)
        #expect(d.machine.nextDeadline == nil)
        d.send(.reload(kind: "photos", reason: .explicitAPI))
        d.send(.reload(kind: nil, reason: .explicitJob))  // coalesced into the one in flight
        #expect(d.calls.count == 2)
        d.advance(by: .minutes(1))
        #expect(d.calls.count == 3)  // the coalesced reload, once, after the call
        #expect(d.calls.map(\.1) == [.added, .explicitAPI, .explicitJob])
    }

    @Test func emptyAtEndTimelineReloadsAtOnceWithinBudget() {
        var d = TimelineDriver([Self.definition(.limited(5))]) { _, _ in
            .timeline(Timeline(entries: [], policy: .atEnd), upstreamFetch: false)
        }
        d.advance(by: .hours(1))
        // Reloads back to back until the budget is spent, then one deferral to the day after.
        #expect(d.calls.count == 5)
        let record = d.machine.record(Self.small)
        #expect(record?.release == .at(day: 1, 0, 0))
        #expect(record?.stale?.reason == .budgetSpent)
    }

    @Test func pastAfterDateReloadsAtOnce() {
        var d = TimelineDriver([Self.definition()])
        d.complete(Self.small, .timeline(timeline([d.now], .after(d.now - .hours(1))), upstreamFetch: false))
        #expect(d.calls.count == 2)
        #expect(d.calls.last?.1 == .policyAfter)
    }

    @Test func policyDueWhileTheProviderRunsWaitsForItsResult() {
        var d = TimelineDriver([Self.definition()])
        d.complete(Self.small, .timeline(timeline([d.now + .minutes(10)], .atEnd), upstreamFetch: false))
        d.send(.reload(kind: "photos", reason: .explicitJob))  // in flight across the atEnd instant
        d.advance(by: .minutes(20))
        #expect(d.calls.count == 2)
        d.complete(Self.small, .timeline(timeline([d.now + .hours(1)], .atEnd), upstreamFetch: false))
        #expect(d.calls.count == 2)  // the new timeline's policy replaces the old one
        #expect(d.machine.nextDeadline == d.now + .hours(1))
    }
}
