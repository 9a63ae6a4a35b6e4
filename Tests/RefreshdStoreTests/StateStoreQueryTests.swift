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

    /// The core counts; the store keeps each (day, job) row as it was last given.
    @Test func counterRowsAreKeptAsGivenNewestDayFirst() throws {
        try withStore { store, directory in
            try store.apply([.counters(DailyCounter(day: "2026-11-21", identifier: "a", launches: 1)),
                             .counters(DailyCounter(day: "2026-11-22", identifier: "b", launches: 2, crashed: 1,
                                                    interrupted: 1))])
            try store.apply([.counters(DailyCounter(day: "2026-11-22", identifier: "a", launches: 1, expired: 1)),
                             .counters(DailyCounter(day: "2026-11-22", identifier: "a", launches: 2, successes: 1,
                                                    failures: 1, expired: 1, missed: 7))])
            let expected = [
                DailyCounter(day: "2026-11-22", identifier: "a", launches: 2, successes: 1, failures: 1,
                             expired: 1, missed: 7),
                DailyCounter(day: "2026-11-22", identifier: "b", launches: 2, crashed: 1, interrupted: 1),
                DailyCounter(day: "2026-11-21", identifier: "a", launches: 1),
            ]
            try reopened(directory) { again throws in
                #expect(try again.dailyCounters(days: nil) == expected)
                #expect(try again.dailyCounters(days: 1) == Array(expected.prefix(2)))
                #expect(try again.dailyCounters(days: 2) == expected)
                #expect(try again.dailyCounters(days: 0).isEmpty)
                // A restart gives the core the latest day's rows to go on counting.
                #expect(try again.restoredState().counters == Array(expected.prefix(2)))
            }
            #expect(expected[0].count(of: .expired) == 1)
        }
    }
}
