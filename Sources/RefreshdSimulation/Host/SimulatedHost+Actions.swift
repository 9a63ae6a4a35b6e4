import RefreshdCore
import RefreshdRuntime

// MARK: Built-in actions

extension SimulatedHost {
    /// A modelled built-in action run: alive from its start until `endsAt` (or its expiration,
    /// or its worker's kill).
    struct ActionRun {
        var order: LaunchOrder
        var instance: String
        /// The worker process's pid (an action with a `worker`); nil for a body in process.
        var workerPID: Int32?
        var endsAt: Instant
        var result: ActionResult
        var whenExpired: ActionResult
        var ignoresExpiration: Bool
        /// How its worker ends instead of returning: its crash, or the kill (SIGKILL).
        var signal: Int32?
    }

    /// Built-in actions running now (for tests: nothing may survive its run), with their
    /// worker's pid (nil for a body in refreshd's process).
    package var livingActions: [(runID: Int64, identifier: String, workerPID: Int32?)] {
        actionRuns.values.sorted { $0.order.runID < $1.order.runID }.map { ($0.order.runID, $0.order.identifier, $0.workerPID) }
    }

    /// Starts a modelled action (see `ActionBehaviour`). The runtime's `.expire` and `.kill`
    /// reach it through its context, as they reach the libuv host's worker: the context is
    /// attached to this run (for a body in process, this is how the model sees `isExpired`).
    func startModelledAction(_ order: LaunchOrder, _ action: BuiltInAction, context: ActionContext) {
        let b = actionBehaviour(order, action)
        var result = b.result ?? action.body(context)
        var signal: Int32?
        var pid: Int32?
        if action.worker != nil {
            nextPID += 1
            pid = nextPID
            signal = b.crashSignal
        } else if b.crashSignal != nil {
            result = ActionResult(success: false, log: ["\(action.name) failed (a modelled crash; a body in process cannot crash alone)"])
        }
        actionRuns[order.runID] = ActionRun(order: order, instance: runtime?.instance ?? "", workerPID: pid,
                                            endsAt: clock + b.duration, result: result, whenExpired: b.whenExpired,
                                            ignoresExpiration: b.ignoresExpiration, signal: signal)
        let runID = order.runID
        context.attach { [weak self] signal in self?.signalAction(runID, signal) }
    }

    /// The runtime's expiration (SIGTERM to a worker, `isExpired` to a body) or kill (SIGKILL
    /// to a worker; a body runs on, abandoned).
    func signalAction(_ runID: Int64, _ signal: RunSignal) {
        guard var a = actionRuns[runID] else { return }
        switch signal {
        case .terminate:
            guard !a.ignoresExpiration else { return }
            a.endsAt = clock
            a.result = a.whenExpired
            a.signal = nil
        case .kill:
            guard a.workerPID != nil else { return }
            a.endsAt = clock
            a.signal = 9
        }
        actionRuns[runID] = a
    }

    /// Action ends due at `t`, by run id, reported as the libuv host reports them: a worker's
    /// log lines as its stdout (through the output rate limit), its results and its exit status
    /// (or its signal); a body's log lines and its completion. Only the runtime that started it
    /// hears of it; the runtime ignores an end it no longer waits for (killed, abandoned).
    func deliverActionEnds(at t: Instant) {
        guard actionRuns.values.contains(where: { $0.endsAt <= t }) else { return }
        for runID in actionRuns.keys.sorted() {
            guard frozenUntil == nil, let a = actionRuns[runID], a.endsAt <= t else { continue }
            actionRuns[runID] = nil
            guard let runtime, runtime.instance == a.instance else { continue }
            if a.workerPID != nil {
                if let signal = a.signal {
                    runtime.runEnded(runID, exit: .signaled(signal))
                } else {
                    runtime.runOutputLines(a.order, stream: "log", lines: a.result.log)
                    runtime.runEnded(runID, exit: .exited(a.result.success ? 0 : 1), results: a.result.results)
                }
            } else {
                for line in a.result.log { runtime.runOutput(a.order, stream: "log", line: line) }
                runtime.runEnded(runID, exit: .completed(success: a.result.success), results: a.result.results)
            }
        }
    }
}
