extension SchedulerCore {
    /// Records the end of a run, applies the retry policy and launches what the run held back.
    mutating func finish(runID: Int64, exit: RunExit, results: [String] = [], usage: RunUsage = .none,
                         at now: Instant, into effects: inout [SchedulerEffect]) {
        guard let run = runs.end(runID) else { return }
        let identifier = run.order.identifier
        let outcome = RunLifecycle.outcome(of: run, exit: exit, usage: usage)
        let reason = RunLifecycle.reason(outcome: outcome, usage: usage)
        let (status, signal): (Int32?, Int32?) = switch exit {
        case let .exited(code): (code, nil)
        case let .signaled(sig): (nil, sig)
        default: (nil, nil)
        }
        let hint = run.order.slot
        persist(.runEnded(runID: runID, identifier: identifier, ended: now, outcome: outcome, exitStatus: status,
                          signal: signal, slot: hint, reason: reason, usage: usage), into: &effects)
        tally(identifier, slot: hint, at: now, into: &effects) { $0.count(outcome) }
        logRoutine(.finished(runID: runID, identifier: identifier, outcome: outcome, exit: exit,
                             duration: now.duration(since: run.order.started), reason: reason, usage: usage),
                   into: &effects)
        recordOutcome(outcome, identifier: identifier, slot: hint, at: now, into: &effects)
        if configuration.emitsRunEnds {
            effects.append(.ended(runID: runID, identifier: identifier, outcome: outcome, results: results))
        }
        if !blockedByRun.isEmpty, let entry = blockedByRun.removeValue(forKey: identifier) { queue.reinsert(entry) }
        dispatch(at: now, freshConditions: false, into: &effects)
    }

    /// Updates the failure streak and, after a failure, schedules the retry.
    ///
    /// A retry replaces the pending request only when it is sooner, so a retry never pushes back
    /// the job's regular next request. An interrupted run (refreshd stopped or died during it)
    /// is the same attempt requested again right away, with or without a retry policy: the
    /// interruption was refreshd's doing, not the job's, so it neither counts in the failure
    /// streak (no backoff, no retry used up) nor ends it (issue 36).
    mutating func recordOutcome(_ outcome: Outcome, identifier: String, slot hint: SlotHint = .none,
                                at now: Instant, into effects: inout [SchedulerEffect]) {
        if outcome == .success, failureStreaks.isEmpty { return }
        let streak = failureStreaks[identifier, default: 0]
        if !outcome.isTheJobsFailure && outcome != .success {
            // Interrupted: not the job's doing, so requested again at once, streak untouched.
            guard let definition = definitions[identifier] else { return }
            if let existing = queue[identifier], existing.earliest <= now { return }
            enqueueLogged(makePending(definition, earliest: now, at: now, origin: .retry), into: &effects)
            effects.append(.log(.retryScheduled(identifier: identifier, attempt: streak + 1, at: now)))
            return
        }
        if outcome == .success {
            if streak != 0 {
                failureStreaks[identifier] = nil
                persist(.failureStreak(identifier: identifier, count: 0, slot: hint), into: &effects)
            }
            return
        }
        failureStreaks[identifier] = streak + 1
        persist(.failureStreak(identifier: identifier, count: streak + 1, slot: hint), into: &effects)
        guard let definition = definitions[identifier] else { return }
        let retryAt: Instant
        if let retry = definition.retry {
            guard let delay = retry.delay(forAttempt: streak + 1) else {
                effects.append(.log(.retriesExhausted(identifier: identifier, attempts: streak + 1)))
                return
            }
            retryAt = now + delay
        } else {
            return
        }
        if let existing = queue[identifier], existing.earliest <= retryAt { return }
        enqueueLogged(makePending(definition, earliest: retryAt, at: now, origin: .retry), into: &effects)
        effects.append(.log(.retryScheduled(identifier: identifier, attempt: streak + 2, at: retryAt)))
    }

    /// Stops launching; running work gets its expiration now and is killed after its grace.
    mutating func shutdown(at now: Instant, into effects: inout [SchedulerEffect]) {
        guard !isStopping else { return }
        isStopping = true
        effects.append(.log(.stopping(running: active.count)))
        runs.expireAll(at: now, grace: Self.grace(in: definitions), into: &effects)
    }
}
