import Foundation
import Testing
@_spi(Benchmarks) @testable import RefreshdCore
@_spi(Benchmarks) @testable import RefreshdRuntime
@_spi(Benchmarks) import RefreshdPostgres

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
            try db.release(shard: shard, node: "node-\(seed)", epoch: lease.epoch)
        }
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
        let base = Int64(shard) * PostgresDatabase.runIDSpan
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

// MARK: Generator

/// Random batches of state changes around a UTC midnight, mostly valid, some refused: ends of
/// unknown, ended or mismatched runs, duplicate run ids, processes of unknown runs; and prunes
/// of the run history at random instants (after which records of pruned runs are refused too).
///
/// It follows what was committed (`batch()` then `committed(_:)` if the stores took it), so
/// most ends and process records hit a run that is open at that point of the batch.
struct ChangeGenerator {
    /// Includes a pair equal to Swift's `==` but not to SQLite (é precomposed and decomposed),
    /// and a pair differing only by case.
    static let identifiers = [
        "com.example.feed", "com.example.backup", "mail", "caf\u{E9}", "cafe\u{301}", "Zeta", "zeta",
    ]

    private struct Runs {
        var all: [(id: Int64, identifier: String)] = []
        var open: [(id: Int64, identifier: String)] = []
        var next: Int64 = 1
    }

    private var random: ParityRandom
    /// Runs as committed, and as the batch being made would leave them.
    private var committedRuns = Runs()
    private var runs = Runs()

    init(seed: UInt64) { random = ParityRandom(seed: seed) }

    /// 0 to 6 changes; about one batch in four has a change the stores must refuse.
    mutating func batch() -> [StateChange] {
        runs = committedRuns
        return (0..<random.int(0...6)).map { _ in change(valid: !random.chance(0.06)) }
    }

    /// The stores took the last batch.
    mutating func committed() { committedRuns = runs }

    private mutating func change(valid: Bool) -> StateChange {
        switch random.int(0...99) {
        case 0..<18: .savePending(pending())
        case 18..<26: .deletePending(identifier: identifier())
        case 26..<44: .runStarted(run(valid: valid))
        case 44..<66: runEnded(valid: valid)
        case 66..<74: .failureStreak(identifier: identifier(), count: random.int(-1...4))
        case 74..<82: .counters(DailyCounter(day: ISO8601.day(instant()), identifier: identifier(),
                                             launches: random.int(0...5), successes: random.int(0...3),
                                             failures: random.int(0...2), expired: random.int(0...1),
                                             crashed: random.int(0...1), interrupted: random.int(0...1),
                                             missed: random.int(0...5)))
        case 82..<88: processStarted(valid: valid)
        case 88..<92: random.chance(0.7)
            ? .putRecord(MachineRecord(table: random.pick(["widget", "activity", "Widget"]), key: identifier(),
                                       value: random.pick(["{}", "{\"a\":1}", "", "é"])))
            : .deleteRecord(table: random.pick(["widget", "activity"]), key: identifier())
        case 92..<96: .pruneRuns(endedBefore: instant())
        default: .seedSpec(identifier: identifier(), spec: random.pick(["", "2026-11-22 04:00", "daily", "+1h"]))
        }
    }

    private mutating func identifier() -> String { random.pick(Self.identifiers) }

    /// 2026-11-21T22:00Z ± 5 h (crossing midnight), now and then days away or far off.
    private mutating func instant() -> Instant {
        let base = ISO8601.days(year: 2026, month: 11, day: 21) * 86_400_000 + 22 * 3_600_000
        switch random.int(0...19) {
        case 0: return Instant(milliseconds: base + Int64(random.int(-5...5)) * 86_400_000)
        case 1: return random.pick([Instant(milliseconds: 0), Instant(milliseconds: -1), .latest, .earliest])
        default: return Instant(milliseconds: base + Int64(random.int(-18_000_000...18_000_000)))
        }
    }

