import Foundation
import Glibc
import Refreshd
import RefreshdCore
import RefreshdPostgres
import RefreshdRuntime
import Synchronization

/// Issue 24's target, "1 node on PostgreSQL ≥ 1,000 durable launches a second with p99 lateness
/// < 10 ms", through the embedding library: one node's `shards` shards, each a `RefreshScheduler`
/// over its fenced `PostgresShardStore` on a thread and loop of its own (as `RefreshDaemon` makes
/// them), every job a closure handler that completes at once (no process: the scheduler and the
/// database are what is measured). N requests, dealt to the shards in turn, due at instants
/// spread evenly over `spreadMs`; every launch is committed (fenced) before its handler runs,
/// and its end after. Launches a second and lateness (handler call − earliest begin date).
/// Beside it in `Scripts/bench`: `dispatch_durable`, the same through one SQLite store.
func sharedLaunches(count n: Int, spreadMs: Int64, marginMs: Int64, cap: Int, conninfo: String, shards: Int) throws {
    let db = try PostgresDatabase(connection: conninfo, shardCount: shards)
    defer { db.close() }
    let ids = identifiers(n)
    let log = SharedLaunchLog(total: n)
    var schedulers: [RefreshScheduler] = []
    for shard in 0..<shards {
        guard let lease = try db.acquire(shard: shard, node: "bench", lease: .seconds(3600)) else {
            throw BenchFailure("shard \(shard) of the bench database is held by another node")
        }
        let store = try db.store(shard: shard, epoch: lease.epoch)
        let runtimeOptions = RefreshRuntime.Options(configuration: configuration(cap: cap), logger: quietLogger())
        schedulers.append(try RefreshScheduler(store: store, runtimeOptions: runtimeOptions, options: .init(
            configuration: configuration(cap: cap), logger: quietLogger(), runCgroups: false)))
    }
    let all = schedulers
    let stopAll: @Sendable () -> Void = { for scheduler in all { scheduler.stop() } }
    let handler: @Sendable (RefreshTask) -> Void = { task in
        log.launched[index(of: task.identifier)] = Measure.realtimeNanos()
        task.setTaskCompleted(success: true)
        if log.count.add(1, ordering: .relaxed).newValue == n { stopAll() }
    }
    for i in 0..<n { schedulers[i % shards].register(TaskDefinition(identifier: ids[i]), launchHandler: handler) }
    let base = Measure.realtimeMillis() + marginMs
    let earliest = (0..<n).map { base + Int64($0) * spreadMs / Int64(n) }
    // Each shard's requests from a thread of its own: every submit is a commit, and the shards'
    // commits share the server's flushes (one after another, 5,000 would outlast the margin).
    // (Threads, not concurrentPerform, which runs as many at once as there are cores.)
    let submitting = DispatchGroup()
    for shard in 0..<shards {
        submitting.enter()
        Thread.detachNewThread {
            for i in stride(from: shard, to: n, by: shards) {
                do {
                    try all[shard].submit(TaskRequest(identifier: ids[i], earliestBeginDate: Instant(milliseconds: earliest[i])))
                } catch {
                    log.refused.add(1, ordering: .relaxed)
                }
            }
            submitting.leave()
        }
    }
    submitting.wait()
    if log.refused.load(ordering: .relaxed) > 0 { throw BenchFailure("\(log.refused.load(ordering: .relaxed)) submits were refused") }
    let submittedAt = Measure.realtimeMillis()
    let cpu0 = Measure.cpuSeconds()
    let wall0 = Measure.monotonicSeconds()
    let group = DispatchGroup()
    for scheduler in all {
        group.enter()
        let thread = Thread {
            do { try scheduler.run() } catch { warn("shared-launches: a shard's loop failed: \(error)") }
            group.leave()
        }
        thread.stackSize = 4 << 20
        thread.start()
    }
    // Every launch within the spread and a minute more, or the run is reported short.
    if group.wait(timeout: .now() + .milliseconds(Int(marginMs + spreadMs + 60_000))) == .timedOut { stopAll(); group.wait() }
    let cpu1 = Measure.cpuSeconds()
    let wall1 = Measure.monotonicSeconds()

    var lateness: [Int64] = []
    var lastLaunch: Int64 = 0
    for i in 0..<n where log.launched[i] > 0 {
        lateness.append(log.launched[i] - earliest[i] * 1_000_000)
        lastLaunch = max(lastLaunch, log.launched[i])
    }
    var out = JSONLine()
    out.add("impl", "refreshd")
    out.add("bench", "launches_postgres")
    out.add("shards", shards)
    out.add("n", n)
    out.add("launched", log.count.load(ordering: .relaxed))
    out.add("spread_s", Double(spreadMs) / 1000)
    out.add("rate_per_s", Double(n) / (Double(spreadMs) / 1000))
    out.add("cpu_s", cpu1 - cpu0)
    out.add("wall_s", wall1 - wall0)
    out.add("dispatch_wall_s", Double(lastLaunch - base * 1_000_000) / 1e9)
    out.add(Lateness(nanos: lateness))
    out.add("setup_overran", submittedAt > base)
    out.print()
}

/// Launch instants (each shard's loop writes its own jobs' slots) and how many launched.
final class SharedLaunchLog: @unchecked Sendable {
    let launched: UnsafeMutablePointer<Int64>
    let count = Atomic<Int>(0)
    let refused = Atomic<Int>(0)

    init(total: Int) {
        launched = .allocate(capacity: total)
        launched.initialize(repeating: 0, count: total)
    }

    deinit { launched.deallocate() }
}
