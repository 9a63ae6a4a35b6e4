import Testing
@testable import RefreshdCore

/// The reload budget: never more than N counted reloads in any trailing window, deferral to the
/// exact instant a slot frees, exemptions, coalescing, unlimited and empty budgets.
@Suite struct TimelineBudgetTests {
    static let small = WidgetID(kind: "photos", family: .systemSmall)
    static let medium = WidgetID(kind: "photos", family: .systemMedium)

    static func definition(_ budget: ReloadBudget, families: Set<WidgetFamily> = [.systemSmall]) -> WidgetDefinition {
        WidgetDefinition(kind: "photos", families: families, job: "photos.provider", budget: budget)
    }

    /// A provider with a day-long `never` timeline, so only requests cause reloads.
    static func quiet(_: WidgetID, _ now: Instant) -> ProviderResult {
        .timeline(timeline([now], .never), upstreamFetch: true)
    }

    /// The largest count of instants in any window of `window` (a half-open (t - window, t]).
    static func maxInWindow(_ instants: [Instant], _ window: Duration) -> Int {
        var best = 0, low = 0
        for high in instants.indices {
            while instants[low] + window <= instants[high] { low += 1 }
            best = max(best, high - low + 1)
        }
        return best
    }

    @Test func neverMoreThanTheBudgetInAnyWindowAndDeferralToTheExactInstant() {
        var d = TimelineDriver([Self.definition(.limited(3))], provider: Self.quiet)
        d.advance(by: .seconds(10))
        // Explicit reloads at 01:00, 02:00, 03:00: the first (at start) plus two fill the budget.
        for hour: Int64 in 1...3 {
            d.advance(to: .at(hour, 0))
            d.send(.reload(kind: "photos", reason: .explicitAPI))
            d.advance(by: .seconds(10))
        }
        #expect(d.calls(of: Self.small) == [.at(0, 0), .at(1, 0), .at(2, 0)])
        let record = d.machine.record(Self.small)
        #expect(record?.release == .at(day: 1, 0, 0))  // the oldest counted reload + 24 h
        #expect(record?.stale == StaleSpan(start: .at(3, 0), reason: .budgetSpent))
        #expect(d.logs.contains(.deferred(Self.small, .explicitAPI, used: 3, limit: 3, window: .hours(24),
                                          release: .at(day: 1, 0, 0))))
        d.advance(to: .at(day: 1, 0, 0) - .milliseconds(1))
        #expect(d.calls.count == 3)
        d.advance(to: .at(day: 1, 0, 0))
        #expect(d.calls(of: Self.small).last == .at(day: 1, 0, 0))
        d.advance(by: .seconds(10))
        #expect(d.machine.record(Self.small)?.stale == nil)
        #expect(d.machine.record(Self.small)?.recentSpans
            == [StaleSpan(start: .at(3, 0), end: .at(day: 1, 0, 0) + .seconds(2), reason: .budgetSpent)])
    }

    @Test func heavyRequestsNeverExceedTheBudget() {
        var d = TimelineDriver([Self.definition(.limited(50))], provider: Self.quiet)
        for _ in 0..<(4 * 24 * 12) {  // every 5 minutes for 4 days
            d.advance(by: .minutes(5))
            d.send(.reload(kind: "photos", reason: .explicitJob))
        }
        let calls = d.calls(of: Self.small)
        #expect(Self.maxInWindow(calls, .hours(24)) == 50)
        #expect(calls.count >= 4 * 50 && calls.count <= 5 * 50)
        // Every deferral released exactly when the window freed a slot: 24 h after a counted call.
        let counted = Set(calls)
        for call in calls.dropFirst(50) where !counted.contains(call - .hours(24)) {
            Issue.record("call at \(call) is not 24 h after a counted call")
        }
    }

    @Test func requestsCoalesceIntoOneDeferredReload() {
        var d = TimelineDriver([Self.definition(.limited(1))], provider: Self.quiet)
        d.advance(by: .seconds(10))
        for _ in 0..<5 {
            d.send(.reload(kind: "photos", reason: .explicitAPI))
            d.advance(by: .minutes(1))
        }
        #expect(d.calls.count == 1)
        let row = d.row("2026-11-22", Self.small)
        #expect(row?.requested == 6)
        #expect(row?.deferred == 1)
        #expect(row?.coalesced == 4)
        d.advance(to: .at(day: 1, 1, 0))
        #expect(d.calls(of: Self.small) == [.at(0, 0), .at(day: 1, 0, 0)])  // one reload for five requests
    }

    @Test func exemptReloadsNeitherCountNorWait() {
        var d = TimelineDriver([Self.definition(.limited(2))], provider: Self.quiet)
        d.advance(by: .seconds(10))
        d.send(.reload(kind: "photos", reason: .explicitAPI))
        d.advance(by: .seconds(10))
        #expect(d.machine.snapshot().widgets.first?.budgetLeft == 0)
        for reason in [ReloadReason.appForeground, .widgetIntent, .significantTimeChange, .localeChange] {
            d.send(.reload(kind: "photos", reason: reason))
            #expect(d.calls.last?.1 == reason && d.calls.last?.2 == d.now)
            d.advance(by: .seconds(10))
        }
        #expect(d.calls.count == 6)
        #expect(d.machine.record(Self.small)?.ledger.count == 2)
        #expect(d.row("2026-11-22", Self.small)?.exempt == 4)
        #expect(d.row("2026-11-22", Self.small)?.performed == 2)
    }

    @Test func anExemptReloadStandsForTheDeferredOne() {
        var d = TimelineDriver([Self.definition(.limited(1))], provider: Self.quiet)
        d.advance(by: .seconds(10))
        d.send(.reload(kind: "photos", reason: .explicitAPI))  // deferred, stale
        #expect(d.machine.record(Self.small)?.stale != nil)
        d.advance(by: .hours(1))
        d.send(.reload(kind: "photos", reason: .appForeground))
        d.advance(by: .seconds(10))
        let record = d.machine.record(Self.small)
        #expect(record?.queued == nil && record?.release == nil && record?.stale == nil)
        d.advance(by: .hours(30))
        #expect(d.calls.count == 2)  // nothing left to release
    }

    @Test func systemReloadsOverBudgetWaitButDoNotMakeStale() {
        var d = TimelineDriver([Self.definition(.limited(1))], provider: Self.quiet)
        d.advance(by: .seconds(10))
        d.send(.reload(kind: "photos", reason: .system))
        #expect(d.machine.record(Self.small)?.release == .at(day: 1, 0, 0))
        #expect(d.machine.record(Self.small)?.stale == nil)
    }

    @Test func unlimitedNeverDefers() {
        var d = TimelineDriver([Self.definition(.unlimited)], provider: Self.quiet)
        for _ in 0..<500 {
            d.advance(by: .minutes(1))
            d.send(.reload(kind: "photos", reason: .explicitJob))
        }
        d.advance(by: .minutes(1))
        #expect(d.calls.count == 501)
        #expect(d.machine.record(Self.small)?.ledger.isEmpty == true)
        #expect(d.row("2026-11-22", Self.small)?.budgetLow == nil)
    }

    @Test func anEmptyBudgetWaitsForANewOne() {
        var d = TimelineDriver([Self.definition(.limited(0))], provider: Self.quiet)
        #expect(d.calls.isEmpty)
        #expect(d.machine.record(Self.small)?.queued?.reason == .added)
        #expect(d.machine.record(Self.small)?.release == nil)
        #expect(d.logs.contains(.deferred(Self.small, .added, used: 0, limit: 0, window: .hours(24), release: nil)))
        d.advance(by: .hours(5))
        #expect(d.calls.isEmpty)
        d.send(.declare(Self.definition(.limited(10))))
        #expect(d.calls(of: Self.small) == [.at(5, 0)])  // released by the new budget, at once
    }

    @Test func aShrunkBudgetMovesTheRelease() {
        var d = TimelineDriver([Self.definition(.limited(3))], provider: Self.quiet)
        for hour: Int64 in 1...3 {
            d.advance(to: .at(hour, 0))
            d.send(.reload(kind: "photos", reason: .explicitAPI))
        }
        d.advance(by: .minutes(1))
        #expect(d.machine.record(Self.small)?.release == .at(day: 1, 0, 0))
        d.send(.declare(Self.definition(.limited(1))))
        #expect(d.machine.record(Self.small)?.release == .at(day: 1, 2, 0))  // 3 in window, 1 allowed
    }

    @Test func eachFamilyHasItsOwnBudgetAndCall() {
        var d = TimelineDriver([Self.definition(.limited(2), families: [.systemSmall, .systemMedium])],
                               provider: Self.quiet)
        #expect(d.calls.map(\.0) == [Self.small, Self.medium])
        d.advance(by: .seconds(10))
        d.send(.reload(kind: "photos", reason: .explicitAPI))
        #expect(d.calls.count == 4)
        d.send(.reload(kind: "photos", reason: .explicitAPI))  // both in flight: coalesced
        d.advance(by: .seconds(10))
        #expect(d.calls.count == 4)  // and then deferred: each family spent its 2
        #expect(d.machine.record(Self.small)?.release == .at(day: 1, 0, 0))
        #expect(d.machine.record(Self.medium)?.release == .at(day: 1, 0, 0))
    }
}
