import Testing
@testable import RefreshdCore
@testable import RefreshdRuntime
@testable import RefreshdStore
import RefreshdTestSupport

/// `InMemoryStore` folds state changes exactly as the SQLite `StateStore` does: the simulator's
/// restarts are only as true as this parity.
@Suite struct StoreParityTests {
    // MARK: Property test

    /// Random batches (valid and refused ones) applied to both stores; after every batch both
    /// agree on success, the restored state and every query.
    @Test func randomBatchesFoldTheSameInBothStores() throws {
        for seed in UInt64(1)...30 {
            try withTemporaryDirectory { temp in
                let directory = temp + "/state"
                let sqlite = try StateStore.open(directory: directory)
                defer { sqlite.close() }
                let memory = InMemoryStore()
                var generator = ChangeGenerator(seed: seed)
                for batchNumber in 1...40 {
                    let batch = generator.batch()
                    let where_ = "seed \(seed) batch \(batchNumber): \(batch)"
                    let sqliteResult = Result { try sqlite.apply(batch) }
                    let memoryResult = Result { try memory.apply(batch) }
                    if !memoryResult.failed { generator.committed() }
                    #expect(sqliteResult.failed == memoryResult.failed,
                            "\(where_): SQLite \(sqliteResult), memory \(memoryResult)")
                    try expectSameState(sqlite, memory, identifiers: ChangeGenerator.identifiers, where_)
                    #expect(memory.runTableIsConsistent, "\(where_): the run table's deques disagree")
                }
                // What SQLite committed survives a reopen; a snapshot is the in-memory restart.
                try reopened(directory) { reopened in
                    try expectSameState(reopened, memory.snapshot(), identifiers: ChangeGenerator.identifiers,
                                        "seed \(seed) after reopening")
                    // Every search, every page both ways (issue 33), on what the seed left.
                    #expect(try searchMismatches(reopened, memory.snapshot(), identifiers: ChangeGenerator.identifiers) == [],
                            "seed \(seed)")
                }
            }
        }
    }

    // MARK: Focused tests

    /// A refused change anywhere in a batch leaves nothing of the batch, in both stores alike.
    @Test func aRefusedBatchLeavesNothing() throws {
        let kept = runRecord(1, "kept")
        let setup: [StateChange] = [
            .savePending(pendingRequest("kept")), .runStarted(kept), .failureStreak(identifier: "kept", count: 2),
            .seedSpec(identifier: "kept", spec: "2026-11-22 10:00"),
        ]
        let refusals: [StateChange] = [
            .runEnded(runID: 99, identifier: "ghost", ended: at(hour), outcome: .failure, exitStatus: 1, signal: nil),
            .runEnded(runID: 1, identifier: "other", ended: at(hour), outcome: .success, exitStatus: 0, signal: nil),
            .runStarted(runRecord(1, "again")),
            .processStarted(runID: 42, processGroup: 4242, startTicks: 7),
        ]
        for refusal in refusals {
            try withStore { sqlite, _ in
                let memory = InMemoryStore()
                try sqlite.apply(setup)
                try memory.apply(setup)
                let before = try everything(memory)
                let batch: [StateChange] = [
                    .savePending(pendingRequest("new", earliest: at(-hour), sequence: 0)),
                    .savePending(pendingRequest("kept", earliest: at(9 * hour), sequence: 9)),
                    .deletePending(identifier: "kept"),
                    .runStarted(runRecord(2, "new", started: at(15 * hour))),
                    .processStarted(runID: 1, processGroup: 100, startTicks: 5),
                    ended(kept, at: at(20 * hour), .success),
                    .failureStreak(identifier: "kept", count: 0),
                    .failureStreak(identifier: "new", count: 3),
                    .counters(DailyCounter(day: ISO8601.day(at(30 * hour)), identifier: "kept", launches: 1, missed: 4)),
                    .seedSpec(identifier: "new", spec: "daily"),
                    refusal,
                ]
                let error = #expect(throws: InMemoryStore.Failure.self) { try memory.apply(batch) }
                #expect(error?.kind == .invalidChange)
                #expect(throws: StoreError.self) { try sqlite.apply(batch) }
                #expect(try everything(memory) == before, "refused by \(refusal)")
                try expectSameState(sqlite, memory, identifiers: ["kept", "new", "ghost"], "after \(refusal)")
                // Still usable, and the refused batch's run id is free again.
                try memory.apply([.runStarted(runRecord(2, "new")), ended(kept, at: at(hour), .success)])
                #expect(try memory.restoredState().unfinishedRuns.map(\.runID) == [2])
            }
        }
    }

    /// A prune forgets the runs that ended before its instant, except each identifier's latest;
    /// unfinished runs stay whatever their start. Both stores alike, and a refused batch takes a
    /// prune back with the rest.
    @Test func pruningKeepsUnfinishedRecentAndEachJobsLatestRun() throws {
        let old1 = runRecord(1, "a", started: at(0)), old2 = runRecord(2, "a", started: at(hour))
        let open = runRecord(3, "b", started: at(0)), onlyB = runRecord(4, "c", started: at(0))
        let recent = runRecord(5, "a", started: at(20 * hour))
        let setup: [StateChange] = [
            .runStarted(old1), ended(old1, at: at(60_000), .success),
            .runStarted(old2), ended(old2, at: at(hour + 60_000), .failure, exit: 1),
            .runStarted(open),
            .runStarted(onlyB), ended(onlyB, at: at(60_000), .success),
            .runStarted(recent), ended(recent, at: at(20 * hour + 60_000), .success),
        ]
        try withStore { sqlite, _ in
            let memory = InMemoryStore()
            try sqlite.apply(setup)
            try memory.apply(setup)
            try refusePrune(sqlite, memory, endedBefore: at(10 * hour))
            #expect(try memory.recentRuns(limit: 100).map(\.runID) == [5, 4, 3, 2, 1])
            try expectSameState(sqlite, memory, identifiers: ["a", "b", "c"], "after a refused prune")

            for store in [sqlite, memory] as [any StateStoring] { try store.apply([.pruneRuns(endedBefore: at(10 * hour))]) }
            // 1 and 2 ended before the cutoff; 5 is a's latest (and recent), 4 is c's only run,
            // 3 has not ended.
            #expect(try memory.recentRuns(limit: 100).map(\.runID) == [5, 4, 3])
            #expect(try memory.restoredState().nextRunID == 6)
            try expectSameState(sqlite, memory, identifiers: ["a", "b", "c"], "after the prune")
            // Much later: every ended run but the latest of each job.
            for store in [sqlite, memory] as [any StateStoring] { try store.apply([.pruneRuns(endedBefore: .latest)]) }
            #expect(try memory.recentRuns(limit: 100).map(\.runID) == [5, 4, 3])
            try expectSameState(sqlite, memory, identifiers: ["a", "b", "c"], "after pruning everything")
        }
    }

    /// Rows that go behind a row that stays (an unfinished run, a job's latest) are removed one
    /// by one; a refused batch puts every one back in its place.
    @Test func pruningAroundRowsThatStayAndTakingItBack() throws {
        let runs = (1...8).map { runRecord(Int64($0), $0 % 3 == 0 ? "b" : "a", started: at(Int64($0) * 60_000)) }
        var setup: [StateChange] = []
        for run in runs {
            setup.append(.runStarted(run))
            // Run 3 stays open; 6 ends late; the others end early. 8 is a's latest, 6 b's.
            if run.runID != 3 { setup.append(ended(run, at: at(run.runID == 6 ? 20 * hour : hour), .success)) }
        }
        try withStore { sqlite, _ in
            let memory = InMemoryStore()
            try sqlite.apply(setup)
            try memory.apply(setup)
            try refusePrune(sqlite, memory, endedBefore: at(10 * hour))
            #expect(try memory.recentRuns(limit: 100).map(\.runID) == [8, 7, 6, 5, 4, 3, 2, 1])
            try expectSameState(sqlite, memory, identifiers: ["a", "b"], "after a refused prune")
            for store in [sqlite, memory] as [any StateStoring] { try store.apply([.pruneRuns(endedBefore: at(10 * hour))]) }
            #expect(try memory.recentRuns(limit: 100).map(\.runID) == [8, 6, 3])
            try expectSameState(sqlite, memory, identifiers: ["a", "b"], "after the prune")
            // The store goes on: a new run is appended after the pruned history.
            let next = runRecord(9, "a", started: at(21 * hour))
            for store in [sqlite, memory] as [any StateStoring] { try store.apply([.runStarted(next)]) }
            #expect(try memory.recentRuns(limit: 100).map(\.runID) == [9, 8, 6, 3])
            try expectSameState(sqlite, memory, identifiers: ["a", "b"], "after a new run")
        }
    }

    /// A batch that prunes, then is refused (a process record of an unknown run): both stores
    /// take the prune back with it.
    private func refusePrune(_ sqlite: StateStore, _ memory: InMemoryStore, endedBefore cutoff: Instant) throws {
        let refused: [StateChange] = [.pruneRuns(endedBefore: cutoff),
                                      .processStarted(runID: 42, processGroup: 1, startTicks: nil)]
        #expect(throws: InMemoryStore.Failure.self) { try memory.apply(refused) }
        #expect(throws: StoreError.self) { try sqlite.apply(refused) }
    }

    /// `failingAtCommit: n`: the n-th non-empty batch throws and applies nothing; empty batches
    /// are not commits; later commits work.
    @Test func failingAtTheNthCommit() throws {
        let store = InMemoryStore(failingAtCommit: 2)
        try store.apply([.savePending(pendingRequest("a"))])
        try store.apply([])
        #expect(store.commitAttempts == 1)
        let error = #expect(throws: InMemoryStore.Failure.self) {
            try store.apply([.savePending(pendingRequest("b", sequence: 2)), .deletePending(identifier: "a")])
        }
        #expect(error?.kind == .injected)
        #expect(error?.message.contains("disk full") == true)
        #expect(try store.pendingRequests().map(\.identifier) == ["a"])
        try store.apply([.savePending(pendingRequest("b", sequence: 2))])
        #expect(try store.pendingRequests().map(\.identifier) == ["a", "b"])
        #expect(store.commitAttempts == 3)
    }

    /// A fault function sees every commit's number and changes and can refuse any of them.
    @Test func commitFaultDecidesPerCommit() throws {
        let store = InMemoryStore(commitFault: { _, changes in
            changes.contains { if case .runStarted = $0 { true } else { false } }
                ? InMemoryStore.Failure(.injected, "no space for runs") : nil
        })
        try store.apply([.savePending(pendingRequest("a"))])
        #expect(throws: InMemoryStore.Failure.self) { try store.apply([.runStarted(runRecord(1, "a"))]) }
        store.commitFault = nil
        try store.apply([.runStarted(runRecord(1, "a"))])
        #expect(try store.recentRuns(limit: 5).map(\.runID) == [1])
        #expect(store.commitAttempts == 3)
    }

    /// A snapshot is the committed state at that moment, independent of the store afterwards,
    /// with the same instance id and no injected faults.
    @Test func snapshotIsIndependent() throws {
        let store = InMemoryStore(failingAtCommit: 3)
        try store.apply([.savePending(pendingRequest("a")), .runStarted(runRecord(1, "a"))])
        let snapshot = store.snapshot()
        let atSnapshot = try everything(store)
        try store.apply([.deletePending(identifier: "a"), ended(runRecord(1, "a"), at: at(hour), .success)])
        #expect(try everything(snapshot) == atSnapshot)
        try snapshot.apply([.savePending(pendingRequest("b", sequence: 2)), .runStarted(runRecord(2, "b"))])
        try snapshot.apply([.failureStreak(identifier: "b", count: 1)])  // its 2nd commit
        try snapshot.apply([.seedSpec(identifier: "b", spec: "x")])  // its 3rd: no fault carried over
        #expect(try store.pendingRequests().isEmpty)
        #expect(try store.recentRuns(limit: 5).map(\.runID) == [1])
        #expect(try snapshot.restoredState().unfinishedRuns.map(\.runID) == [1, 2])
        #expect(try snapshot.instanceID() == store.instanceID())
        store.close()
        #expect(try snapshot.pendingRequests().count == 2)
    }

    /// The instance id is 16 lowercase hex digits, fixed per store; a given one is kept.
    @Test func instanceID() throws {
        let store = InMemoryStore()
        let id = try store.instanceID()
        #expect(id.count == 16 && id.allSatisfy { "0123456789abcdef".contains($0) })
        #expect(try store.instanceID() == id)
        #expect(try InMemoryStore().instanceID() != id)
        #expect(try InMemoryStore(instanceID: "00000000000000aa").instanceID() == "00000000000000aa")
    }

    /// After `close()` calls throw (an empty batch still does nothing), as in SQLite.
    @Test func closedStoreRefusesCalls() throws {
        try withStore { sqlite, _ in
            let memory = InMemoryStore()
            sqlite.close()
            memory.close()
            try sqlite.apply([])
            try memory.apply([])
            #expect(throws: StoreError.self) { try sqlite.apply([.deletePending(identifier: "a")]) }
            let error = #expect(throws: InMemoryStore.Failure.self) {
                try memory.apply([.deletePending(identifier: "a")])
            }
            #expect(error?.kind == .closed)
            #expect(throws: StoreError.self) { try sqlite.restoredState() }
            #expect(throws: InMemoryStore.Failure.self) { try memory.restoredState() }
            #expect(throws: InMemoryStore.Failure.self) { try memory.pendingRequests() }
        }
    }

    // MARK: Comparison

    /// Every query of `store`, as one comparable value.
    private func everything(_ store: some StateStoring) throws -> [String] {
        let restored = try store.restoredState()
        return [
            "\(restored.pending)", "\(restored.unfinishedRuns)", "\(restored.nextRunID)",
            "\(restored.failureStreaks.sorted { $0.key < $1.key })",
            "\(restored.seedSpecs.sorted { $0.key < $1.key })",
            "\(try store.recentRuns(limit: 1000))", "\(try store.lastRunPerJob())",
            "\(try store.dailyCounters(days: nil))", "\(restored.records)",
        ]
    }

    /// Both stores answer every query alike. Identifiers are also compared by their UTF-8 bytes:
    /// Swift's `==` on strings would let "café" (é) and "café" (e + combining accent) pass.
    private func expectSameState(_ sqlite: StateStore, _ memory: InMemoryStore, identifiers: [String],
                                 _ where_: String) throws {
        let a = try sqlite.restoredState()
        let b = try memory.restoredState()
        #expect(a.pending == b.pending, "\(where_): pending")
        #expect(a.pending.map(\.identifier.bytes) == b.pending.map(\.identifier.bytes), "\(where_): pending ids")
        #expect(a.unfinishedRuns == b.unfinishedRuns, "\(where_): unfinished runs")
        #expect(a.unfinishedRuns.map(\.identifier.bytes) == b.unfinishedRuns.map(\.identifier.bytes),
                "\(where_): unfinished run ids")
        #expect(entries(a.failureStreaks) == entries(b.failureStreaks), "\(where_): failure streaks")
        #expect(a.nextRunID == b.nextRunID, "\(where_): next run id")
        #expect(entries(a.seedSpecs) == entries(b.seedSpecs), "\(where_): seed specs")

        #expect(try sqlite.pendingRequests() == memory.pendingRequests(), "\(where_): pendingRequests")
        for limit in [0, 1, 3, 1000] {
            let (x, y) = (try sqlite.recentRuns(limit: limit), try memory.recentRuns(limit: limit))
            #expect(x == y, "\(where_): recentRuns(limit: \(limit))")
        }
        let (lastA, lastB) = (try sqlite.lastRunPerJob(), try memory.lastRunPerJob())
        #expect(lastA == lastB, "\(where_): lastRunPerJob")
        #expect(lastA.map(\.identifier.bytes) == lastB.map(\.identifier.bytes), "\(where_): lastRunPerJob ids")
        for days in [nil, 0, 1, 2] as [Int?] {
            let (x, y) = (try sqlite.dailyCounters(days: days), try memory.dailyCounters(days: days))
            #expect(x == y, "\(where_): dailyCounters(days: \(String(describing: days)))")
            #expect(x.map(\.identifier.bytes) == y.map(\.identifier.bytes), "\(where_): counter ids")
        }
        for identifier in identifiers + ["never.seen"] {
            #expect(try sqlite.seedSpec(for: identifier) == memory.seedSpec(for: identifier),
                    "\(where_): seedSpec(for: \(identifier))")
        }
        let reads = try storeReadMismatches(sqlite, memory, identifiers: identifiers)
        #expect(reads.isEmpty, "\(where_): \(reads)")
        #expect(a.records == b.records, "\(where_): records")
        #expect(a.records.map { $0.table.bytes + [0] + $0.key.bytes } == b.records.map { $0.table.bytes + [0] + $0.key.bytes },
                "\(where_): record keys")
        for table in ["widget", "activity", "Widget", "never.seen"] {
            #expect(try sqlite.records(table: table) == memory.records(table: table), "\(where_): records(table: \(table))")
        }
    }

    /// A dictionary's entries by key bytes, keys as bytes.
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

