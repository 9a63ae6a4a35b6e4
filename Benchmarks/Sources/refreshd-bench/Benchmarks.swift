import Glibc
import Logging
import Refreshd

/// A logger that drops everything below warning: the benchmarks measure the scheduler, not log
/// formatting. (`info` messages are autoclosures, so a filtered line costs no formatting.)
func quietLogger() -> Logger {
    var logger = Logger(label: "bench") { _ in StreamLogHandler.standardError(label: "bench") }
    logger.logLevel = .warning
    return logger
}

func configuration(cap: Int) -> SchedulerConfiguration {
    SchedulerConfiguration(maxConcurrentRuns: cap, maxPendingAppRefresh: Int.max, maxPendingProcessing: Int.max)
}

/// `bench.0`, `bench.1`, ...: at most 15 UTF-8 bytes, so Swift stores them inline (no heap).
func identifiers(_ count: Int, prefix: String = "bench") -> [String] {
    (0..<count).map { "\(prefix).\($0)" }
}

/// The number after the last dot of an identifier, without allocating.
@inline(__always)
func index(of identifier: String) -> Int {
    let utf8 = identifier.utf8
    var value = 0
    var i = utf8.index(after: utf8.lastIndex(of: UInt8(ascii: "."))!)
    while i != utf8.endIndex {
        value = value * 10 + Int(utf8[i] &- 48)
        i = utf8.index(after: i)
    }
    return value
}

/// Launch instants, written by the handler on the loop thread only.
final class LaunchLog: @unchecked Sendable {
    let launched: UnsafeMutablePointer<Int64>
    var count = 0
    let total: Int
    var onDone: (@Sendable () -> Void)?

    init(total: Int) {
        self.total = total
        launched = .allocate(capacity: total)
        launched.initialize(repeating: 0, count: total)
    }
}

// MARK: dispatch

/// N requests through the library API, earliest dates spread evenly over `spreadMs` starting
/// `marginMs` after the declarations, handlers completing at once.
func dispatch(count n: Int, spreadMs: Int64, marginMs: Int64, cap: Int, state: String?, label: String?) throws {
    let ids = identifiers(n)
    let log = LaunchLog(total: n)
    let scheduler = try RefreshScheduler(options: .init(
        stateDirectory: state, configuration: configuration(cap: cap), logger: quietLogger()))
    let handler: @Sendable (RefreshTask) -> Void = { task in
        let now = Measure.realtimeNanos()
        log.launched[index(of: task.identifier)] = now
        task.setTaskCompleted(success: true)
        log.count += 1
        if log.count == log.total { log.onDone?() }
    }
    log.onDone = { [unowned scheduler] in scheduler.stop() }

    let rss0 = Measure.rssBytes()
    let wall0 = Measure.monotonicSeconds()
    let cpu0 = Measure.cpuSeconds()
    for id in ids { scheduler.register(TaskDefinition(identifier: id), launchHandler: handler) }
    let cpuDeclared = Measure.cpuSeconds()
    let rssDeclared = Measure.rssBytes()

    let base = Measure.realtimeMillis() + marginMs
    var earliest = [Int64](repeating: 0, count: n)
    for i in 0..<n { earliest[i] = base + Int64(i) * spreadMs / Int64(n) }
    let cpuSubmit0 = Measure.cpuSeconds()
    let wallSubmit0 = Measure.monotonicSeconds()
    for i in 0..<n {
        try scheduler.submit(TaskRequest(identifier: ids[i], earliestBeginDate: Instant(milliseconds: earliest[i])))
    }
    let cpuSubmitted = Measure.cpuSeconds()
    let wallSubmitted = Measure.monotonicSeconds()
    let rssSubmitted = Measure.rssBytes()
    let submittedAt = Measure.realtimeMillis()

    try scheduler.run()
    let cpu1 = Measure.cpuSeconds()
    let wall1 = Measure.monotonicSeconds()
    let rssEnd = Measure.rssBytes()

    var lateness = [Int64](repeating: 0, count: n)
    var lastLaunch: Int64 = 0
    for i in 0..<n {
        lateness[i] = log.launched[i] - earliest[i] * 1_000_000
        lastLaunch = max(lastLaunch, log.launched[i])
    }
    var out = JSONLine()
    out.add("impl", "refreshd")
    out.add("bench", label ?? (state == nil ? "dispatch" : "dispatch_durable"))
    out.add("n", n)
    out.add("launched", log.count)
    out.add("spread_s", Double(spreadMs) / 1000)
    out.add("cpu_s", cpu1 - cpu0)
    out.add("cpu_declare_s", cpuDeclared - cpu0)
    out.add("cpu_submit_s", cpuSubmitted - cpuSubmit0)
    out.add("cpu_dispatch_s", cpu1 - cpuSubmitted)
    out.add("wall_s", wall1 - wall0)
    out.add("submit_wall_s", wallSubmitted - wallSubmit0)
    out.add("dispatch_wall_s", Double(lastLaunch - base * 1_000_000) / 1e9)
    out.add("rate_per_s", Double(n) / (Double(spreadMs) / 1000))
    out.add(Lateness(nanos: lateness))
    out.add("setup_overran", submittedAt > base)
    out.add("rss_declared_bytes", rssDeclared - rss0)
    out.add("rss_submitted_bytes", rssSubmitted - rssDeclared)
    out.add("rss_end_bytes", rssEnd - rss0)
    out.print()
}

