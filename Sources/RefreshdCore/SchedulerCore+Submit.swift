extension SchedulerCore {
    /// Submits a request, replacing any pending request with the same identifier.
    ///
    /// - Throws: `notPermitted` for an undeclared identifier, `tooManyPendingTaskRequests` when
    ///   the namespace is full, `unavailable` while stopping.
    package mutating func submit(_ request: TaskRequest, at now: Instant) throws(SchedulerError) -> [SchedulerEffect] {
        var effects: [SchedulerEffect] = []
        try submit(request, at: now, into: &effects)
        return effects
    }

    /// Submits, appending the effects to `effects`; on a throw nothing is appended.
    package mutating func submit(_ request: TaskRequest, at now: Instant,
                                into effects: inout [SchedulerEffect]) throws(SchedulerError) {
        guard !isStopping else { throw .unavailable }
        guard let definition = definitions[request.identifier] else {
            throw .notPermitted(identifier: request.identifier)
        }
        let pending = makePending(definition, earliest: request.earliestBeginDate ?? now, at: now,
                                  origin: .submitted,
                                  power: request.requiresExternalPower,
                                  network: request.requiresNetworkConnectivity)
        try enqueue(pending, into: &effects)
        finishEvent(into: &effects)
    }

    /// Submits a declared identifier's first request: the next slot of its schedule (plus the
    /// job's jitter for that slot), or now for a job that is not on a calendar. Nothing is submitted when the schedule has no next slot.
    package mutating func submitFirst(_ identifier: String, at now: Instant,
                                     into effects: inout [SchedulerEffect]) throws(SchedulerError) {
        guard let definition = definitions[identifier] else { throw .notPermitted(identifier: identifier) }
        var earliest = now
        if let schedule = definition.schedule {
            guard let slot = schedule.next(after: now) else { return }
            // Jittered like every later slot (RandomizedDelaySec delays the first elapse too), so
            // a fleet started together does not fetch together at its first slot either.
            earliest = slot + jitter(definition, slot: slot)
        }
        try submit(TaskRequest(identifier: identifier, kind: definition.kind, earliestBeginDate: earliest),
                   at: now, into: &effects)
    }

    /// A pending request for a declared identifier; conditions apply to processing only.
    func makePending(_ definition: TaskDefinition, earliest: Instant, at now: Instant,
                     origin: PendingRequest.Origin, power: Bool? = nil, network: Bool? = nil) -> PendingRequest {
        let processing = definition.kind == .processing
        return PendingRequest(
            identifier: definition.identifier, namespace: definition.namespace, kind: definition.kind,
            earliest: earliest, submitted: now, sequence: nextSequence,
            requiresExternalPower: processing && (power ?? false || definition.requiresExternalPower),
            requiresNetworkConnectivity: processing && (network ?? false || definition.requiresNetworkConnectivity),
            origin: origin)
    }

    /// Checks the namespace limit, stores the request and reports it.
    ///
    /// `slot`, when the caller knows it (a launch's resubmit), is the identifier's queue slot:
    /// then nothing is looked up by name (an instance's name is not even built).
    mutating func enqueue(_ request: PendingRequest, slot known: Int32? = nil,
                          into effects: inout [SchedulerEffect]) throws(SchedulerError) {
        var request = request
        let slot = known ?? queue.slots.slot(of: request.identifier)
        let existing = slot.flatMap { queue.record(at: $0) }
        let sameSlot = existing.map {
            queue.namespaceName(Int($0.namespace)) == request.namespace
                && ($0.flags & PendingQueue.Record.processing != 0) == (request.kind == .processing)
        } ?? false
        let limit = configuration.limit(for: request.kind)
        if !sameSlot, !isInstance(request.identifier, queueSlot: known),
           queue.pendingCount(namespace: request.namespace, kind: request.kind) >= limit {
            throw .tooManyPendingTaskRequests(identifier: request.identifier, kind: request.kind,
                                              namespace: request.namespace, limit: limit)
        }
        request.sequence = nextSequence
        nextSequence += 1
        if let slot {
            queue.insert(request, at: slot, wake: wakeKey(request, queueSlot: slot))
        } else {
            queue.insert(request, wake: wakeKey(request))
        }
        if !waitingOnConditions.isEmpty { waitingOnConditions.removeValue(forKey: request.identifier) }
        if !blockedByRun.isEmpty { blockedByRun.removeValue(forKey: request.identifier) }
        if !held.isEmpty { held.removeValue(forKey: request.identifier) }
        if !parked.isEmpty { parked.removeValue(forKey: request.identifier) }
        if let slot { request.slot = hint(queueSlot: slot) }
        persist(.savePending(request), into: &effects)
        logRoutine(.submitted(request, replaced: existing != nil), into: &effects)
    }

    /// Like `enqueue`, but a refusal is logged instead of thrown (resubmits and retries).
    mutating func enqueueLogged(_ request: PendingRequest, slot: Int32? = nil, into effects: inout [SchedulerEffect]) {
        do {
            try enqueue(request, slot: slot, into: &effects)
        } catch {
            effects.append(.log(.rejected(identifier: request.identifier, error)))
        }
    }

    /// Removes a pending request (a run in flight is not affected).
    mutating func cancel(_ identifier: String, into effects: inout [SchedulerEffect]) {
        guard let removed = removePending(identifier) else { return }
        persist(.deletePending(identifier: removed.identifier), into: &effects)
        effects.append(.log(.cancelled(identifier: identifier)))
    }

    @discardableResult
    mutating func removePending(_ identifier: String) -> PendingRequest? {
        guard let removed = queue.remove(identifier) else { return nil }
        if !waitingOnConditions.isEmpty { waitingOnConditions.removeValue(forKey: identifier) }
        if !blockedByRun.isEmpty { blockedByRun.removeValue(forKey: identifier) }
        if !held.isEmpty { held.removeValue(forKey: identifier) }
        if !parked.isEmpty { parked.removeValue(forKey: identifier) }
        return removed
    }
}
