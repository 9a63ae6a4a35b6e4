import RefreshdCore

extension RefreshRuntime {
    /// Starts a run with its registered handler (execution context).
    func launch(_ order: LaunchOrder, on host: any RuntimeHost) {
        // The registry holds the code; the machine decides whether it can start (no handler, a
        // command with nothing to run, an instance whose kept values leave a path of its
        // template, a commit failed since this launch was queued: its end, one input). An
        // instance's code is made only once it may start. One lock hold for all of it.
        let (handler, starts): (TaskHandler?, Bool) = lock.withLock {
            let registered = handlers[order.identifier]
            let instance = registered == nil ? instanceLaunch(order.identifier, slot: order.slot) : nil
            let target = registered?.launchTarget ?? instance?.launchTarget
            let performed = performLocked(.launching(order, target, storeFailed: storeFailure != nil), host: host)
            guard case .starts(true) = performed.reply else { return (nil, false) }
            switch instance {
            case let .work(work)?: return (work.handler(actions: options.actions), true)
            case let .handler(handler)?: return (handler, true)
            case nil: return (registered, true)
            }
        }
        guard starts, let handler else {
            kick(host)  // its end, handled with the answer
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
                    performLocked(.processStarted(order, processGroup: group, startTicks: ticks), host: host)
                }
                // The daemon's log only, as before (no observation: a simulation's report is unchanged).
                logger.info("\(RuntimeMachine.processStartedLog(order, processGroup: group))")
            case let .failed(reason):
                lock.withLock { executions[order.runID] = nil }
                perform(.startFailed(runID: order.runID, reason: reason))
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

    /// The end of a run's work, with the raw lines of its results: a host reports an in-process
    /// action's, a task its own; a process's comes from the runtime's results channel decisions
    /// (`RefreshRuntime+Results`). Any thread. A run already ended (an abandoned task, an action
    /// that returned after its grace) is ignored.
    package func runEnded(_ runID: Int64, exit: RunExit, results: [String] = []) {
        let host = self.host
        let (execution, stopped) = lock.withLock { () -> (Execution?, Performed) in
            let execution = executions.removeValue(forKey: runID)
            // A command's leftovers are swept before its end is handled (a stop waits for it).
            if case .command = execution, host != nil { performLocked(.sweepStarted(runID: runID), host: host) }
            return (execution, performLocked(.workStopped(runID: runID), host: host))
        }
        if case let .dropped(drop?) = stopped.reply { report(observation(drop)) }
        guard let execution else { return }
        if case let .command(order, group, ticks) = execution, let host {
            let record = sweepRecord(order, processGroup: group, startTicks: ticks)
            if let killed = host.sweepRunNow(record, instance: instance) {
                // Swept at once (the simulated host): no closure kept, nothing allocated for it.
                perform(.workEnded(order, runID: runID, exit: exit, results: results,
                                   usage: host.takeUsage(runID: runID), swept: killed.count))
            } else {
                host.sweepRun(record, instance: instance) { [self] killed in
                    perform(.workEnded(order, runID: runID, exit: exit, results: results,
                                       usage: self.host?.takeUsage(runID: runID) ?? .none, swept: killed.count))
                }
            }
        } else {
            perform(.workEnded(nil, runID: runID, exit: exit, results: results, usage: .none, swept: nil))
        }
    }

    /// A run's processes never outlive it: at a command run's end, before the end is committed,
    /// the host kills whatever the run left running (a child in a session of its own, one that
    /// left the process group), found by its cgroup, its session and its environment. Swept
    /// before the commit, so refreshd dying at any instant leaves the run swept or unfinished,
    /// and the restart's sweep of unfinished runs gets the rest. The host calls `runEnded` for a
    /// command on its execution context, and the sweep's end (`.workEnded`) is handled there. This is
    /// the run as the sweep reads it.
    func sweepRecord(_ order: LaunchOrder, processGroup: Int32?, startTicks: UInt64?) -> RunRecord {
        RunRecord(runID: order.runID, identifier: order.identifier, kind: order.kind,
                  submitted: order.started, earliest: order.started, started: order.started,
                  deadline: order.deadline, attempt: order.attempt,
                  processGroup: processGroup, processStartTicks: startTicks)
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

    /// The environment a command run sees: refreshd's own, the job's, and the REFRESH_ variables.
    func environment(for order: LaunchOrder, _ job: CommandJob) -> [String] {
        job.environment(for: order, base: baseEnvironment, instance: instance, sharedContainer: options.sharedContainer)
    }
}
