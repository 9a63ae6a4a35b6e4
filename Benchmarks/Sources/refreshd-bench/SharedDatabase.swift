import Glibc
import RefreshdCore
import RefreshdPostgres
import RefreshdStore

/// Issue 24: durable commits of one launch-shaped batch (the pending request consumed, the run
/// started, the day's counters, the next request saved) on one shard of the shared PostgreSQL,
/// fenced, one after another as a shard's leader makes them; the same batches into the SQLite
/// store (WAL, synchronous=FULL) beside it. Commits per second and p50/p99 commit latency.
/// With `shards` > 1, as many leaders' threads commit at once, each to a shard of its own (a
/// node leads several shards; PostgreSQL flushes their commits' WAL together).
func sharedDatabase(count n: Int, conninfo: String, state: String, shards: Int) throws {
    let db = try PostgresDatabase(connection: conninfo, shardCount: 16)
    defer { db.close() }
    var stores: [any StateStoring] = []
    for shard in 0..<shards {
        guard let lease = try db.acquire(shard: shard, node: "bench", lease: .seconds(600)) else {
            throw BenchFailure("shard \(shard) of the bench database is held by another node")
        }
        stores.append(try db.store(shard: shard, epoch: lease.epoch))
    }
    if shards > 1 {
        try measureConcurrentCommits(n, shards, stores)
        return
    }
    try measureCommits("postgres", n, launchBatches(n, base: 0), stores[0])
    let sqlite = try StateStore.open(directory: state)
    defer { sqlite.close() }
    try measureCommits("sqlite", n, launchBatches(n, base: 0), sqlite)
}

/// `n` launch-shaped batches with run ids from `base + 1`.
private func launchBatches(_ n: Int, base: Int64) -> [[StateChange]] {
    let start = Instant(milliseconds: 1_800_000_000_000)
    return (0..<n).map { i in
        let id = "bench.job-\(i % 100)"
        let run = RunRecord(runID: base + Int64(i + 1), identifier: id, kind: .processing, submitted: start, earliest: start,
                            started: start + .milliseconds(Int64(i)), deadline: start + .seconds(60))
        return [
            .deletePending(identifier: id),
            .runStarted(run),
            .counters(DailyCounter(day: "2027-01-15", identifier: id, launches: i / 100 + 1)),
            .savePending(PendingRequest(identifier: id, namespace: id, kind: .processing,
                                        earliest: start + .seconds(Int64(60 + i)), submitted: start,
                                        sequence: UInt64(i), requiresExternalPower: false,
                                        requiresNetworkConnectivity: false, origin: .resubmit)),
        ]
    }
}

/// `shards` threads, each committing `n / shards` batches to its own shard.
private func measureConcurrentCommits(_ n: Int, _ shards: Int, _ stores: [any StateStoring]) throws {
    let each = n / shards
    let results = UnsafeMutablePointer<[Double]>.allocate(capacity: shards)
    results.initialize(repeating: [], count: shards)
    defer { results.deallocate() }
    var threads: [pthread_t] = []
    let t0 = Measure.monotonicSeconds()
    for shard in 0..<shards {
        let work = CommitWork(store: stores[shard], batches: launchBatches(each, base: Int64(shard) * 1_000_000_000_000),
                              out: results + shard)
        var thread = pthread_t()
        let box = Unmanaged.passRetained(work).toOpaque()
        guard pthread_create(&thread, nil, { raw in
            let work = Unmanaged<CommitWork>.fromOpaque(raw!).takeRetainedValue()
            work.run()
            return nil
        }, box) == 0 else { throw BenchFailure("pthread_create") }
        threads.append(thread)
    }
    for thread in threads { pthread_join(thread, nil) }
    let wall = Measure.monotonicSeconds() - t0
    var latencies = (0..<shards).flatMap { results[$0] }
    guard latencies.count == each * shards else { throw BenchFailure("a commit thread failed") }
    latencies.sort()
    let total = latencies.count
    var out = JSONLine()
    out.add("impl", "refreshd")
    out.add("bench", "shared-database")
    out.add("store", "postgres-\(shards)-shards")
    out.add("n", total)
    out.add("commits_per_s", Double(total) / wall)
    out.add("commit_p50_ms", latencies[total / 2])
    out.add("commit_p99_ms", latencies[min(total - 1, total * 99 / 100)])
    out.add("commit_max_ms", latencies[total - 1])
    out.print()
}

/// One committing thread's work; its latencies go to `out` (nothing on a failure).
private final class CommitWork {
    let store: any StateStoring
    let batches: [[StateChange]]
    let out: UnsafeMutablePointer<[Double]>

    init(store: any StateStoring, batches: [[StateChange]], out: UnsafeMutablePointer<[Double]>) {
        self.store = store
        self.batches = batches
        self.out = out
    }

    func run() {
        var latencies: [Double] = []
        for batch in batches {
            let c0 = Measure.monotonicSeconds()
            do { try store.apply(batch) } catch {
                warn("commit failed: \(error)")
                return
            }
            latencies.append((Measure.monotonicSeconds() - c0) * 1000)
        }
        out.pointee = latencies
    }
}

private func measureCommits(_ store: String, _ n: Int, _ batches: [[StateChange]], _ target: any StateStoring) throws {
    var latencies: [Double] = []
    latencies.reserveCapacity(n)
    let t0 = Measure.monotonicSeconds()
    for batch in batches {
        let c0 = Measure.monotonicSeconds()
        try target.apply(batch)
        latencies.append((Measure.monotonicSeconds() - c0) * 1000)
    }
    let wall = Measure.monotonicSeconds() - t0
    latencies.sort()
    var out = JSONLine()
    out.add("impl", "refreshd")
    out.add("bench", "shared-database")
    out.add("store", store)
    out.add("n", n)
    out.add("commits_per_s", Double(n) / wall)
    out.add("commit_p50_ms", latencies[n / 2])
    out.add("commit_p99_ms", latencies[min(n - 1, n * 99 / 100)])
    out.add("commit_max_ms", latencies[n - 1])
    out.print()
}

struct BenchFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
