import Testing
@testable import RefreshdCore

/// Per-day counters: stale time split at UTC midnight (the machine wakes at midnight to write
/// it, even with nothing else due), the first stale instant of each day, calls and fetches.
@Suite struct TimelineCounterTests {
    static let small = WidgetID(kind: "quotes", family: .systemSmall)
    static let medium = WidgetID(kind: "quotes", family: .systemMedium)
    static let definition = WidgetDefinition(kind: "quotes", families: [.systemSmall, .systemMedium],
                                             job: "quotes.provider", budget: .limited(2), failureRetry: nil)

    @Test func staleTimeIsSplitAtMidnightByAWakeUpThere() {
        var d = TimelineDriver([Self.definition], start: .at(18, 0))
        d.complete(Self.small, .timeline(timeline([.at(18, 0)], .never), upstreamFetch: true))
        d.complete(Self.medium, .timeline(timeline([.at(18, 0)], .never), upstreamFetch: false))
        d.advance(to: .at(20, 0))
        d.send(.reload(kind: "quotes", reason: .explicitAPI))
        d.complete(Self.small, .failed(reason: "exit 2", expired: false))  // stale from 20:00, no retry
        d.complete(Self.medium, .timeline(timeline([.at(20, 0)], .never), upstreamFetch: false))
        #expect(d.machine.nextDeadline == .at(day: 1, 0, 0))
        d.advance(to: .at(day: 2, 6, 0))
        #expect(d.row("2026-11-22", Self.small)?.staleMinutes == 240)
        #expect(d.row("2026-11-23", Self.small)?.staleMinutes == 1440)
        #expect(d.row("2026-11-23", Self.small)?.firstStale == .at(day: 1, 0, 0))
        #expect(d.row("2026-11-23", Self.small)?.staleReason == .providerFailed)
        #expect(d.row("2026-11-24", Self.small)?.staleMinutes == 0)  // written at midnight, nothing since
        #expect(d.row("2026-11-23", Self.medium) == nil)  // a quiet day leaves no row
        let today = d.row("2026-11-22", Self.small)
        #expect(today?.requested == 2 && today?.performed == 2 && today?.providerCalls == 2)
        #expect(today?.upstreamFetches == 1 && today?.failed == 1 && today?.budgetLow == 0)
        #expect(d.row("2026-11-22", Self.medium)?.upstreamFetches == 0)
        // The snapshot counts the open span up to its instant.
        let status = d.machine.snapshot(at: .at(day: 2, 6, 0)).widgets[0]
        #expect(status.staleSince == .at(20, 0) && status.staleReason == .providerFailed)
        #expect(status.budgetUsed == 0 && status.budgetLeft == 2)
    }

    @Test func shutdownWritesTheStaleTimeSoFar() {
        var d = TimelineDriver([Self.definition], start: .at(18, 0))
        d.complete(Self.small, .timeline(timeline([.at(18, 0)], .never), upstreamFetch: true))
        d.send(.reload(kind: "quotes", reason: .explicitAPI))
        d.send(.reload(kind: "quotes", reason: .explicitAPI))  // coalesced after small's call
        d.complete(Self.small, .failed(reason: "exit 2", expired: false))  // small: stale, and deferred (2/2 spent)
        #expect(d.machine.record(Self.small)?.release == .at(day: 1, 18, 0))
        d.now = .at(19, 30)
        d.send(.shutdown)
        #expect(d.row("2026-11-22", Self.small)?.staleMinutes == 90)
        #expect(d.machine.nextDeadline == nil)
        d.send(.reload(kind: "quotes", reason: .appForeground))
        #expect(d.calls.count == 3)  // nothing is asked for while stopping
    }

    @Test func aClockSteppedBackNeverReplacesAPastDaysRow() {
        var d = TimelineDriver([Self.definition], start: .at(23, 0))
        d.complete(Self.small, .timeline(timeline([.at(23, 0)], .never), upstreamFetch: true))
        d.complete(Self.medium, .timeline(timeline([.at(23, 0)], .never), upstreamFetch: true))
        d.advance(to: .at(day: 1, 0, 30))
        d.send(.timerFired)  // the machine has seen the new day
        let saved = d.row("2026-11-22", Self.small)
        d.now = .at(23, 30)
        d.send(.clockChanged)  // back across midnight
        d.send(.reload(kind: "quotes", reason: .explicitAPI))
        d.complete(Self.small, .failed(reason: "exit 2", expired: false))
        #expect(d.row("2026-11-22", Self.small) == saved)  // untouched
        let today = d.row("2026-11-23", Self.small)
        #expect(today?.requested == 1 && today?.failed == 1)
        #expect(today?.firstStale == .at(23, 30) && today?.staleReason == .providerFailed)
    }
}
