@_spi(Benchmarks) import RefreshdCore

extension RefreshRuntime {
    /// Starts a run with its registered handler (execution context).
    func launch(_ order: LaunchOrder, on host: any RuntimeHost) {
        // A commit failed since this launch was queued (an earlier launch's own commit, in the
        // same drain): nothing starts after the store failed.
        if lock.withLock({ storeFailure != nil }) {
            feedMachine { machine, now, effects in machine.launchAbandoned(order, at: now, into: &effects) }
            return
        }
        // The registry holds the code; the machine decides whether it can start (no handler, a
        // command with nothing to run: a failed start, the run's end, one event).
        let (handler, refusal): (TaskHandler?, String?) = lock.withLock {
            if let handler = handlers[order.identifier] { return (handler, nil) }
            return instanceLaunch(order.identifier, slot: order.slot)
        }
        if let refusal {
            feedMachine { machine, now, effects in machine.startFailed(order.runID, reason: refusal, at: now, into: &effects) }
            return
        }
        guard let handler, RuntimeMachine.starts(handler.launchTarget) else {
            feedMachine { machine, now, effects in _ = machine.launching(order, handler?.launchTarget, at: now, into: &effects) }
            return
        }
        switch handler {
        case let .command(job):
            lock.withLock { executions[order.runID] = .command(order) }
            switch host.startCommand(order, job, environment: { self.environment(for: order, job) }) {
            case let .started(group, ticks):
                // Its own transaction: the run was committed before the spawn and its processes
                // carry REFRESH_INSTANCE and REFRESH_RUN_ID, so dying before this commit loses
                // nothing (the reaper finds them by their environment).
                lock.withLock {
                    if case .command = executions[order.runID] {
                        executions[order.runID] = .command(order, processGroup: group, startTicks: ticks)
                    }
                    // In the event buffer (free here: no event is being fed), not a new array.
                    scratch.removeAll(keepingCapacity: true)
                    machine.processStarted(order, processGroup: group, startTicks: ticks, into: &scratch)
                    if !scratch.isEmpty { _ = commit(scratch) }
                }
                // The daemon's log only, as before (no observation: a simulation's report is unchanged).
                logger.info("\(RuntimeMachine.processStartedLog(order, processGroup: group))")
            case let .failed(reason):
                feedMachine { machine, now, effects in
                    executions[order.runID] = nil
                    machine.startFailed(order.runID, reason: reason, at: now, into: &effects)
                }
            }
        case let .inProcess(handler):
            let task = RefreshTask(order: order, sharedContainer: options.sharedContainer) { [weak self] runID, success in
                self?.runEnded(runID, exit: .completed(success: success))
            }
            lock.withLock { executions[order.runID] = .task(task) }
            handler(task)
        case let .action(action):
            let context = ActionContext(order: order, sharedContainer: options.sharedContainer)
            lock.withLock { executions[order.runID] = .action(context) }
            host.startAction(order, action, context: context)
        }
    }

    /// Called without the lock (it takes it): one call into the machine at the host's instant
    /// (the saved state restored first, the live backlog applied), its effects committed as one
    /// transaction and queued, then carried out. Returns what `body` returns.
    @discardableResult
    func feedMachine<T>(_ body: (inout RuntimeMachine, Instant, inout [SchedulerEffect]) -> T) -> T {
        let host = self.host
        let result = lock.withLock {
            startIfNeeded()
            applyLiveBacklog()
            scratch.removeAll(keepingCapacity: true)
            let result = body(&machine, host?.now() ?? Instant(milliseconds: 0), &scratch)
            if !scratch.isEmpty { _ = commit(scratch) }
            return result
        }
        kick(host)
        return result
    }

