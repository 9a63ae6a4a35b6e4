/// How the runtime stops (issue 22, gathered here by issue 37): a failed commit, a lost lease
/// (a fence), the stop signals, and the stop that waits for the sweeps under way.
extension RuntimeMachine {
    // MARK: A failed commit, a fence

    /// The store refused the commit of an event whose effects were `failed`: stop. Runs that
    /// event launched exist only in memory (nothing was started or recorded): they end at once
    /// (`abandoned`), so the stop does not wait for them; then the shutdown. Appends the
    /// shutdown's effects to carry out, without its state changes (nothing more is saved).
    package mutating func storeFailed(_ reason: String, dropping failed: [SchedulerEffect], at now: Instant,
                                      into effects: inout [SchedulerEffect]) {
        effects.append(.log(.runtime(.storeFailed(reason: reason))))
        abandonAndShutDown(dropping: failed, at: now, into: &effects)
    }

    /// What `storeFailed` and `fenced` share: the failed event's launches end in memory
    /// (`abandoned`), then the shutdown, whose effects are appended without its state changes
    /// (nothing more is saved).
    private mutating func abandonAndShutDown(dropping failed: [SchedulerEffect], at now: Instant,
                                             into effects: inout [SchedulerEffect]) {
        var scratch: [SchedulerEffect] = []
        outputTails.removeAll()  // nothing more is committed
        for case let .launch(order) in failed {
            machines.handle(.runFinished(runID: order.runID, exit: .abandoned), at: now, into: &scratch)
        }
        scratch.removeAll()
        handleUnsaved(.shutdown, at: now, into: &effects)
    }

    /// `event` handled after the store failed: its effects appended without its state changes
    /// (nothing more is saved).
    private mutating func handleUnsaved(_ event: SchedulerEvent, at now: Instant, into effects: inout [SchedulerEffect]) {
        var scratch: [SchedulerEffect] = []
        machines.handle(event, at: now, into: &scratch)
        for effect in scratch {
            if case .persist = effect { continue }
            effects.append(effect)
        }
    }

    /// A launch reached after the store failed: its run was committed with an earlier event,
    /// but a commit since failed, so it does not start (on a node, its shard is fenced and
    /// another node may take it). It ends in memory as the failed event's own launches do
    /// (`abandoned`), with nothing saved.
    package mutating func launchAbandoned(_ order: LaunchOrder, at now: Instant, into effects: inout [SchedulerEffect]) {
        handleUnsaved(.runFinished(runID: order.runID, exit: .abandoned), at: now, into: &effects)
    }

    /// A shard's lease is gone (issue 24): a commit was refused by its fence (`ShardFenced`) or
    /// failed, or the node fenced the shard itself. Nothing of the failed event acts (its
    /// launches are ended in memory, as for `storeFailed`); the runtime stops leading: no more
    /// launches, every run in flight gets its expiration and then its kill AT ONCE (another node
    /// may take the shard once the lease expires in database time, so no grace can be waited
    /// for). Nothing more is committed: the engine keeps the reason as its store failure.
    /// Unlike `storeFailed`, refreshd does not stop: only this shard's runtime does.
    package mutating func fenced(_ reason: String, dropping failed: [SchedulerEffect], at now: Instant,
                                 into effects: inout [SchedulerEffect]) {
        effects.append(.log(.runtime(.shardFenced(reason: reason))))
        abandonAndShutDown(dropping: failed, at: now, into: &effects)
        for runID in machines.scheduler.activeRuns.map(\.runID).sorted() { effects.append(.kill(runID: runID)) }
    }

    // MARK: Sweeps and stopping

    /// The host sweeps a command run's leftovers before its end is handled.
    package mutating func sweepStarted(_ runID: Int64) { sweeping.insert(runID) }

    /// A sweep is done: true when a stop waited for it and for no other (the engine sends the
    /// shutdown now).
    package mutating func sweepEnded(_ runID: Int64) -> Bool {
        sweeping.remove(runID)
        guard var waiting = stopAfterSweeps else { return false }
        waiting.remove(runID)
        stopAfterSweeps = waiting.isEmpty ? nil : waiting
        return waiting.isEmpty
    }

    /// A graceful stop was asked: true to shut down now; false when it waits for the sweeps
    /// under way (a command that exited before the stop ends as it exited, not `interrupted`).
    package mutating func stopRequested() -> Bool {
        guard !sweeping.isEmpty else { return true }
        stopAfterSweeps = sweeping
        return false
    }

    /// A stop signal (SIGTERM, SIGINT: `name`) reached the host: the first stops gracefully;
    /// one that arrives while stopping kills every run now.
    package func stopSignal(_ name: String) -> StopSignalAction {
        if machines.scheduler.isStopping || stopAfterSweeps != nil {
            return .stopImmediately(reason: "received \(name) again")
        }
        return .stopGracefully(log: .runtime(.stopSignal(name: name)))
    }

    /// Stops without waiting for the graces: its log line (`reason`, and how many are killed),
    /// the shutdown (idempotent: the core stops launching and marks every run as stopped by it),
    /// then a `.kill` for every run in flight, in run order, so each ends `interrupted`.
    package mutating func stopImmediately(_ reason: String, at now: Instant, into effects: inout [SchedulerEffect]) {
        let start = effects.count
        machines.handle(.shutdown, at: now, into: &effects)
        let runs = machines.scheduler.activeRuns.map(\.runID).sorted()
        effects.insert(.log(.runtime(.killingNow(reason: reason, running: runs.count))), at: start)
        for runID in runs { effects.append(.kill(runID: runID)) }
    }
}
