import Foundation
import Testing
@testable import RefreshdCore
@testable import RefreshdRuntime
import RefreshdPostgres
import RefreshdTestSupport
@testable import RefreshdStore

/// The PostgreSQL shard store folds state changes exactly as the SQLite `StateStore` and the
/// `InMemoryStore` do (StoreParityTests proves those two alike): the same random batches
/// (valid and refused ones) go into a leased shard and into the in-memory store, and after
/// every batch both agree on success, the restored state and every query.
@Suite struct PostgresFoldTests {
    /// A bounded count of the parity test's seeds (each batch is a real transaction).
    @Test func randomBatchesFoldAsInMemory() throws {
        let server = try PrivateServer.shared.get()
        let db = try PostgresDatabase(connection: try server.freshDatabase(), shardCount: 8)
        defer { db.close() }
        // Each seed in a shard of its own, as a shard's leader commits it (shard 0 starts its run
        // ids at 1, as SQLite does; the others at their range, checked below).
        for seed in UInt64(1)...8 {
            let shard = Int(seed - 1)
            let lease = try #require(try db.acquire(shard: shard, node: "node-\(seed)", lease: .seconds(300)))
            let store = try db.store(shard: shard, epoch: lease.epoch)
            let memory = InMemoryStore()
            var generator = ChangeGenerator(seed: seed)
            for batchNumber in 1...30 {
                let batch = generator.batch()
                let where_ = "seed \(seed) batch \(batchNumber): \(batch)"
                let postgresResult = Result { try store.apply(batch) }
                let memoryResult = Result { try memory.apply(batch) }
                if !memoryResult.failed { generator.committed() }
                #expect(postgresResult.failed == memoryResult.failed,
                        "\(where_): PostgreSQL \(postgresResult), memory \(memoryResult)")
                if case let .failure(error) = postgresResult {
                    #expect(error is PostgresError && !(error is ShardFenced), "\(where_): \(error)")
                }
                try expectSameState(store, memory, shard: shard, where_)
            }
            // Every search, every page both ways (issue 33), on what the seed left.
            #expect(try searchMismatches(store, memory, identifiers: ChangeGenerator.identifiers) == [], "seed \(seed)")
            try db.release(shard: shard, node: "node-\(seed)", epoch: lease.epoch)
        }
    }

    /// Search and filter (issue 33, item 5): PostgreSQL's SQL finds what the in-memory store's
    /// scan finds, page for page in both directions, on a state with instances in every state.
    @Test func searchesFindWhatMemoryFinds() throws {
        let server = try PrivateServer.shared.get()
        let db = try PostgresDatabase(connection: try server.freshDatabase(), shardCount: 2)
        defer { db.close() }
        let lease = try #require(try db.acquire(shard: 1, node: "a", lease: .seconds(60)))
        let store = try db.store(shard: 1, epoch: lease.epoch)
        let memory = InMemoryStore()
        // Shard 1's run ids are its range's.
        let changes = SearchFixture.changes.map { change -> StateChange in
            switch change {
            case var .runStarted(run):
                run.runID += ShardMap.runIDSpan
                return .runStarted(run)
            case let .runEnded(runID, identifier, ended, outcome, exitStatus, signal, slot, reason, usage):
                return .runEnded(runID: runID + ShardMap.runIDSpan, identifier: identifier, ended: ended, outcome: outcome,
                                 exitStatus: exitStatus, signal: signal, slot: slot, reason: reason, usage: usage)
            default: return change
            }
        }
        try store.apply(changes)
        try memory.apply(changes)
        let identifiers = ["feed[user1]", "feed[user10]", "feedx", "feed[A]", "feed[m]#small", "quiet[k1]", "never.seen"]
        #expect(try searchMismatches(store, memory, identifiers: identifiers) == [])
        let failing = try store.searchInstances(InstanceSearch(template: "feed", state: .failing), cursor: nil, limit: 10)
        #expect(failing.items.map(\.key) == ["A", "b_c", "m", "user10"] && failing.total == 4)
    }

    /// Templates folded (issue 33, item 6): PostgreSQL counts a template's instances by state as
    /// SQLite and memory do (`InstanceCountsTests`, the same changes and counts): a timeline
    /// template's provider (`T[K]#family`) counted as its instance, once; and reads each
    /// identifier's state by key as memory does, so a list row folds its providers' alike.
    @Test func templateCountsFoldProvidersAsTheOtherStores() throws {
        let server = try PrivateServer.shared.get()
        let db = try PostgresDatabase(connection: try server.freshDatabase(), shardCount: 1)
        defer { db.close() }
        let lease = try #require(try db.acquire(shard: 0, node: "a", lease: .seconds(60)))
        let store = try db.store(shard: 0, epoch: lease.epoch)
        let memory = InMemoryStore()
        try store.apply(SearchFixture.changesWithProviders)
        try memory.apply(SearchFixture.changesWithProviders)
        for (template, counts) in SearchFixture.countsExpected {
            #expect(try store.instanceCounts(of: template) == counts, "\(template)")
            // What is counted is listed (a provider's state is its instance's).
            func listed(_ state: SearchState) throws -> [String] {
                try store.searchInstances(InstanceSearch(template: template, state: state), cursor: nil, limit: 100).items.map(\.key)
            }
            #expect(try [listed(.pending).count, listed(.running).count, listed(.failing).count] == [counts.pending, counts.running, counts.failing],
                    "\(template)")
        }
        #expect(try store.searchInstances(InstanceSearch(template: "feed", state: .failing), cursor: nil, limit: 100).items.map(\.key)
                    == ["A", "b_c", "m", "user10", "user2"])
        let ids = ["feed[user10]", "feed[m]", "feed[m]#small", "feed[user2]", "feed[user2]#small", "feed[user3]#small", "feed[Z]",
                   "other[o1]#small", "feedx", "never.seen"]
        #expect(try store.states(of: ids) == (try memory.states(of: ids)))
        let keys = ["m", "user2", "user3", "A", "Z", "nobody"]
        let rows = try StateReader(stores: [store], jobs: []).instanceStates(template: "feed", keys: keys, families: ["small"])
        #expect(rows == (try StateReader(stores: [memory], jobs: []).instanceStates(template: "feed", keys: keys, families: ["small"])))
        #expect(rows["m"]?.running == 28 && rows["m"]?.failureStreak == 4 && rows["user2"]?.failureStreak == 2, "\(rows)")
    }

    /// Text with NUL and identifiers equal to Swift but not byte for byte are stored whole and
    /// kept apart, as SQLite does.
    @Test func bytesAreKeptExactly() throws {
        let server = try PrivateServer.shared.get()
        let db = try PostgresDatabase(connection: try server.freshDatabase(), shardCount: 2)
        defer { db.close() }
        let lease = try #require(try db.acquire(shard: 0, node: "a", lease: .seconds(60)))
        let store = try db.store(shard: 0, epoch: lease.epoch)
        try store.apply([.seedSpec(identifier: "x", spec: "plain"), .seedSpec(identifier: "x\0zzz", spec: "a\0b"),
                         .seedSpec(identifier: "caf\u{E9}", spec: "one"), .seedSpec(identifier: "cafe\u{301}", spec: "two")])
        #expect(try store.seedSpec(for: "x") == "plain")
        #expect(try store.seedSpec(for: "x\0zzz") == "a\0b")
        #expect(try store.seedSpec(for: "caf\u{E9}") == "one")
        #expect(try store.seedSpec(for: "cafe\u{301}") == "two")
    }

    /// An empty shard's runs start at its own range (shard × 10^12 + 1), so two shards' leaders
    /// never hand out one run id; with runs, the next id is the largest + 1, as SQLite.
    @Test func runIDsAreUniqueAcrossShards() throws {
        let server = try PrivateServer.shared.get()
        let db = try PostgresDatabase(connection: try server.freshDatabase(), shardCount: 3)
        defer { db.close() }
        var next: [Int64] = []
        for shard in 0..<3 {
            let lease = try #require(try db.acquire(shard: shard, node: "a", lease: .seconds(60)))
            next.append(try db.store(shard: shard, epoch: lease.epoch).restoredState().nextRunID)
        }
        #expect(next == [1, 1_000_000_000_001, 2_000_000_000_001])
        let store = try db.store(shard: 2, epoch: 1)
        try store.apply([.runStarted(RunRecord(runID: 2_000_000_000_001, identifier: "a", kind: .processing,
                                               submitted: .earliest, earliest: .earliest, started: .earliest,
                                               deadline: .earliest))])
        #expect(try store.restoredState().nextRunID == 2_000_000_000_002)
        // Shard 0's state has its own instance id, and so has every other shard.
        let ids = try (0..<3).map { try db.store(shard: $0, epoch: 0).instanceID() }
        #expect(Set(ids).count == 3 && ids.allSatisfy { $0.count == 16 })
    }

    // MARK: Comparison

    private func expectSameState(_ store: any StateStoring, _ memory: InMemoryStore, shard: Int, _ where_: String) throws {
        let a = try store.restoredState()
        let b = try memory.restoredState()
        #expect(a.pending == b.pending, "\(where_): pending")
        #expect(a.pending.map(\.identifier.bytes) == b.pending.map(\.identifier.bytes), "\(where_): pending ids")
        #expect(a.unfinishedRuns == b.unfinishedRuns, "\(where_): unfinished runs")
        #expect(entries(a.failureStreaks) == entries(b.failureStreaks), "\(where_): failure streaks")
        let base = Int64(shard) * ShardMap.runIDSpan
        let expectedNext = try memory.recentRuns(limit: 1).isEmpty ? base + 1 : b.nextRunID
        #expect(a.nextRunID == expectedNext, "\(where_): next run id")
        #expect(entries(a.seedSpecs) == entries(b.seedSpecs), "\(where_): seed specs")
        #expect(a.counters == b.counters, "\(where_): restored counters")
        #expect(a.instances == b.instances, "\(where_): instances")
        #expect(try store.pendingRequests() == memory.pendingRequests(), "\(where_): pendingRequests")
        for limit in [0, 1, 3, 1000] {
            #expect(try store.recentRuns(limit: limit) == memory.recentRuns(limit: limit), "\(where_): recentRuns(\(limit))")
        }
        if let middle = try memory.recentRuns(limit: 3).last?.runID {
            #expect(try store.recentRuns(limit: 2, before: middle) == memory.recentRuns(limit: 2, before: middle),
                    "\(where_): recentRuns(before:)")
        }
        let (lastA, lastB) = (try store.lastRunPerJob(), try memory.lastRunPerJob())
        #expect(lastA == lastB, "\(where_): lastRunPerJob")
        #expect(lastA.map(\.identifier.bytes) == lastB.map(\.identifier.bytes), "\(where_): lastRunPerJob ids")
        for days in [nil, 0, 1, 2] as [Int?] {
            let (x, y) = (try store.dailyCounters(days: days), try memory.dailyCounters(days: days))
            #expect(x == y, "\(where_): dailyCounters(days: \(String(describing: days)))")
            #expect(x.map(\.identifier.bytes) == y.map(\.identifier.bytes), "\(where_): counter ids")
        }
        for identifier in ChangeGenerator.identifiers + ["never.seen"] {
            #expect(try store.seedSpec(for: identifier) == memory.seedSpec(for: identifier), "\(where_): seedSpec(\(identifier))")
        }
        let reads = try storeReadMismatches(store, memory, identifiers: ChangeGenerator.identifiers)
        #expect(reads.isEmpty, "\(where_): \(reads)")
        #expect(a.records == b.records, "\(where_): records")
        #expect(a.records.map { $0.table.bytes + [0] + $0.key.bytes } == b.records.map { $0.table.bytes + [0] + $0.key.bytes },
                "\(where_): record keys")
        for table in ["widget", "activity", "Widget", "never.seen"] {
            #expect(try store.records(table: table) == memory.records(table: table), "\(where_): records(\(table))")
        }
    }

    private func entries<V: Comparable>(_ dictionary: [String: V]) -> [[UInt8]: V] {
        Dictionary(dictionary.map { ($0.key.bytes, $0.value) }, uniquingKeysWith: { a, _ in a })
    }
}

