extension SchedulerCore {
    /// Launches due requests in (earliest, sequence) order while capacity lasts.
    ///
    /// A due request whose identifier is already running waits for that run; one that needs
    /// conditions waits for a fresh reading from the shell (`freshConditions`), so a launch never
    /// relies on a stale power or network state.
    mutating func dispatch(at now: Instant, freshConditions: Bool, into effects: inout [SchedulerEffect]) {
        guard !isStopping else { return }
        while active.count < configuration.maxConcurrentRuns, let entry = queue.popDue(at: now) {
            guard let request = queue.request(at: entry.slot) else { continue }
            let identifier = request.identifier
            if activeByIdentifier[identifier] != nil {
                blockedByRun[identifier] = entry
                continue
            }
            if !paused.isEmpty, pausedBy(identifier, slot: entry.slot) != nil {
                parked[identifier] = entry
                continue
            }
            let needsConditions = request.requiresExternalPower || request.requiresNetworkConnectivity
            if needsConditions {
                let allowed = conditions.allow(power: request.requiresExternalPower,
                                               network: request.requiresNetworkConnectivity)
                if !(freshConditions && allowed) {
                    if freshConditions {
                        effects.append(.log(.waitingForConditions(
                            identifier: identifier, needsPower: request.requiresExternalPower,
                            needsNetwork: request.requiresNetworkConnectivity)))
                    }
                    waitingOnConditions[identifier] = entry
                    continue
                }
            }
            if let policy = admissionPolicy, case let .hold(until) = policy.admission(for: request, at: now),
               until > now {
                held[identifier] = (entry, until)
                logRoutine(.held(identifier: identifier, until: until), into: &effects)
                continue
            }
            launch(request, slot: entry.slot, at: now, into: &effects)
        }
    }

    /// Puts held entries whose time has come back in the queue.
    mutating func releaseHeld(at now: Instant) {
        guard !held.isEmpty else { return }
        for (identifier, h) in held where h.until <= now {
            held[identifier] = nil
            queue.reinsert(h.entry)
        }
    }

    /// Starts a run: record it, re-schedule first, then hand it to the shell.
    mutating func launch(_ request: PendingRequest, slot: Int32, at now: Instant, into effects: inout [SchedulerEffect]) {
        queue.removeRecord(slot: slot)
        if !waitingOnConditions.isEmpty { waitingOnConditions.removeValue(forKey: request.identifier) }
        if !blockedByRun.isEmpty { blockedByRun.removeValue(forKey: request.identifier) }
        if !held.isEmpty { held.removeValue(forKey: request.identifier) }
        if !parked.isEmpty { parked.removeValue(forKey: request.identifier) }
        let hint = hint(queueSlot: slot)
        persist(.deletePending(identifier: request.identifier, slot: hint), into: &effects)
        let definition = definition(queueSlot: slot, identifier: request.identifier)
        let allowance = definition?.allowance ?? request.kind.defaultAllowance
        let attempt = failureStreaks.isEmpty ? 1 : failureStreaks[request.identifier, default: 0] + 1
        var order = LaunchOrder(runID: nextRunID, identifier: request.identifier, kind: request.kind,
                                started: now, deadline: now + allowance, attempt: attempt)
        order.slot = hint
        nextRunID += 1
        if configuration.emitsStateChanges {
            var record = RunRecord(runID: order.runID, identifier: order.identifier, kind: order.kind,
                                   submitted: request.submitted, earliest: request.earliest,
                                   started: now, deadline: order.deadline, attempt: attempt)
            record.slot = hint
            effects.append(.persist(.runStarted(record)))
        }
        if let definition, let next = nextEarliest(definition, after: request, launchedAt: now) {
            enqueueLogged(makePending(definition, earliest: next, at: now, origin: .resubmit), slot: slot, into: &effects)
        }
        runs.start(order)
        tally(order.identifier, slot: hint, at: now, into: &effects) { $0.launches += 1 }
        logRoutine(.launched(order, lateness: now.duration(since: request.earliest)), into: &effects)
        effects.append(.launch(order))
    }

    /// The slot hint of a queue slot: the definitions' slot when the queue shares their table
    /// (then the two agree), none otherwise.
    func hint(queueSlot slot: Int32) -> SlotHint {
        queue.ids.sharesNames(with: definitions.table) ? SlotHint(slot) : .none
    }

    /// The definition of the identifier at a queue slot: read by slot, hashing nothing, when the
    /// queue shares the definitions' table (then their slots agree); by name otherwise.
    func definition(queueSlot slot: Int32, identifier: String) -> TaskDefinition? {
        queue.ids.sharesNames(with: definitions.table) ? definitions.definition(at: slot) : definitions[identifier]
    }

    /// Delivers expirations whose allowance is over and kills runs whose grace is over.
    mutating func expireOverdue(at now: Instant, into effects: inout [SchedulerEffect]) {
        runs.expireOverdue(at: now, grace: Self.grace(in: definitions), into: &effects)
    }

    func graceFor(_ identifier: String) -> Duration { Self.grace(in: definitions)(identifier) }

    /// A job's grace (5 s for an identifier no longer declared), for the run lifecycle.
    static func grace(in definitions: TaskDefinitions) -> (String) -> Duration {
        { definitions[$0]?.grace ?? .seconds(5) }
    }
}
