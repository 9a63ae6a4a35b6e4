import Logging
import RefreshdCore

/// Carrying out an event's effects: its state changes committed in one transaction before
/// anything else of it is queued (commit before act), the store-failure stop, and the drain
/// that executes the outbox on the host's execution context, never recursively.
extension RefreshRuntime {
    /// Under `lock`: commits the event's state changes in one transaction, and only if that
    /// succeeded queues its other effects. Returns false when the commit failed: then nothing of
    /// the event is acted on, and the runtime stops (running work gets its expiration).
    func commit(_ effects: [SchedulerEffect]) -> Bool {
        if group != nil {
            // Inside `grouped`: kept for the group's one transaction.
            for effect in effects {
                if case let .persist(change) = effect { group!.changes.append(change) } else { group!.effects.append(effect) }
            }
            return true
        }
        // One pass: the other effects go to the outbox at once and are taken back if the commit
        // fails (rare), instead of walking (and copying) every effect twice.
        // Sorted into local arrays (swapped with the runtime's own, which keep their capacity):
        // an append to a property of a class is an exclusivity check each time.
        var changes: [StateChange] = []
        var outbox: [SchedulerEffect] = []
        swap(&changes, &self.changes)
        swap(&outbox, &self.outbox)
        changes.removeAll(keepingCapacity: true)
        let queued = outbox.count
        for effect in effects {
            if case let .persist(change) = effect { changes.append(change) } else { outbox.append(effect) }
        }
        var failure: (any Error)?
        if !changes.isEmpty, let store, storeFailure == nil {
            do {
                try store.apply(changes)
                transactions += 1
            } catch {
                outbox.removeSubrange(queued...)
                failure = error
            }
        }
        swap(&changes, &self.changes)
        swap(&outbox, &self.outbox)
        if let failure {
            failStore("\(failure)", dropping: effects)
            return false
        }
        return true
    }

    /// Under `lock`: the store refused a commit. Stop: no launch for that event nor after it.
    /// Runs the failed event launched exist only in the machines' memory (nothing was started
    /// or recorded): they are ended there at once, so the stop does not wait for them.
    func failStore(_ reason: String, dropping failed: [SchedulerEffect]) {
        storeFailure = reason
        if options.onFenced != nil {
            // A shard's runtime in a cluster: fence this shard only (its runs killed at once);
            // `onFenced` hears of it when the drain reports the fence's log line.
            machine.fenced(reason, dropping: failed, at: clock(), into: &outbox)
            return
        }
        // The machine's stop, its log line first, queued for the drain.
        machine.storeFailed(reason, dropping: failed, at: clock(), into: &outbox)
    }

    /// Gets queued effects executed: here on the execution context, or by waking it.
    func kick() { kick(host) }

    func kick(_ host: (any RuntimeHost)?) {
        guard let host else { return }
        if host.isOnExecutionContext {
            if !grouping { drain(on: host) }
        } else {
            host.scheduleDrain()
        }
    }

    /// Executes queued effects in order (execution context). Effects may feed new events; those
    /// are appended and run in the same drain, never recursively.
    package func drain() {
        guard let host else { return }
        drain(on: host)
    }

    func drain(on host: any RuntimeHost) {
        guard !draining else { return }
        draining = true
        // The batch takes the spare buffer and gives it back, so the outbox it swaps with keeps
        // a capacity: a fresh array here cost the next event's outbox an allocation.
        var batch: [SchedulerEffect] = []
        swap(&batch, &spareBatch)
        defer {
            swap(&batch, &spareBatch)
            draining = false
        }
        while true {
            lock.withLock {
                applyLiveBacklog()
                swap(&batch, &outbox)
            }
            if batch.isEmpty { return }
            for effect in batch { execute(effect, on: host) }
            batch.removeAll(keepingCapacity: true)
        }
    }

    func execute(_ effect: SchedulerEffect, on host: any RuntimeHost) {
        switch effect {
        case let .armTimer(at):
            host.armWakeUp(at: at)
        case .disarmTimer:
            host.armWakeUp(at: nil)
        case let .launch(order):
            launch(order, on: host)
        case let .expire(runID):
            switch lock.withLock({ executions[runID] }) {
            case .command: host.signal(runID: runID, .terminate)
            case let .task(task): task.deliverExpiration()
            case let .action(context): context.expire()
            case nil: break
            }
        case let .kill(runID):
            // The machine ended an in-process run with its kill (`RuntimeMachine.inProcessRuns`):
            // its task is abandoned, its worker killed, and its return later is ignored.
            switch lock.withLock({ executions[runID] }) {
            case .command:
                host.signal(runID: runID, .kill)
            case let .task(task):
                task.abandon()
                lock.withLock { _ = executions.removeValue(forKey: runID) }
            case let .action(context):
                context.kill()  // SIGKILL to its worker process, if it runs in one
                lock.withLock { _ = executions.removeValue(forKey: runID) }
            case nil:
                break
            }
        case let .watchConditions(on):
            host.watchConditions(on)
        case .readConditions:
            host.readConditions()
        case let .log(message):
            report(RuntimeObservation(message, at: host.now()))
        case let .publish(publication):
            switch RuntimeMachine.publishing(publication, in: options.sharedContainer) {
            case let .write(container): host.publish(publication, in: container)
            case let .fail(log): report(RuntimeObservation(log, at: host.now()))
            }
        case let .notify(notification):
            deliver(notification, on: host)
        case .persist, .ended:
            break  // committed in `commit`; consumed by `Machines`
        case .stopped:
            report(RuntimeObservation(.runtime(.stopped), at: host.now()))
            host.runtimeStopped()
        case let .killGroup(runID):
            host.killRunGroup(runID: runID)
        case let .closeResults(runID):
            let log = lock.withLock { machine.resultsGraceEnded(runID) }
            report(RuntimeObservation(log, at: host.now()))
            host.closeResults(runID: runID)
        case let .processEnded(runID, exit, results):
            runEnded(runID, exit: exit, results: results)
        }
    }

    /// Logs an observation and hands it to the observers.
    func report(_ observation: RuntimeObservation) {
        logger.log(level: observation.level, "\(observation.message)")
        let observers = observerLock.withLock { self.observers }
        for observer in observers { observer(observation) }
        if observation.kind == .fenced, let onFenced = options.onFenced { onFenced(observation.message) }
    }
}
