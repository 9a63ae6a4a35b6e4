import Testing
@testable import RefreshdCore
@testable import RefreshdRuntime
@testable import RefreshdStore
import RefreshdTestSupport

/// Templates folded (issue 33, item 6): a template's instances counted by state by the store,
/// the same on SQLite (on its indexes) and in memory, through a reader of one store or several;
/// a provider's (`T[K]#family`) state is its instance's, counted once; a list row's state read
/// by key.
@Suite struct InstanceCountsTests {
    static var changes: [StateChange] { SearchFixture.changesWithProviders }
    static var expected: [String: InstanceCounts] { SearchFixture.countsExpected }

    @Test func sqliteAndMemoryCountTheSame() throws {
        try withStore { sqlite, _ in
            let memory = InMemoryStore()
            try sqlite.apply(Self.changes)
            try memory.apply(Self.changes)
            for (template, counts) in Self.expected {
                #expect(try sqlite.instanceCounts(of: template) == counts, "SQLite \(template)")
                #expect(try memory.instanceCounts(of: template) == counts, "in memory \(template)")
                #expect(try StateReader(stores: [sqlite], jobs: []).instanceCounts(of: template) == counts, "reader \(template)")
            }
        }
    }

    /// Each identifier's rows in one store of two, as a cluster's shards hold them: the counts
    /// add up, and the template's pause (saved in one store) pauses every instance.
    @Test func aReaderOfSeveralStoresAddsThemUp() throws {
        let left = InMemoryStore(), right = InMemoryStore()
        for change in Self.changes {
            let id = SearchFixture.identifier(of: change)
            // An instance and its providers in the same store, as `ShardMap` places them.
            let instance = id.split(separator: "#").first.map(String.init) ?? id
            try (instance.utf8.count % 2 == 0 ? left : right).apply([change])
        }
        let reader = StateReader(stores: [left, right], jobs: [])
        for (template, counts) in Self.expected {
            #expect(try reader.instanceCounts(of: template) == counts, "\(template)")
        }
    }

    /// A list row's state, by key: the same on both stores, and an instance's with its
    /// providers' folded in.
    @Test func statesByKey() throws {
        try withStore { sqlite, _ in
            let memory = InMemoryStore()
            try sqlite.apply(Self.changes)
            try memory.apply(Self.changes)
            let ids = ["feed[user10]", "feed[m]", "feed[m]#small", "feed[user2]", "feed[user2]#small", "feed[Z]", "feedx", "never.seen"]
            let states = try sqlite.states(of: ids)
            #expect(states == (try memory.states(of: ids)))
            #expect(states["never.seen"] == nil)
            // user10: pending, a run without an end (7), streak 2, its latest run 25.
            let user10 = try #require(states["feed[user10]"])
            #expect(user10.pending == SearchFixture.start + .seconds(1) && user10.running == 7 && user10.failureStreak == 2
                    && user10.lastRun?.runID == 25 && !user10.paused)
            #expect(states["feed[Z]"] == IdentifierState(paused: true))
            let reader = StateReader(stores: [sqlite], jobs: [])
            let rows = try reader.instanceStates(template: "feed", keys: ["m", "user2", "A"], families: ["small"])
            // m: its own request (4 s) before its provider's (60 s); its provider's run 28 in flight.
            #expect(rows["m"]?.pending == SearchFixture.start + .seconds(4) && rows["m"]?.running == 28 && rows["m"]?.failureStreak == 4)
            #expect(rows["user2"]?.failureStreak == 2 && rows["user2"]?.paused == true)
            #expect(rows["A"]?.running == 21 && rows["A"]?.failureStreak == 1)
        }
    }
}