    /// The end of a run's work, with the raw lines of its results: a host reports an in-process
    /// action's, a task its own; a process's comes from the runtime's results channel decisions
    /// (`RefreshRuntime+Results`). Any thread. A run already ended (an abandoned task, an action
    /// that returned after its grace) is ignored.
    package func runEnded(_ runID: Int64, exit: RunExit, results: [String] = []) {
        let (execution, dropped) = lock.withLock {
            (executions.removeValue(forKey: runID), machine.runWorkEnded(runID))
        }
        if let dropped { report(observation(dropped)) }
        guard let execution else { return }
        if case let .command(order, group, ticks) = execution, let host {
            let record = sweepRecord(order, processGroup: group, startTicks: ticks)
            lock.withLock { machine.sweepStarted(order.runID) }
            if let killed = host.sweepRunNow(record, instance: instance) {
                // Swept at once (the simulated host): no closure kept, nothing allocated for it.
                sweepEnded(order, killed: killed) {
                    finishRun(runID, exit: exit, results: results, usage: host.takeUsage(runID: runID))
                }
            } else {
                host.sweepRun(record, instance: instance) { [self] killed in
                    sweepEnded(order, killed: killed) {
                        finishRun(runID, exit: exit, results: results, usage: self.host?.takeUsage(runID: runID) ?? .none)
                    }
                }
            }
        } else {
            finishRun(runID, exit: exit, results: results)
        }
    }

    /// The run's end, with its results checked, to the machines (committed).
    func finishRun(_ runID: Int64, exit: RunExit, results: [String], usage: RunUsage = .none) {
        feedMachine { machine, now, effects in
            machine.finishRun(runID, exit: exit, results: results, usage: usage, at: now, into: &effects)
        }
    }

    /// A run's processes never outlive it: at a command run's end, before the end is committed,
    /// the host kills whatever the run left running (a child in a session of its own, one that
    /// left the process group), found by its cgroup, its session and its environment. Swept
    /// before the commit, so refreshd dying at any instant leaves the run swept or unfinished,
    /// and the restart's sweep of unfinished runs gets the rest. The host calls `runEnded` for a
    /// command on its execution context, and the sweep's end (`sweepEnded`) runs there. This is
    /// the run as the sweep reads it.
    func sweepRecord(_ order: LaunchOrder, processGroup: Int32?, startTicks: UInt64?) -> RunRecord {
        RunRecord(runID: order.runID, identifier: order.identifier, kind: order.kind,
                  submitted: order.started, earliest: order.started, started: order.started,
                  deadline: order.deadline, attempt: order.attempt,
                  processGroup: processGroup, processStartTicks: startTicks)
    }

    /// A run's sweep is done: its log line, then `then` (the run's end), then a stop that waited for it.
    func sweepEnded(_ order: LaunchOrder, killed: [Int32], then: () -> Void) {
        if let log = RuntimeMachine.leftoversKilled(identifier: order.identifier, runID: order.runID,
                                                    count: killed.count, atStart: false) {
            report(RuntimeObservation(log, at: clock()))
        }
        then()
        let stopNow = lock.withLock { machine.sweepEnded(order.runID) }
        if stopNow { send(.shutdown) }
    }

    /// The host could not write a publication (any thread): a warning in the log.
    package func publicationFailed(_ path: String, reason: String) {
        report(RuntimeObservation(.runtime(.notPublished(path: path, reason: reason)), at: clock()))
    }

    /// A line of a run's output, logged as is (any thread): a built-in action's log lines; a
    /// process's output goes through the rate limit (`runOutputLines`).
    package func runOutput(_ order: LaunchOrder, stream: String, line: String) {
        report(RuntimeObservation(RuntimeMachine.output(order, stream: stream, line: line), at: clock()))
    }

    /// Output the host read and did not log (over the rate limit).
    package func runOutputDropped(_ order: LaunchOrder, lines: Int, bytes: Int, limit: String) {
        report(observation(RuntimeMachine.OutputDrop(identifier: order.identifier, runID: order.runID,
                                                     lines: lines, bytes: bytes, limit: limit)))
    }

    /// The environment a command run sees: refreshd's own, the job's, and the REFRESH_ variables.
    func environment(for order: LaunchOrder, _ job: CommandJob) -> [String] {
        job.environment(for: order, base: baseEnvironment, instance: instance, sharedContainer: options.sharedContainer)
    }
}