    private mutating func pending() -> PendingRequest {
        // Small sequences and repeated instants make ties; a sequence past Int64.max sorts first
        // in SQLite (stored as its bit pattern).
        let sequence: UInt64 = random.chance(0.1) ? UInt64.max - UInt64(random.int(0...2)) : UInt64(random.int(0...4))
        let earliest = random.chance(0.3) ? Instant(milliseconds: 1_795_000_000_000) : instant()
        return PendingRequest(
            identifier: identifier(), namespace: random.pick(["ns", "other"]), kind: random.pick(TaskKind.allCases),
            earliest: earliest, submitted: instant(), sequence: sequence,
            requiresExternalPower: random.chance(0.5), requiresNetworkConnectivity: random.chance(0.5),
            origin: random.pick(PendingRequest.Origin.allCases))
    }

    private mutating func run(valid: Bool) -> RunRecord {
        let id: Int64
        if !valid, !runs.all.isEmpty {
            id = random.pick(runs.all).id  // a duplicate
        } else {
            switch random.int(0...9) {
            case 0: id = Int64(random.int(-3...0)) - Int64(runs.all.count) * 10  // SQLite takes any integer
            case 1: id = runs.next + Int64(random.int(2...20))  // a gap, and later ids below it
            default: id = runs.next
            }
        }
        let identifier = identifier()
        let started = instant()
        let alreadyEnded = random.chance(0.1)
        if valid {
            runs.next = max(runs.next, id + 1)
            runs.all.append((id, identifier))
            if !alreadyEnded { runs.open.append((id, identifier)) }
        }
        return RunRecord(
            runID: id, identifier: identifier, kind: random.pick(TaskKind.allCases), submitted: instant(),
            earliest: instant(), started: started, deadline: started + .seconds(random.int(1...600)),
            attempt: random.int(1...4), ended: alreadyEnded ? instant() : nil,
            outcome: alreadyEnded ? random.pick(Outcome.allCases) : nil,
            exitStatus: random.chance(0.2) ? Int32(random.int(-1...255)) : nil,
            signal: random.chance(0.1) ? random.pick([9, 15, Int32.min, Int32.max]) : nil,
            processGroup: random.chance(0.2) ? Int32(random.int(1...99_999)) : nil,
            processStartTicks: random.chance(0.2) ? random.pick([0, 12_345, UInt64.max]) : nil)
    }

    private mutating func runEnded(valid: Bool) -> StateChange {
        if valid, runs.open.isEmpty { return .runStarted(run(valid: true)) }
        let outcome = random.pick(Outcome.allCases)
        let ended = instant()
        let exitStatus = outcome == .failure ? Int32(random.int(1...255)) : nil
        let signal = outcome == .crashed ? random.pick([9, 11, Int32.max]) : nil
        if valid {
            let (id, identifier) = runs.open.remove(at: random.int(0...(runs.open.count - 1)))
            return .runEnded(runID: id, identifier: identifier, ended: ended, outcome: outcome,
                             exitStatus: exitStatus, signal: signal)
        }
        // An ended run, an unknown run, or an open run under another identifier: all refused
        // (unless the other identifier happens to be the run's own).
        let (id, identifier): (Int64, String) = switch random.int(0...2) {
        case 0 where !runs.all.isEmpty: random.pick(runs.all)
        case 1 where !runs.open.isEmpty: (random.pick(runs.open).id, self.identifier())
        default: (runs.next + Int64(random.int(0...5)), self.identifier())
        }
        return .runEnded(runID: id, identifier: identifier, ended: ended, outcome: outcome,
                         exitStatus: exitStatus, signal: signal)
    }

    private mutating func processStarted(valid: Bool) -> StateChange {
        if valid, runs.all.isEmpty { return .runStarted(run(valid: true)) }
        let id = !valid ? runs.next + Int64(random.int(0...5)) : random.pick(runs.all).id
        return .processStarted(runID: id, processGroup: random.pick([1, 4242, Int32.max, -5]),
                               startTicks: random.chance(0.3) ? nil : random.pick([0, 99, UInt64.max]))
    }
}

/// The core's seeded generator: each seed's batches are the same on every run.
typealias ParityRandom = SplitMix64

