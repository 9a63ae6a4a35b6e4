import CLibUV
import Glibc
import RefreshdCore
import RefreshdRuntime

/// The libuv host: what the runtime asks of the world, done for real on the loop thread.
extension RefreshScheduler: RuntimeHost {
    public func now() -> Instant { options.clock.now() }

    public func armWakeUp(at instant: Instant?) {
        guard let instant else {
            uv_timer_stop(timer)
            return
        }
        uv_update_time(loop)
        let delay = max(0, instant.duration(since: options.clock.now()).wholeMilliseconds)
        uv_timer_start(timer, { handle in
            guard let data = handle?.pointee.data else { return }
            let scheduler = Unmanaged<RefreshScheduler>.fromOpaque(data).takeUnretainedValue()
            scheduler.clockWatch?.checkOffset()  // slept or stepped since arming?
            scheduler.runtime.send(.timerFired)
        }, UInt64(delay), 0)
    }

    public func startCommand(_ order: LaunchOrder, _ job: CommandJob, environment: () -> [String]) -> CommandStart {
        CrashPoint.reach(.launchCommitted)
        let runtime = self.runtime
        let cgroup = makeRunCgroup(order)
        newestRunID = max(newestRunID, order.runID)
        let process = CommandProcess(
            runID: order.runID, identifier: order.identifier,
            onLine: { stream, line in runtime.runOutput(order, stream: stream, line: line) },
            onDropped: { lines, bytes, limit in runtime.runOutputDropped(order, lines: lines, bytes: bytes, limit: limit) },
            onResultLine: { line in runtime.runResultLine(order, line) },
            onExit: { [weak self] exit, results in
                self?.processes[order.runID] = nil
                runtime.runEnded(order.runID, exit: exit, results: results)
            })
        process.onLeaderExited = { [weak self] group in
            CrashPoint.reach(.leaderExited)
            self?.leaderExited(runID: order.runID, group: group)
        }
        let env = environment()
        let joined = joinRunCgroup(cgroup)
        if let error = process.spawn(loop: loop, argv: job.argv, environment: env,
                                     workingDirectory: job.workingDirectory) {
            if joined { cgroups?.leave() }
            if let cgroup { removeCgroup(cgroup) }
            return .failed("\(job.argv.first ?? "?"): \(error)")
        }
        enterRunCgroup(order, pid: process.pid, cgroup: cgroup, joined: joined)
        processes[order.runID] = process
        CrashPoint.reach(.spawned)
        return .started(processGroup: process.pid, startTicks: OrphanReaper.stat(pid: process.pid)?.startTicks)
    }

    public func signal(runID: Int64, _ signal: RunSignal) {
        signalRun(runID, signal == .terminate ? SIGTERM : SIGKILL)
    }

    public func startAction(_ order: LaunchOrder, _ action: BuiltInAction, context: ActionContext) {
        let work = ActionWork(order: order, action: action, context: context) { [weak self] work, result in
            guard let self else { return }
            self.actions[order.runID] = nil
            for line in result.log { self.runtime.runOutput(order, stream: "log", line: line) }
            self.runtime.runEnded(order.runID, exit: .completed(success: result.success), results: result.results)
            _ = work
        }
        actions[order.runID] = work
        work.queue(on: loop)
    }

    public func watchConditions(_ on: Bool) {
        if on { monitor?.start() } else { monitor?.stop() }
    }

    public func reapLeftovers(of runs: [RunRecord], instance: String) -> [(RunRecord, [Int32])] {
        sweep(runs, instance: instance)
    }

    public func sweepRun(_ run: RunRecord, instance: String, done: @escaping @Sendable ([Int32]) -> Void) {
        sweepEndedRun(run, instance: instance, done: done)
    }

    public func scheduleDrain() {
        lock.withLock { if asyncOpen { _ = uv_async_send(async) } }
    }

    public var isOnExecutionContext: Bool { onLoopThread }

    public func runtimeStopped() {
        publisher.sync {}  // what was published before the stop is on disk when run() returns
        removeLeftCgroups()
        closeHandles()
    }

    static func processEnvironment() -> [String: String] {
        var env: [String: String] = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let s = String(cString: entry)
            if let eq = s.firstIndex(of: "=") { env[String(s[..<eq])] = String(s[s.index(after: eq)...]) }
            pointer += 1
        }
        return env
    }
}

extension RefreshScheduler {
    /// Writes a machine's publication into the shared container, off the loop thread and in the
    /// order published (one serial queue), atomically. A failure is logged as a warning; the
    /// machine's state is already committed and the next publication replaces the file anyway.
    public func publish(_ publication: Publication) {
        for listener in publicationListeners { listener(publication) }
        guard let container = runtime.options.sharedContainer else {
            runtime.publicationFailed(publication.path, reason: "no shared container is configured")
            return
        }
        let path = "\(container)/\(publication.path)"
        publisher.async { [runtime] in
            do throws(AtomicFile.Failure) {
                if let contents = publication.contents {
                    try AtomicFile.write(contents, to: path)
                } else {
                    try AtomicFile.remove(path)
                }
            } catch {
                runtime.publicationFailed(publication.path, reason: error.reason)
            }
        }
    }
}
