import Testing
@testable import RefreshdCore
@testable import RefreshdRuntime
@testable import RefreshdStore
import RefreshdTestSupport

/// Search and filter (issue 33, item 5): the SQLite store's SQL and the in-memory store's scan
/// find the same, page for page in both directions; what they find is the rule's; a reader of
/// several stores merges their pages into the one store's answer.
@Suite struct StoreSearchTests {
    static let identifiers = ["feed[user1]", "feed[user10]", "feedx", "feed[A]", "feed[m]#small", "quiet[k1]", "never.seen"]

    @Test func sqliteAndMemoryFindTheSamePagesBothWays() throws {
        try withStore { sqlite, _ in
            let memory = InMemoryStore()
            try sqlite.apply(SearchFixture.changes)
            try memory.apply(SearchFixture.changes)
            #expect(try searchMismatches(sqlite, memory, identifiers: Self.identifiers) == [])
            // The same searches counted in a pass and paged by the index (as more results than
            // are read whole would be), not read whole.
            for wholeRead in [0, 1, 3] {
                let found = try StateStore.$wholeRead.withValue(wholeRead) { () throws -> [String] in
                    try searchMismatches(sqlite, memory, identifiers: Self.identifiers)
                }
                #expect(found == [], "read whole up to \(wholeRead)")
            }
        }
    }