extension String {
    fileprivate var bytes: [UInt8] { Array(utf8) }
}

extension Result {
    fileprivate var failed: Bool {
        if case .failure = self { true } else { false }
    }
}

/// The world's events (`WorldEvent`, for `simulate --replay`) go with the runs in a shard, as in
/// SQLite and in memory (`WorldRecordPruneTests`).
@Suite struct PostgresWorldPruneTests {
    @Test func pruneRunsDropsTheWorldEventsBeforeItsCutoff() throws {
        let server = try PrivateServer.shared.get()
        let db = try PostgresDatabase(connection: try server.freshDatabase(), shardCount: 2)
        defer { db.close() }
        let lease = try #require(try db.acquire(shard: 1, node: "node-1", lease: .seconds(300)))
        let store = try db.store(shard: 1, epoch: lease.epoch)
        let t0 = Instant(milliseconds: 1_764_892_800_000)
        let events = [WorldEvent(at: t0, what: .started), WorldEvent(at: t0 + .seconds(10), what: .stopping),
                      WorldEvent(at: t0 + .seconds(86_400), what: .clockStep(expected: t0 + .seconds(86_000)))]
        let other = MachineRecord(table: "paused", key: "app.feed", value: "{\"since\":1}")
        try store.apply(events.map { .putRecord($0.record) } + [.putRecord(other)])
        try store.apply([.pruneRuns(endedBefore: t0 + .seconds(3_600))])
        #expect(try store.records(table: WorldEvent.table).compactMap(WorldEvent.init) == [events[2]])
        #expect(try store.records(table: "paused") == [other])
        try db.release(shard: 1, node: "node-1", epoch: lease.epoch)
    }
}