// MARK: memory

/// RSS growth of N pending requests with the loop running (so queued effects are drained as in
/// a live scheduler), measured separately from declaring the N identifiers.
func memory(count n: Int) throws {
    let ids = identifiers(n)
    let scheduler = try RefreshScheduler(options: .init(
        stateDirectory: nil, configuration: configuration(cap: 4), logger: quietLogger()))
    let handler: @Sendable (RefreshTask) -> Void = { task in task.setTaskCompleted(success: true) }
    let loop = LoopThread(scheduler)
    settle()
    let rss0 = Measure.rssBytes()
    let cpu0 = Measure.cpuSeconds()
    for id in ids { scheduler.register(TaskDefinition(identifier: id), launchHandler: handler) }
    settle()
    let rssDeclared = Measure.rssBytes()
    let cpuDeclared = Measure.cpuSeconds()
    let tomorrow = Instant(milliseconds: Measure.realtimeMillis() + 86_400_000)
    for id in ids { try scheduler.submit(TaskRequest(identifier: id, earliestBeginDate: tomorrow)) }
    let rssPeakish = Measure.rssBytes()
    settle()
    let rssPending = Measure.rssBytes()
    let cpuPending = Measure.cpuSeconds()
    let hwm = (Measure.statusField("VmHWM") ?? 0) * 1024
    let pending = scheduler.pendingTaskRequests().count
    scheduler.stop()
    loop.join()

    var out = JSONLine()
    out.add("impl", "refreshd")
    out.add("bench", "memory")
    out.add("n", n)
    out.add("pending", pending)
    out.add("rss_baseline_bytes", rss0)
    out.add("declare_bytes_per_id", Double(rssDeclared - rss0) / Double(n))
    out.add("pending_bytes_per_request", Double(rssPending - rssDeclared) / Double(n))
    out.add("pending_bytes_per_request_before_drain", Double(rssPeakish - rssDeclared) / Double(n))
    out.add("total_bytes_per_request", Double(rssPending - rss0) / Double(n))
    out.add("peak_rss_bytes", hwm)
    out.add("cpu_declare_s", cpuDeclared - cpu0)
    out.add("cpu_submit_s", cpuPending - cpuDeclared)
    out.print()
}

/// Gives the loop thread a moment to drain what the calls queued.
func settle() { usleep(300_000) }

/// `run()` on its own thread, recording the thread id for /proc/self/task/TID/status.
final class LoopThread: @unchecked Sendable {
    let scheduler: RefreshScheduler
    var thread = pthread_t()
    private let tidBox = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
    var tid: Int32 { tidBox.pointee }

    init(_ scheduler: RefreshScheduler) {
        self.scheduler = scheduler
        tidBox.pointee = 0
        let context = Unmanaged.passRetained(self).toOpaque()
        pthread_create(&thread, nil, { raw in
            let me = Unmanaged<LoopThread>.fromOpaque(raw!).takeRetainedValue()
            me.tidBox.pointee = Measure.threadID()
            do { try me.scheduler.run() } catch { warn("run: \(error)") }
            return nil
        }, context)
        while tidBox.pointee == 0 { usleep(1000) }
    }

    func join() { pthread_join(thread, nil) }
}

// MARK: idle

