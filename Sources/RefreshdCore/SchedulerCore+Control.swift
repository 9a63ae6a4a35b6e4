/// An operator's orders, as on iOS's debugger commands `_simulateLaunchForTaskWithIdentifier`
/// and `_simulateExpirationForTaskWithIdentifier`: pure rules like every other event.
extension SchedulerCore {
    /// Launches the identifier's pending request now, ignoring its earliest begin date, its
    /// conditions and any admission hold. One run per identifier and the concurrency cap still
    /// hold (a refusal says which); the run, its resubmission and counters are those of any launch.
    package mutating func launchNow(_ identifier: String, at now: Instant,
                                   into effects: inout [SchedulerEffect]) throws(ControlRefusal) {
        guard !isStopping else { throw .stopping }
        guard definitions[identifier] != nil else { throw undeclared(identifier) }
        if let runID = runs.run(for: identifier) { throw .runInFlight(identifier: identifier, runID: runID) }
        if let pause = pausedBy(identifier) { throw .paused(identifier: identifier, by: pause.identifier, since: pause.since) }
        guard let request = queue[identifier], let slot = queue.slots[identifier] else {
            throw .notPending(identifier: identifier)
        }
        guard active.count < configuration.maxConcurrentRuns else {
            throw .atCapacity(running: active.count, limit: configuration.maxConcurrentRuns)
        }
        launch(request, slot: slot, at: now, into: &effects)
        recordOrder(.launchNow(identifier), at: now, into: &effects)
        finishEvent(into: &effects)
    }

    /// Delivers the expiration of the identifier's run in flight now, as if its allowance had
    /// run out: the allowance ends now (the run's deadline moves to `now`), the kill follows
    /// after the job's grace, and the run ends `expired`.
    package mutating func expireNow(_ identifier: String, at now: Instant,
                                   into effects: inout [SchedulerEffect]) throws(ControlRefusal) {
        guard let runID = runs.run(for: identifier), var run = active[runID] else {
            throw .notRunning(identifier: identifier)
        }
        guard run.phase == .running else { throw .alreadyExpiring(identifier: identifier, runID: runID) }
        if run.order.deadline > now { run.order.deadline = now }
        active[runID] = run
        expireOverdue(at: now, into: &effects)
        recordOrder(.expireNow(identifier), at: now, into: &effects)
        finishEvent(into: &effects)
    }

    /// An operator's submit (`refreshd ctl submit`, `RuntimeMachine.operatorRequest`): a submit
    /// like any, and recorded as the operator's order for `simulate --replay`.
    package mutating func submit(ordered request: TaskRequest, at now: Instant,
                                 into effects: inout [SchedulerEffect]) throws(SchedulerError) {
        try submit(request, at: now, into: &effects)
        recordOrder(.submit(request.identifier, earliest: request.earliestBeginDate ?? now), at: now, into: &effects)
    }

    /// An order taken, in its own transaction (`WorldEvent`): the replay gives it back.
    private func recordOrder(_ order: OperatorOrder, at now: Instant, into effects: inout [SchedulerEffect]) {
        guard configuration.emitsStateChanges else { return }
        effects.append(.persist(.putRecord(WorldEvent(at: now, what: .order(order)).record)))
    }
}

extension SchedulerCore {
    /// Why an order naming an undeclared identifier is refused: a template's identifier says
    /// that its instances run (`template[key]`), any other that no job has that name.
    package func undeclared(_ identifier: String) -> ControlRefusal {
        isTemplate(identifier) ? .template(identifier: identifier) : .notDeclared(identifier: identifier)
    }
}
