import RefreshdCore
import RefreshdRuntime

/// The simulated host as the runtime sees it (`RuntimeHost`): the clock, the one wake-up, the
/// modelled commands and actions, signals, sweeps and publications (moved out of
/// `SimulatedHost.swift` whole).
extension SimulatedHost {
    // MARK: RuntimeHost

    package func now() -> Instant { clock }

    package func readClocks() -> ClockReading { ClockReading(wall: clock, monotonic: monotonic) }

    package func armWakeUp(at instant: Instant?) { wakeUp = instant }

    package func startCommand(_ order: LaunchOrder, _ job: CommandJob, environment: () -> [String]) -> CommandStart {
        if let real {
            return real.start(order, job, environment: environment() + ["REFRESH_VIRTUAL_NOW=\(clock.iso8601)"],
                              instance: runtime?.instance ?? "", host: self)
        }
        let b = behaviour(order, job)
        if let failure = b.startFailure { return .failed(failure) }
        // Like a real process, it carries the runtime's instance id (the reaper matches on it).
        let instance = runtime?.instance ?? ""
        nextPID += 1
        let start = clock
        // Over its job's memory limit, it is killed by it as the kernel would: at its end (its
        // peak reached last), SIGKILL, one process killed by the limit (`memory.events`).
        var exit = b.exit
        if let memory = b.memoryBytes {
            let over = job.limits.memoryBytes.map { memory > $0 } ?? false
            if over { exit = .signaled(9) }
            usages[order.runID] = RunUsage(peakMemoryBytes: over ? job.limits.memoryBytes : memory,
                                           memoryLimitKills: over ? 1 : 0)
        }
        var process = Process(order: order, instance: instance, pid: nextPID, endsAt: clock + b.duration,
                              exit: exit, ignoresTerminate: b.ignoresTerminate, results: b.results,
                              timed: b.timedResults.sorted { $0.offset < $1.offset }.map { (start + $0.offset, $0.line) })
        let leader = nextPID
        for _ in 0..<max(0, b.groupChildren) {
            nextPID += 1
            process.children.append(nextPID)
        }
        if let holder = b.resultsHolder {
            nextPID += 1
            process.holder = nextPID
            process.holderModel = holder
        }
        processes[order.runID] = process
        runtime?.runOutputLines(order, stream: "stdout", lines: b.output)
        return .started(processGroup: leader, startTicks: nil)
    }

    package func signal(runID: Int64, _ signal: RunSignal) {
        if frozenUntil != nil { return onLoop.append { [unowned self] in self.signal(runID: runID, signal) } }
        if let real { return real.signal(runID: runID, signal) }
        guard var p = processes[runID], !p.exited, !p.killed else { return }
        // Stopped before its peak: the limit never killed it.
        if signal == .kill || !p.ignoresTerminate { usages[runID]?.memoryLimitKills = 0 }
        switch signal {
        case .terminate:
            // The children die of it; the leader, unless it ignores it.
            p.children.removeAll()
            guard !p.ignoresTerminate else {
                processes[runID] = p
                return
            }
            p.endsAt = clock
            p.exit = .signaled(15)
        case .kill:
            p.children.removeAll()
            p.endsAt = clock
            p.exit = .signaled(9)
        }
        processes[runID] = p
    }

    /// The runtime's order at the leader's exit: SIGKILL to what is left of its group (the
    /// holder outside the group lives on).
    package func killRunGroup(runID: Int64) {
        if frozenUntil != nil { return onLoop.append { [unowned self] in killRunGroup(runID: runID) } }
        if let real { return real.killGroup(runID: runID) }
        guard var p = processes[runID], !p.children.isEmpty else { return }
        p.children.removeAll()
        processes[runID] = p
    }

    /// The runtime's order when the grace after the exit is over: the channel is no longer
    /// read (its holder lives on until the run's sweep).
    package func closeResults(runID: Int64) {
        if frozenUntil != nil { return onLoop.append { [unowned self] in closeResults(runID: runID) } }
        if let real { return real.closeResults(runID: runID) }
        guard var p = processes[runID], p.resultsOpen else { return }
        p.resultsOpen = false
        processes[runID] = p.exited && p.living.isEmpty ? nil : p
    }

    package func startAction(_ order: LaunchOrder, _ action: BuiltInAction, context: ActionContext) {
        startModelledAction(order, action, context: context)
    }

    package func watchConditions(_ on: Bool) {
        watchingConditions = on
        if on { conditionsReportDue = true }
    }

    /// The runtime's periodic re-read: the modelled conditions, reported at once.
    package func readConditions() { runtime?.send(.conditionsChanged(conditions)) }

    package func takeUsage(runID: Int64) -> RunUsage {
        usages.isEmpty ? .none : usages.removeValue(forKey: runID) ?? .none
    }

    /// One run's sweep at its end, at once (what `reapLeftovers` does for it, without arrays).
    package func sweepRunNow(_ run: RunRecord, instance: String) -> [Int32]? {
        if let a = actionRuns[run.runID], a.instance == instance, let pid = a.workerPID {
            actionRuns[run.runID] = nil
            return [pid]
        }
        if let real { return real.sweep(run, instance: instance) }
        guard let p = processes[run.runID], p.instance == instance else { return [] }
        processes[run.runID] = nil
        return p.living
    }

    package func reapLeftovers(of runs: [RunRecord], instance: String) -> [(RunRecord, [Int32])] {
        var reaped: [(RunRecord, [Int32])] = []
        if let real { reaped = real.reapLeftovers(of: runs.filter { actionRuns[$0.runID] == nil }, instance: instance) }
        for run in runs {
            if let a = actionRuns[run.runID], a.instance == instance, let pid = a.workerPID {
                // A worker process carries the run's REFRESH_RUN_ID and REFRESH_INSTANCE too.
                actionRuns[run.runID] = nil
                reaped.append((run, [pid]))
                continue
            }
            guard let p = processes[run.runID], p.instance == instance else { continue }
            processes[run.runID] = nil
            if !p.living.isEmpty { reaped.append((run, p.living)) }
        }
        return reaped
    }


    package func publish(_ publication: Publication, in container: String) {
        if frozenUntil != nil { return onLoop.append { [unowned self] in publish(publication, in: container) } }
        onPublish?(publication)
        publicationCount += 1
        publications[publication.path] = publication.contents
    }

    package func scheduleDrain() {
        if frozenUntil != nil { onLoop.append { [unowned self] in runtime?.drain() } } else { runtime?.drain() }
    }

    /// False while the loop is blocked in a call: what the runtime queues then runs at the thaw.
    package var isOnExecutionContext: Bool { frozenUntil == nil }

    package func runtimeStopped() {
        stopped = true
        wakeUp = nil
    }
}