/// N requests due tomorrow; the loop idles for `seconds` of real time. Counts the loop thread's
/// context switches (its wake-ups) and the process's CPU over the window.
func idle(count n: Int, seconds: Int) throws {
    let ids = identifiers(n)
    let scheduler = try RefreshScheduler(options: .init(
        stateDirectory: nil, configuration: configuration(cap: 4), logger: quietLogger()))
    let handler: @Sendable (RefreshTask) -> Void = { task in task.setTaskCompleted(success: true) }
    for id in ids { scheduler.register(TaskDefinition(identifier: id), launchHandler: handler) }
    let tomorrow = Instant(milliseconds: Measure.realtimeMillis() + 86_400_000)
    for id in ids { try scheduler.submit(TaskRequest(identifier: id, earliestBeginDate: tomorrow)) }
    let loop = LoopThread(scheduler)
    sleep(1)  // the loop drains the queued effects and arms its one timer
    let status = "/proc/self/task/\(loop.tid)/status"
    let vol0 = Measure.statusField("voluntary_ctxt_switches", path: status) ?? -1
    let invol0 = Measure.statusField("nonvoluntary_ctxt_switches", path: status) ?? -1
    let usage0 = Measure.usage()
    let cpu0 = Measure.cpuSeconds()
    var request = timespec(tv_sec: seconds, tv_nsec: 0)
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 { request = remaining }
    let cpu1 = Measure.cpuSeconds()
    let usage1 = Measure.usage()
    let vol1 = Measure.statusField("voluntary_ctxt_switches", path: status) ?? -1
    let invol1 = Measure.statusField("nonvoluntary_ctxt_switches", path: status) ?? -1
    let threads = (Measure.statusField("Threads") ?? 0)
    scheduler.stop()
    loop.join()

    var out = JSONLine()
    out.add("impl", "refreshd")
    out.add("bench", "idle")
    out.add("n", n)
    out.add("seconds", seconds)
    out.add("threads", threads)
    out.add("loop_voluntary_switches", vol1 - vol0)
    out.add("loop_nonvoluntary_switches", invol1 - invol0)
    // getrusage counts every thread; the main thread's own nanosleep contributes one.
    out.add("process_voluntary_switches", usage1.ru_nvcsw - usage0.ru_nvcsw)
    out.add("cpu_s", cpu1 - cpu0)
    out.print()
}

// MARK: command jobs

/// Counts `finished` lines and stops the scheduler after the last one; prints nothing.
struct FinishCounter: LogHandler {
    final class State: @unchecked Sendable {
        var finished = 0
        var target = 0
        var firstLaunchNanos: Int64 = 0
        var lastFinishNanos: Int64 = 0
        var onDone: (@Sendable () -> Void)?
        /// The scheduler's "process tracking: ..." line (how the runs' processes were tracked).
        var tracking = ""
    }
    let state: State
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let text = "\(event.message)"
        if text.hasPrefix("process tracking: ") { state.tracking = String(text.dropFirst(18)) }
        if text.hasPrefix("launched "), state.firstLaunchNanos == 0 { state.firstLaunchNanos = Measure.realtimeNanos() }
        if event.level >= .warning { warn("\(text)") }
        guard text.hasPrefix("finished ") else { return }
        state.finished += 1
        if state.finished == state.target {
            state.lastFinishNanos = Measure.realtimeNanos()
            state.onDone?()
        }
    }
}

/// N `/bin/true` command jobs, all due at once, under the concurrency cap, with the runs'
/// processes tracked as `tracking` says (issue 35):
/// - `cgroup`: as the daemon does where it may make cgroups (the process is the scheduler's
///   own): each command born in its run's cgroup, killed with it at the run's end, no /proc sweep;
/// - `sweep`: as the daemon does without cgroups: a child subreaper and the /proc sweep;
/// - `embedded`: as a library in another program's process (what this line measured before
///   issue 35): the command moved into its cgroup after the spawn, and the /proc sweep.
func commands(count n: Int, cap: Int, program: String, tracking: String) throws {
    let state = FinishCounter.State()
    state.target = n
    let logger = Logger(label: "bench") { _ in FinishCounter(state: state) }
    let scheduler = try RefreshScheduler(options: .init(
        stateDirectory: nil, configuration: configuration(cap: cap), logger: logger,
        runCgroups: tracking != "sweep", ownsProcess: tracking != "embedded"))
    state.onDone = { [unowned scheduler] in scheduler.stop() }
    let ids = identifiers(n, prefix: "cmd")
    for id in ids { scheduler.register(TaskDefinition(identifier: id), command: CommandJob(argv: [program])) }
    let now = Instant(milliseconds: Measure.realtimeMillis())
    for id in ids { try scheduler.submit(TaskRequest(identifier: id, earliestBeginDate: now)) }
    let start = Measure.realtimeNanos()
    let cpu0 = Measure.cpuSeconds()
    let children0 = Measure.childrenCPUSeconds()
    try scheduler.run()
    let cpu1 = Measure.cpuSeconds()
    let end = Measure.realtimeNanos()
    let drain = Double(end - start) / 1e9

    var out = JSONLine()
    out.add("impl", tracking == "cgroup" ? "refreshd" : "refreshd-\(tracking)")
    out.add("bench", "commands")
    out.add("tracking", state.tracking)
    out.add("n", n)
    out.add("cap", cap)
    out.add("finished", state.finished)
    out.add("drain_s", drain)
    out.add("launches_per_s", Double(state.finished) / drain)
    out.add("cpu_s", cpu1 - cpu0)
    out.add("children_cpu_s", Measure.childrenCPUSeconds() - children0)
    out.print()
}
