import CLibUV
import Foundation
import Glibc
import RefreshdCore
import RefreshdRuntime

/// The libuv host: what the runtime asks of the world, done for real on the loop thread.
extension RefreshScheduler: RuntimeHost {
    package func now() -> Instant { options.clock.now() }

    package func readClocks() -> ClockReading { ClockWatch.read(options.clock) }

    package func armWakeUp(at instant: Instant?) {
        guard let instant else {
            uv_timer_stop(timer)
            return
        }
        uv_update_time(loop)
        let delay = max(0, instant.duration(since: options.clock.now()).wholeMilliseconds)
        uv_timer_start(timer, { handle in
            guard let data = handle?.pointee.data else { return }
            let scheduler = Unmanaged<RefreshScheduler>.fromOpaque(data).takeUnretainedValue()
            // The clocks as read at the wake-up: the runtime decides whether it slept or stepped.
            scheduler.runtime.timerFired(clocks: scheduler.readClocks())
        }, UInt64(delay), 0)
    }

    package func startCommand(_ order: LaunchOrder, _ job: CommandJob, environment: () -> [String]) -> CommandStart {
        CrashPoint.reach(.launchCommitted)
        var argv = job.argv
        if let runAs = job.runAs {
            switch RunAccount.argv(job.argv, as: runAs) {
            case let .success(wrapped): argv = wrapped
            case let .failure(refusal): return .failed(refusal.text)
            }
            logger.info("\(order.identifier)[\(order.runID)] runs as \(RunAccount.describe(runAs))")
        }
        let runtime = self.runtime
        let cgroup = takeRunCgroup(order, limits: job.limits)
        newestRunID = max(newestRunID, order.runID)
        let process = CommandProcess(
            runID: order.runID, identifier: order.identifier, watch: childWatch,
            isOverLimit: { runtime.runOutputIsOverLimit(order) },
            onLines: { stream, lines in runtime.runOutputLines(order, stream: stream, lines: lines) },
            onSkipped: { bytes, lineEnds in runtime.runOutputSkipped(order, bytes: bytes, lineEnds: lineEnds) },
            onResults: { chunk in runtime.runResultsRead(order, chunk) },
            onResultsClosed: { [weak self] in
                runtime.runResultsClosed(order.runID)
                self?.forgetIfDone(order.runID)
            },
            onExit: { [weak self] exit in
                if let self, let process = self.processes[order.runID] {
                    _ = self.liveGroups.withLock { $0.remove(process.pid) }
                    // Without a cgroup, what the command used is its zombie's (the cgroup's is read at the sweep).
                    if self.runCgroups[order.runID] == nil, let usage = process.exitUsage { self.usages[order.runID] = usage }
                }
                self?.leaderExited(runID: order.runID)
                runtime.runLeaderExited(order.runID, exit: exit)
                self?.forgetIfDone(order.runID)
            })
        let env = environment()
        noteSpawn(runID: order.runID)
        let ticksBefore = OrphanReaper.bootTicks()
        if let error = process.spawn(loop: loop, argv: argv, environment: env,
                                     workingDirectory: job.workingDirectory, cgroup: cgroup?.directory ?? -1) {
            forksBeforeSpawn[order.runID] = nil
            if let cgroup { dropRunCgroup(cgroup) }
            return .failed("\(job.argv.first ?? "?"): \(error)")
        }
        enterRunCgroup(order, pid: process.pid, cgroup: cgroup, born: process.bornInCgroup, limits: job.limits)
        processes[order.runID] = process
        _ = liveGroups.withLock { $0.insert(process.pid) }
        CrashPoint.reach(.spawned)
        return .started(processGroup: process.pid,
                        startTicks: OrphanReaper.startTicks(pid: process.pid, before: ticksBefore, after: OrphanReaper.bootTicks()))
    }

    package func signal(runID: Int64, _ signal: RunSignal) {
        signalRun(runID, signal == .terminate ? SIGTERM : SIGKILL)
    }

    package func killRunGroup(runID: Int64) {
        if let worker = workers[runID] {
            worker.signalGroup(SIGKILL)
            return
        }
        guard let process = processes[runID] else { return }
        process.signalGroup(SIGKILL)
        CrashPoint.reach(.leaderExited)
        killCgroupAtExit(runID: runID, group: process.pid)
    }

    package func closeResults(runID: Int64) {
        (processes[runID] ?? workers[runID])?.closeResults()
        forgetIfDone(runID)
    }

    /// Drops a run's process once its leader has exited and its results channel is closed.
    func forgetIfDone(_ runID: Int64) {
        if let process = processes[runID], process.hasExited, !process.resultsOpen { processes[runID] = nil }
        if let worker = workers[runID], worker.hasExited, !worker.resultsOpen {
            workers[runID] = nil
            forksBeforeSpawn[runID] = nil  // a worker's run has no sweep to take it
        }
    }

