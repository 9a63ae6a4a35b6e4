import Testing
import RefreshdCore
import RefreshdStore

/// The read queries behind `refreshd status`, and the per-day counters.
@Suite struct StateStoreQueryTests {
    @Test func pendingRequestsAreOrderedByEarliestThenSequence() throws {
        try withStore { store, _ in
            let late = pendingRequest("late", earliest: at(9_000), sequence: 1)
            let tieSecond = pendingRequest("tie.b", earliest: at(5_000), sequence: 3)
            let tieFirst = pendingRequest("tie.a", earliest: at(5_000), sequence: 2)
            try store.apply([.savePending(late), .savePending(tieSecond), .savePending(tieFirst)])
            #expect(try store.pendingRequests().map(\.identifier) == ["tie.a", "tie.b", "late"])
        }
    }

    @Test func recentRunsAreNewestFirstAndLimited() throws {
        try withStore { store, _ in
            try store.apply((1...5).map { .runStarted(runRecord(Int64($0), "job\($0 % 2)")) })
            #expect(try store.recentRuns(limit: 3).map(\.runID) == [5, 4, 3])
            #expect(try store.recentRuns(limit: 0).isEmpty)
            #expect(try store.recentRuns(limit: 100).count == 5)
        }
    }

    @Test func lastRunPerJobIsTheHighestRunIDOfEachIdentifier() throws {
        try withStore { store, _ in
            let a1 = runRecord(1, "a"), b2 = runRecord(2, "b"), a3 = runRecord(3, "a", started: at(hour))
            try store.apply([.runStarted(a1), .runStarted(b2), .runStarted(a3)])
            try store.apply([ended(a1, at: at(130_000), .success, exit: 0)])
            #expect(try store.lastRunPerJob() == [a3, b2])
        }
    }

    @Test func missedSlotsAddUpPerDay() throws {
        try withStore { store, _ in
            try store.apply([.missedSlots(identifier: "cal", count: 5, noticed: at(hour)),
                             .missedSlots(identifier: "cal", count: 2, noticed: at(2 * hour))])
            let counters = try store.dailyCounters(days: nil)
            #expect(counters.map(\.missed) == [7])
            #expect(counters.first?.launches == 0)
        }
    }

    @Test func dailyCountersCountLaunchesOnTheStartDayAndOutcomesOnTheEndDay() throws {
        try withStore { store, directory in
            let midnight = at(14 * hour)  // 2026-11-22T00:00:00Z
            let crossing = runRecord(1, "a", started: midnight - .seconds(10))
            let a2 = runRecord(2, "a", started: midnight + .seconds(60))
            let a3 = runRecord(3, "a", started: midnight + .seconds(120))
            let b4 = runRecord(4, "b", started: midnight + .seconds(180))
            try store.apply([.runStarted(crossing)])
            try store.apply([ended(crossing, at: midnight + .seconds(5), .expired), .runStarted(a2)])
            try store.apply([ended(a2, at: midnight + .seconds(70), .failure, exit: 2), .runStarted(a3)])
            try store.apply([ended(a3, at: midnight + .seconds(130), .success, exit: 0), .runStarted(b4)])
            try store.apply([ended(b4, at: midnight + .seconds(200), .crashed, signal: 11)])
            let five = runRecord(5, "b", started: midnight + .seconds(300))
            try store.apply([.runStarted(five), ended(five, at: midnight + .seconds(301), .interrupted)])

            let expected = [
                DailyCounter(day: "2026-11-22", identifier: "a", launches: 2, successes: 1, failures: 1,
                             expired: 1),
                DailyCounter(day: "2026-11-22", identifier: "b", launches: 2, crashed: 1, interrupted: 1),
                DailyCounter(day: "2026-11-21", identifier: "a", launches: 1),
            ]
            try reopened(directory) { again throws in
                #expect(try again.dailyCounters(days: nil) == expected)
                #expect(try again.dailyCounters(days: 1) == Array(expected.prefix(2)))
                #expect(try again.dailyCounters(days: 2) == expected)
                #expect(try again.dailyCounters(days: 0).isEmpty)
            }
            #expect(expected[0].count(of: .expired) == 1)
        }
    }
}
