import Testing
@testable import RefreshdCore

/// Daily counters are the core's state: it counts launches on the UTC day a run starts,
/// outcomes on the day it ends, missed slots on the day they are noticed, and goes on from the
/// latest day the store gave back at restore.
@Suite struct SchedulerCoreCounterTests {
    /// 2026-11-22T00:00:00Z.
    static let midnight = Instant(milliseconds: 1_795_305_600_000)

    static let job = TaskDefinition(identifier: "a.job", kind: .processing, allowance: .seconds(60))

    /// A core whose first run of `a.job` was launched 10 s before `midnight`.
    static func launchedJustBeforeMidnight() throws -> VirtualDriver {
        var d = VirtualDriver([job], start: midnight - .seconds(10))
        try d.submit("a.job", kind: .processing)
        d.fireNext()
        return d
    }

    func rows(_ d: VirtualDriver) -> [DailyCounter] {
        d.stored.compactMap { if case let .counters(c) = $0 { c } else { nil } }
    }

    @Test func launchesCountOnTheStartDayAndOutcomesOnTheEndDay() throws {
        var d = try Self.launchedJustBeforeMidnight()
        d.now = Self.midnight + .seconds(5)
        d.finish(1, .exited(0))
        #expect(rows(d) == [DailyCounter(day: "2026-11-21", identifier: "a.job", launches: 1),
                            DailyCounter(day: "2026-11-22", identifier: "a.job", successes: 1)])
        try d.submit("a.job", kind: .processing)
        d.fireNext()
        d.finish(2, .exited(3))
        #expect(rows(d).last == DailyCounter(day: "2026-11-22", identifier: "a.job", launches: 1, successes: 1, failures: 1))
    }

    @Test func aRestartGoesOnCountingTheDayItWasGiven() throws {
        let def = TaskDefinition(identifier: "a.job", kind: .processing)
        var d = VirtualDriver([def], start: Self.midnight + .seconds(3600))
        let today = DailyCounter(day: "2026-11-22", identifier: "a.job", launches: 4, successes: 4)
        d.record(d.core.restore(.init(counters: [today]), at: d.now))
        try d.submit("a.job", kind: .processing)
        d.fireNext()
        #expect(rows(d).last == DailyCounter(day: "2026-11-22", identifier: "a.job", launches: 5, successes: 4))
        // Counters of an earlier day are not carried into today.
        var e = VirtualDriver([def], start: Self.midnight + .seconds(86_400))
        e.record(e.core.restore(.init(counters: [today]), at: e.now))
        try e.submit("a.job", kind: .processing)
        e.fireNext()
        #expect(rows(e).last == DailyCounter(day: "2026-11-23", identifier: "a.job", launches: 1))
    }

    @Test func nothingIsCountedWithoutAStore() throws {
        var configuration = SchedulerConfiguration()
        configuration.emitsStateChanges = false
        var d = VirtualDriver([TaskDefinition(identifier: "a.job")], configuration: configuration)
        try d.submit("a.job")
        d.fireNext()
        #expect(d.core.counters.isEmpty)
    }

    func prunes(_ d: VirtualDriver) -> [Instant] {
        d.stored.compactMap { if case let .pruneRuns(cutoff) = $0 { cutoff } else { nil } }
    }

    /// Once a UTC day, at the first launch or outcome counted on a new day, the core asks the
    /// store to forget the runs that ended before that day's start minus the retention; a fresh
    /// core (no day counted yet) has nothing to prune, and a retention of nil never prunes.
    @Test func finishedRunsArePrunedOnceADayBeyondTheRetention() throws {
        var d = try Self.launchedJustBeforeMidnight()
        #expect(prunes(d).isEmpty, "the first day counted by a fresh core")
        d.now = Self.midnight + .seconds(5)
        d.finish(1, .exited(0))
        #expect(prunes(d) == [Self.midnight - .seconds(30 * 86_400)])
        try d.submit("a.job", kind: .processing)
        d.fireNext()
        d.finish(2, .exited(0))
        #expect(prunes(d).count == 1, "once a day")
        // After a restart on a later day: the day the store gave back is the known one.
        var e = VirtualDriver([Self.job], start: Self.midnight + .seconds(3 * 86_400 + 60))
        e.record(e.core.restore(.init(counters: [DailyCounter(day: "2026-11-22", identifier: "a.job", launches: 1)]), at: e.now))
        try e.submit("a.job", kind: .processing)
        e.fireNext()
        #expect(prunes(e) == [Self.midnight + .seconds(3 * 86_400) - .seconds(30 * 86_400)])
        // No retention: never.
        var configuration = SchedulerConfiguration()
        configuration.runRetention = nil
        var f = VirtualDriver([Self.job], configuration: configuration, start: Self.midnight - .seconds(10))
        try f.submit("a.job", kind: .processing)
        f.fireNext()
        f.now = Self.midnight + .seconds(5)
        f.finish(1, .exited(0))
        #expect(prunes(f).isEmpty)
    }

    /// A day's row is found through a slot hint only when the hinted row is the identifier's:
    /// a hint of another row (another table's slot, or yesterday's rows) falls back to the name.
    @Test func todaysRowsAreFoundByAHintOnlyWhenItNamesThem() {
        func row(_ identifier: String) -> () -> DailyCounter { { DailyCounter(day: "2026-11-22", identifier: identifier) } }
        var today = TodayCounters()
        #expect(today.update("a", hint: SlotHint(0), making: row("a")) { $0.launches += 1 }.launches == 1)
        // b comes with a's hint: a row of its own, not a's.
        #expect(today.update("b", hint: SlotHint(0), making: row("b")) { $0.launches += 1 }.launches == 1)
        #expect(today.update("a", hint: .none, making: row("a")) { $0.launches += 1 }.launches == 2)
        #expect(today.update("b", hint: SlotHint(0), making: row("b")) { $0.launches += 1 }.launches == 2)
        #expect(today.update("a", hint: SlotHint(7), making: row("a")) { $0.launches += 1 }.launches == 3)
        #expect(today.rows.map(\.identifier) == ["a", "b"])
        // A new day: the hints learned yesterday point at rows that now hold other names.
        today.removeAll()
        #expect(today.update("b", hint: SlotHint(9), making: row("b")) { $0.successes += 1 }.launches == 0)
        #expect(today.update("a", hint: SlotHint(7), making: row("a")) { $0.successes += 1 }.successes == 1)
        #expect(today.update("a", hint: SlotHint(0), making: row("a")) { $0.successes += 1 }.successes == 2)
        #expect(today.rows.map(\.identifier) == ["b", "a"])
        #expect(today.rows.map(\.successes) == [1, 2])
    }
}