    package func startAction(_ order: LaunchOrder, _ action: BuiltInAction, context: ActionContext) {
        if let worker = action.worker {
            startWorker(order, action.name, worker, context: context)
            return
        }
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

    /// A heavy action in a worker process of its own (see `ActionWorkerProcess`): the run's
    /// expiration reaches it as SIGTERM, the end of the grace as SIGKILL, and refreshd's memory
    /// and stop never depend on what it decodes.
    func startWorker(_ order: LaunchOrder, _ name: String, _ worker: BuiltInAction.Worker, context: ActionContext) {
        let runtime = self.runtime
        guard let executable = ActionWorkerProcess.executable() else {
            runtime.runEnded(order.runID, exit: .spawnFailed(
                "\(name) runs in a worker process and no refreshd executable was found to run it "
                    + "(set \(ActionWorkerRequest.executableVariable) to its path)"))
            return
        }
        let request = ActionWorkerRequest(action: name, worker: worker, order: order, sharedContainer: context.sharedContainer)
        guard let json = try? JSONEncoder().encode(request) else {
            runtime.runEnded(order.runID, exit: .spawnFailed("\(name): cannot encode the worker's request"))
            return
        }
        let process = CommandProcess(
            runID: order.runID, identifier: order.identifier, watch: childWatch,
            isOverLimit: { runtime.runOutputIsOverLimit(order) },
            onLines: { stream, lines in runtime.runOutputLines(order, stream: stream == "stdout" ? "log" : stream, lines: lines) },
            onSkipped: { bytes, lineEnds in runtime.runOutputSkipped(order, bytes: bytes, lineEnds: lineEnds) },
            onResults: { chunk in runtime.runResultsRead(order, chunk) },
            onResultsClosed: { [weak self] in
                runtime.runResultsClosed(order.runID)
                self?.forgetIfDone(order.runID)
            },
            onExit: { [weak self] exit in
                context.attach(nil)
                runtime.runLeaderExited(order.runID, exit: exit)
                self?.forgetIfDone(order.runID)
            })
        let argv = [executable, ActionWorkerRequest.subcommand, "--request", String(decoding: json, as: UTF8.self)]
        // As for a command: refreshd's environment without systemd's variables (DaemonControl
        // takes them out of `baseEnvironment`), and the names of this run, for the reaper after a crash.
        var variables = runtime.baseEnvironment
        variables["REFRESH_RUN_ID"] = String(order.runID)
        variables["REFRESH_INSTANCE"] = runtime.instance
        // A worker that hits its memory limit aborts: one line of stderr, not a backtrace.
        variables["SWIFT_BACKTRACE"] = "enable=no"
        let environment = variables.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        noteSpawn(runID: order.runID)
        if let error = process.spawn(loop: loop, argv: argv, environment: environment, workingDirectory: nil) {
            forksBeforeSpawn[order.runID] = nil
            runtime.runEnded(order.runID, exit: .spawnFailed("\(executable): \(error)"))
            return
        }
        workers[order.runID] = process
        let signaller = ActionWorkerProcess.Signaller(process)
        context.attach { signal in signaller.send(signal) }
        if context.isExpired { signaller.send(.terminate) }
        logger.info("\(order.identifier)[\(order.runID)] \(name) started in worker pid \(process.pid)")
    }

    package func watchConditions(_ on: Bool) {
        if on { monitor?.start() } else { monitor?.stop() }
    }

    package func readConditions() { monitor?.check() }

    package func reapLeftovers(of runs: [RunRecord], instance: String) -> [(RunRecord, [Int32])] {
        sweep(runs, instance: instance)
    }

    package func sweepRun(_ run: RunRecord, instance: String, done: @escaping @Sendable ([Int32]) -> Void) {
        sweepEndedRun(run, instance: instance, done: done)
    }

    package func sweepRunNow(_ run: RunRecord, instance: String) -> [Int32]? {
        sweepRunByItsCgroup(run)
    }

    package func takeUsage(runID: Int64) -> RunUsage {
        usages.removeValue(forKey: runID) ?? .none
    }

    package func scheduleDrain() {
        lock.withLock { if asyncOpen { _ = uv_async_send(async) } }
    }

    package var isOnExecutionContext: Bool { onLoopThread }

    package func runtimeStopped() {
        killNotifiers()  // issue 25: none outlives refreshd; the next start sends theirs again
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
    /// order published (one serial queue; a path's stale ones skipped), atomically. A failure is logged as a warning; the
    /// machine's state is already committed and the next publication replaces the file anyway.
    /// (Without a container the runtime reports the failure itself and never calls this.)
    /// A cluster shard's gate with the test hook of a pause just before it is asked.
    static func pausable(_ gate: (@Sendable () -> Bool)?) -> (@Sendable () -> Bool)? {
        guard let gate else { return nil }
        return {
            HostPausePoint.reach(.publicationBeforeRename)
            return gate()
        }
    }

    package func publish(_ publication: Publication, in container: String) {
        for listener in publicationListeners { listener(publication) }
        let path = "\(container)/\(publication.path)"
        // Only the latest publication of a path is written: one still queued when a newer one
        // for the same path comes is skipped (a reader would have seen it replaced anyway). A
        // client driving thousands of activity updates thus queues at most one write per file,
        // and a stop (which waits for the queue) does not wait for thousands of stale ones.
        let generation = publicationLock.withLock { () -> Int in
            publicationGenerations[path, default: 0] += 1
            return publicationGenerations[path]!
        }
        // A cluster shard's gate (nil on one machine), with the test hook of a pause before it.
        let gate: (@Sendable () -> Bool)? = Self.pausable(publicationGate)
        publisher.async { [runtime, self] in
            let latest = publicationLock.withLock { () -> Bool in
                guard publicationGenerations[path] == generation else { return false }
                publicationGenerations[path] = nil
                return true
            }
            guard latest else { return }
            do throws(AtomicFile.Failure) {
                // Folders below the container are opened without following symlinks.
                if let contents = publication.contents {
                    try AtomicFile.write(Array(contents.utf8), root: container, relative: publication.path, gate: gate)
                } else {
                    try AtomicFile.remove(root: container, relative: publication.path, gate: gate)
                }
            } catch {
                runtime.publicationFailed(publication.path, reason: error.description)
            }
        }
    }
}