/// Regressions the parity test found in the SQLite store.
@Suite struct SQLiteTextAndRunIDRegressionTests {
    @Test func textWithNULIsStoredWhole() throws {
        try withStore { store, _ in
            try store.apply([.seedSpec(identifier: "x", spec: "plain"), .seedSpec(identifier: "x\0zzz", spec: "a\0b")])
            #expect(try store.seedSpec(for: "x") == "plain")
            #expect(try store.seedSpec(for: "x\0zzz") == "a\0b")
        }
    }

    @Test func aRunIDAtTheLargestValueIsRefusedNotWrapped() throws {
        try withStore { store, _ in
            let start = Instant(milliseconds: 1_800_000_000_000)
            try store.apply([.runStarted(RunRecord(runID: Int64.max, identifier: "a", kind: .processing, submitted: start,
                                                   earliest: start, started: start, deadline: start + .seconds(1)))])
            let error = #expect(throws: StoreError.self) { try store.restoredState() }
            #expect(error?.kind == .corrupt)
        }
    }
}

/// The world's events (`WorldEvent`, for `simulate --replay`) are bounded like the run
/// history: `pruneRuns` drops those before its cutoff, alike in both stores.
@Suite struct WorldRecordPruneTests {
    @Test func pruneRunsDropsTheWorldEventsBeforeItsCutoffInBothStores() throws {
        try withTemporaryDirectory { temp in
            let sqlite = try StateStore.open(directory: temp + "/state")
            defer { sqlite.close() }
            let memory = InMemoryStore()
            let events = [WorldEvent(at: at(1_000), what: .started), WorldEvent(at: at(2_000), what: .stopping),
                          WorldEvent(at: at(90_000_000), what: .conditions(Conditions(externalPower: false, network: true))),
                          WorldEvent(at: at(90_000_001), what: .pause("app.feed"))]
            let other = MachineRecord(table: "paused", key: "app.feed", value: "{\"since\":1}")
            for store in [sqlite, memory] as [any StateStoring] {
                try store.apply(events.map { .putRecord($0.record) } + [.putRecord(other)])
                try store.apply([.pruneRuns(endedBefore: at(3_000_000))])
                let kept = try store.records(table: WorldEvent.table).compactMap(WorldEvent.init)
                #expect(kept == Array(events.suffix(2)), "\(store)")
                #expect(try store.records(table: "paused") == [other], "another table is left alone")
            }
        }
    }
}
