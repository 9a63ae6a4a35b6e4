import Glibc
import Refreshd
import RefreshdCore

/// Issue 23's targets: N pending instances of one template (memory per instance, the time to
/// add them through the library API), and the restore of a state that holds them (`--state`: a
/// state directory whose SQLite file already holds the template's instances and requests, as
/// `Scripts/bench-instances` makes it).
func instances(count n: Int, state: String?) throws {
    let template = TaskDefinition(identifier: "bench.feed", namespace: "bench.feed")
    let handler: @Sendable (RefreshTask) -> Void = { task in task.setTaskCompleted(success: true) }
    var out = JSONLine()
    out.add("impl", "refreshd")
    out.add("bench", "instances")
    out.add("n", n)
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
