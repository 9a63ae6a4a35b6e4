import Glibc
import Refreshd

/// Issue 23's targets: N pending instances of one template (memory per instance, the time to
/// add them through the library API), and the restore of a state that holds them (`--state`: a
/// state directory whose SQLite file already holds the template's instances and requests, as
/// `--fill` makes it: the N instances added through `addInstances`, committed in one transaction).
func instances(count n: Int, state: String?, fill: Bool = false) throws {
    let template = TaskDefinition(identifier: "bench.feed", namespace: "bench.feed")
    let handler: @Sendable (RefreshTask) -> Void = { task in task.setTaskCompleted(success: true) }
    var out = JSONLine()
    out.add("impl", "refreshd")
    out.add("bench", "instances")
    out.add("n", n)
    if let state, fill {
        let scheduler = try RefreshScheduler(options: .init(stateDirectory: state, configuration: configuration(cap: 4),
                                                            logger: quietLogger()))
        scheduler.registerTemplate(template, parameters: ["user"], firstRequest: .after(.seconds(86_400)), launchHandler: handler)
        scheduler.restoreSavedState()
        let t0 = Measure.monotonicSeconds()
        let refused = scheduler.addInstances((0..<n).map { InstanceRecord(template: "bench.feed", key: "u\($0)", values: [:]) })
        out.add("fill_s", Measure.monotonicSeconds() - t0)
        out.add("fill_refused", refused.count)
        out.print()
        return
    }
    if let state {
        let rss0 = Measure.rssBytes()
        let t0 = Measure.monotonicSeconds()
        let scheduler = try RefreshScheduler(options: .init(stateDirectory: state, configuration: configuration(cap: 4),
                                                            logger: quietLogger()))
        scheduler.registerTemplate(template, parameters: ["user"], firstRequest: .after(.seconds(86_400)), launchHandler: handler)
        scheduler.restoreSavedState()
        let restored = Measure.monotonicSeconds() - t0
        out.add("restore_s", restored)
        out.add("restored_instances", scheduler.instances(of: "bench.feed")?.count ?? 0)
        out.add("restored_pending", scheduler.pendingTaskRequests().count)
        out.add("restore_bytes_per_instance", Double(Measure.rssBytes() - rss0) / Double(n))
        out.print()
        return
    }
    let keys = (0..<n).map { "u\($0)" }
    let scheduler = try RefreshScheduler(options: .init(stateDirectory: nil, configuration: configuration(cap: 4),
                                                        logger: quietLogger()))
    scheduler.registerTemplate(template, parameters: ["user"], firstRequest: .after(.seconds(86_400)), launchHandler: handler)
    let loop = LoopThread(scheduler)
    settle()
    let rss0 = Measure.rssBytes()
    let t0 = Measure.monotonicSeconds()
    for key in keys { try scheduler.addInstance(template: "bench.feed", key: key) }
    let added = Measure.monotonicSeconds() - t0
    settle()
    let rss1 = Measure.rssBytes()
    let pending = scheduler.pendingTaskRequests().count
    // The dashboard's and the metrics' gather on the loop (issue 33): the snapshot without quiet
    // instances' requests, with a handful of plain jobs' requests (due tomorrow) beside the
    // instances', added after the memory was read. Least of 5.
    let tomorrow = Instant(milliseconds: Measure.realtimeMillis() + 86_400_000)
    for i in 0..<5 {
        scheduler.register(TaskDefinition(identifier: "bench.plain\(i)", namespace: "bench.plain\(i)"), launchHandler: handler)
        try scheduler.submit(TaskRequest(identifier: "bench.plain\(i)", earliestBeginDate: tomorrow))
    }
    settle()
    var lightSnapshot = Double.infinity
    var kept = 0
    for _ in 0..<5 {
        let t = Measure.monotonicSeconds()
        kept = scheduler.runtime.snapshot(quietInstances: false).snapshot.pending.count
        lightSnapshot = min(lightSnapshot, Measure.monotonicSeconds() - t)
    }
    out.add("light_snapshot_s", lightSnapshot)
    out.add("light_snapshot_kept", kept)
    // The batch entry point: one commit and one wake for all (a fresh scheduler, same keys).
    let batch = try RefreshScheduler(options: .init(stateDirectory: nil, configuration: configuration(cap: 4),
                                                    logger: quietLogger()))
    batch.registerTemplate(template, parameters: ["user"], firstRequest: .after(.seconds(86_400)), launchHandler: handler)
    let records = keys.map { InstanceRecord(template: "bench.feed", key: $0, values: [:]) }
    let t1 = Measure.monotonicSeconds()
    let refused = batch.addInstances(records)
    let batched = Measure.monotonicSeconds() - t1
    out.add("batch_add_s", batched)
    out.add("batch_refused", refused.count)
    scheduler.stop()
    loop.join()
    // Each identifier `bench.feed[u123]` is a heap string (over 15 bytes): its bytes and its
    // allocation are counted in the figure; the key's own bytes are reported beside it.
    out.add("pending", pending)
    out.add("add_s", added)
    out.add("bytes_per_instance", Double(rss1 - rss0) / Double(n))
    out.add("mean_key_bytes", Double(keys.reduce(0) { $0 + $1.utf8.count }) / Double(n))
    out.add("mean_identifier_bytes", Double(keys.reduce(0) { $0 + $1.utf8.count + 12 }) / Double(n))
    out.print()
}


