import Glibc
import RefreshdCore
import RefreshdPostgres
import RefreshdStore

/// Issue 24: durable commits of one launch-shaped batch (the pending request consumed, the run
/// started, the day's counters, the next request saved) on one shard of the shared PostgreSQL,
/// fenced, one after another as a shard's leader makes them; the same batches into the SQLite
/// store (WAL, synchronous=FULL) beside it. Commits per second and p50/p99 commit latency.
func sharedDatabase(count n: Int, conninfo: String, state: String) throws {
    let start = Instant(milliseconds: 1_800_000_000_000)
    let batches: [[StateChange]] = (0..<n).map { i in
        let id = "bench.job-\(i % 100)"
        let run = RunRecord(runID: Int64(i + 1), identifier: id, kind: .processing, submitted: start, earliest: start,
                            started: start + .milliseconds(Int64(i)), deadline: start + .seconds(60))
        return [
            .deletePending(identifier: id),
            .runStarted(run),
            .counters(DailyCounter(day: "2027-01-15", identifier: id, launches: i / 100 + 1)),
            .savePending(PendingRequest(identifier: id, namespace: id, kind: .processing,
                                        earliest: start + .seconds(Int64(60 + i)), submitted: start,
                                        sequence: UInt64(i), requiresExternalPower: false,
                                        requiresNetworkConnectivity: false, origin: .rescheduled)),
        ]
    }
    let db = try PostgresDatabase(connection: conninfo, shardCount: 1)
    defer { db.close() }
    guard let lease = try db.acquire(shard: 0, node: "bench", lease: .seconds(600)) else {
        throw BenchFailure("shard 0 of the bench database is held by another node")
    }
    try measureCommits("postgres", n, batches, try db.store(shard: 0, epoch: lease.epoch))
    let sqlite = try StateStore.open(directory: state)
    defer { sqlite.close() }
    try measureCommits("sqlite", n, batches, sqlite)
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