    /// What a template's counts count, its search lists: an instance failing, pending or
    /// running only through its provider (`feed[user2]#small`'s streak) included (issue 33).
    @Test func whatIsCountedIsListed() throws {
        try withStore { sqlite, _ in
            let memory = InMemoryStore()
            try sqlite.apply(SearchFixture.changesWithProviders)
            try memory.apply(SearchFixture.changesWithProviders)
            for store in [sqlite, memory] as [any StateStoring] {
                for (template, counts) in SearchFixture.countsExpected {
                    func listed(_ state: SearchState) throws -> Int {
                        try store.searchInstances(InstanceSearch(template: template, state: state), cursor: nil, limit: 100).items.count
                    }
                    #expect(try [listed(.pending), listed(.running), listed(.failing)] == [counts.pending, counts.running, counts.failing],
                            "\(type(of: store)) \(template)")
                }
                let failing = try store.searchInstances(InstanceSearch(template: "feed", state: .failing), cursor: nil, limit: 100)
                #expect(failing.items.map(\.key) == ["A", "b_c", "m", "user10", "user2"] && failing.total == 5, "\(type(of: store))")
            }
        }
    }

    @Test func whatASearchFinds() throws {
        try withStore { store, _ in
            try store.apply(SearchFixture.changes)
            func keys(_ state: SearchState?, _ text: String = "") throws -> [String] {
                try store.searchInstances(InstanceSearch(template: "feed", text: text, state: state), cursor: nil, limit: 100).items.map(\.key)
            }
            // Identifier order: `user10]` before `user1]`, `A.]` before `A]`.
            #expect(try keys(nil) == ["A.", "A", "Z", "a-b", "b_c", "feed2", "m", "user10", "user11", "user1", "user2", "user3", "z@x"])
            // A text in the template's name too is looked for in the keys alone.
            #expect(try keys(nil, "feed") == ["feed2"] && keys(.pending, "e") == ["user10", "user1", "user3"] && keys(.pending, "ee").isEmpty)
            // A provider's request (`feed[user3]#small`) is its instance's, as the counts have it;
            // the plain jobs `feed`, `feedx` are not instances.
            #expect(try keys(.pending) == ["A.", "m", "user10", "user1", "user3", "z@x"])
            // A streak above zero; `user2`'s is 0.
            #expect(try keys(.failing) == ["A", "b_c", "m", "user10"])
            // Runs without an end: `feed[m]#small`'s is its provider's, so `m` runs.
            #expect(try keys(.running) == ["A", "m", "user10"])
            #expect(try keys(.paused) == ["Z", "user2"])
            #expect(try keys(nil, "user1") == ["user10", "user11", "user1"])
            #expect(try keys(.pending, "user1") == ["user10", "user1"])
            // Values come with the page, whatever the state read.
            let pending = try store.searchInstances(InstanceSearch(template: "feed", state: .pending), cursor: nil, limit: 10).items
            #expect(pending.first { $0.key == "user1" }?.values == ["user": "user1", "region": "eu"])

            // Pages of 5 of 13, both ways, each knowing its place.
            let search = InstanceSearch(template: "feed")
            let first = try store.searchInstances(search, cursor: nil, limit: 5)
            #expect(first.position == 0 && first.total == 13 && !first.hasPrevious && first.hasNext)
            let second = try store.searchInstances(search, cursor: .after(first.items.last!.key), limit: 5)
            #expect(second.position == 5 && second.items.map(\.key) == ["feed2", "m", "user10", "user11", "user1"])
            let third = try store.searchInstances(search, cursor: .after(second.items.last!.key), limit: 5)
            #expect(third.position == 10 && third.items.count == 3 && !third.hasNext)
            let back = try store.searchInstances(search, cursor: .before(third.items.first!.key), limit: 5)
            #expect(back.position == 5 && back.items.map(\.key) == second.items.map(\.key))
            let backAgain = try store.searchInstances(search, cursor: .before(back.items.first!.key), limit: 5)
            #expect(backAgain.position == 0 && backAgain.items.map(\.key) == first.items.map(\.key) && !backAgain.hasPrevious)

            // Runs: newest start first, ties by the higher run id; failed is every outcome but success.
            let all = try store.searchRuns(RunSearch(), cursor: nil, limit: 100)
            #expect(all.total == 30 && all.items.map(\.runID).prefix(4) == [30, 29, 28, 27])
            let failed = try store.searchRuns(RunSearch(ending: RunSearch.ending(named: "failed")), cursor: nil, limit: 100)
            #expect(failed.items.allSatisfy { $0.outcome?.isFailure == true } && failed.total == all.items.count { $0.outcome?.isFailure == true })
            let running = try store.searchRuns(RunSearch(ending: .unfinished), cursor: nil, limit: 100)
            #expect(running.items.map(\.runID) == [28, 21, 14, 7])
            let window = RunSearch(identifier: "feedx", since: SearchFixture.start + .seconds(600), until: SearchFixture.start + .seconds(3000))
            let windowed = try store.searchRuns(window, cursor: nil, limit: 100).items
            #expect(!windowed.isEmpty && windowed.allSatisfy { $0.identifier == "feedx" && $0.started >= window.since! && $0.started < window.until! })
            let page = try store.searchRuns(RunSearch(), cursor: .after(RunPosition(all.items[9])), limit: 10)
            #expect(page.position == 10 && page.items.map(\.runID) == all.items[10..<20].map(\.runID))
            let previous = try store.searchRuns(RunSearch(), cursor: .before(RunPosition(page.items[0])), limit: 10)
            #expect(previous.position == 0 && previous.items.map(\.runID) == all.items[0..<10].map(\.runID))
        }
    }

    /// The instances split between two stores (as a cluster's shards hold them): the reader's
    /// merged pages are the one store's, position for position; a paused template (its record
    /// in one store only) pauses every instance.
    @Test func aReaderOfSeveralStoresMergesTheirPages() throws {
        let whole = InMemoryStore(), left = InMemoryStore(), right = InMemoryStore()
        try whole.apply(SearchFixture.changes)
        // Each identifier's rows in one store, as a shard holds them.
        for change in SearchFixture.changes {
            try (SearchFixture.identifier(of: change).utf8.count % 2 == 0 ? left : right).apply([change])
        }
        let one = StateReader(stores: [whole], jobs: [])
        let two = StateReader(stores: [left, right], jobs: [])
        for state in [nil] + SearchState.allCases.map(Optional.some) {
            let search = InstanceSearch(template: "feed", state: state)
            var cursor: SearchCursor<String>?
            for _ in 0..<10 {
                let (a, b) = (try one.searchInstances(search, cursor: cursor, limit: 3), try two.searchInstances(search, cursor: cursor, limit: 3))
                #expect(a.items.map(\.key) == b.items.map(\.key) && a.position == b.position && a.total == b.total, "\(search) \(String(describing: cursor))")
                guard a.hasNext, let last = a.items.last else { break }
                cursor = .after(last.key)
            }
        }
        #expect(try two.searchInstances(InstanceSearch(template: "quiet", state: .paused), cursor: nil, limit: 10).items.map(\.key) == ["k1", "k2", "k3"])
        let runs = try two.searchRuns(RunSearch(), cursor: .after(RunPosition(started: SearchFixture.start + .seconds(3600), runID: 25)), limit: 4)
        let expected = try one.searchRuns(RunSearch(), cursor: .after(RunPosition(started: SearchFixture.start + .seconds(3600), runID: 25)), limit: 4)
        #expect(runs.items.map(\.runID) == expected.items.map(\.runID) && runs.position == expected.position && runs.total == expected.total)
    }

    /// A version 7 file gains the search indexes (version 8) when opened, and a page of a
    /// template's instances reads through its index, not a scan and a sort.
    @Test func aVersion7FileGainsTheSearchIndexes() throws {
        let names = ["instances_in_identifier_order", "job_state_failing", "runs_by_start", "runs_by_identifier_start"]
        try withTemporaryDirectory { temp in
            let old = try StateStore.open(directory: temp)
            try old.apply(SearchFixture.changes)
            try old.connection.execute(script: (names + ["pending_not_own"]).map { "DROP INDEX \($0);" }.joined() + " PRAGMA user_version = 7",
                                       context: "test")
            old.close()
            let store = try StateStore.open(directory: temp)
            defer { store.close() }
            #expect(try Schema.userVersion(store.connection) == Schema.version)
            let found = try store.connection.query("SELECT name FROM sqlite_master WHERE type = 'index' ORDER BY name", context: "test") { $0.text(0) }
            #expect(Set(names).isSubset(of: Set(found)), "\(found)")
            let plan = try store.connection.query("""
                EXPLAIN QUERY PLAN SELECT key, parameter_values FROM instances WHERE template = ? AND key || ']' > ?
                ORDER BY key || ']' LIMIT ?
                """, [.text("feed"), .text("m]"), .int(5)], context: "test") { $0.text(3) }
            #expect(plan.contains { $0.contains("instances_in_identifier_order") } && !plan.contains { $0.contains("TEMP B-TREE") }, "\(plan)")
            #expect(try store.searchInstances(InstanceSearch(template: "feed"), cursor: .after("m"), limit: 2).items.map(\.key) == ["user10", "user11"])
        }
    }
}