/// Issue 23's dispatch target: N pending instances of one template (added through
/// `addInstances`, first request tomorrow), of which `due` are submitted again with earliest
/// dates spread evenly over `spreadMs` from `marginMs` after setup (100,000 over 10 s: 10,000
/// launches a second), handlers completing at once. Lateness as in `dispatch`.
func instancesDispatch(count n: Int, due: Int, spreadMs: Int64, marginMs: Int64) throws {
    let template = TaskDefinition(identifier: "bench.feed", namespace: "bench.feed")
    let log = LaunchLog(total: due)
    let scheduler = try RefreshScheduler(options: .init(stateDirectory: nil, configuration: configuration(cap: 4),
                                                        logger: quietLogger()))
    let handler: @Sendable (RefreshTask) -> Void = { task in
        let now = Measure.realtimeNanos()
        log.launched[instanceIndex(of: task.identifier)] = now
        task.setTaskCompleted(success: true)
        log.count += 1
        if log.count == log.total { log.onDone?() }
    }
    log.onDone = { [unowned scheduler] in scheduler.stop() }
    scheduler.registerTemplate(template, parameters: ["user"], firstRequest: .after(.seconds(86_400)), launchHandler: handler)
    let records = (0..<n).map { InstanceRecord(template: "bench.feed", key: "u\($0)", values: [:]) }
    let cpu0 = Measure.cpuSeconds()
    let refused = scheduler.addInstances(records)
    let cpuAdded = Measure.cpuSeconds()
    let base = Measure.realtimeMillis() + marginMs
    var earliest = [Int64](repeating: 0, count: due)
    for i in 0..<due { earliest[i] = base + Int64(i) * spreadMs / Int64(due) }
    for i in 0..<due {
        try scheduler.submit(TaskRequest(identifier: "bench.feed[u\(i)]", earliestBeginDate: Instant(milliseconds: earliest[i])))
    }
    let submittedAt = Measure.realtimeMillis()
    let pending = scheduler.pendingTaskRequests().count
    let cpuSubmitted = Measure.cpuSeconds()
    try scheduler.run()
    let cpu1 = Measure.cpuSeconds()
    var lateness = [Int64](repeating: 0, count: due)
    for i in 0..<due { lateness[i] = log.launched[i] - earliest[i] * 1_000_000 }
    var out = JSONLine()
    out.add("impl", "refreshd")
    out.add("bench", "instances_dispatch")
    out.add("n", n)
    out.add("due", due)
    out.add("refused", refused.count)
    out.add("pending", pending)
    out.add("launched", log.count)
    out.add("rate_per_s", Double(due) / (Double(spreadMs) / 1000))
    out.add("cpu_add_s", cpuAdded - cpu0)
    out.add("cpu_dispatch_s", cpu1 - cpuSubmitted)
    out.add(Lateness(nanos: lateness))
    out.add("setup_overran", submittedAt > base)
    out.print()
}

/// The number of an instance identifier `bench.feed[u123]`, without allocating.
@inline(__always)
func instanceIndex(of identifier: String) -> Int {
    var value = 0
    var seen = false
    for b in identifier.utf8 {
        if b == UInt8(ascii: "u") { seen = true; value = 0; continue }
        if seen, b >= 48, b <= 57 { value = value * 10 + Int(b &- 48) }
    }
    return value
}
