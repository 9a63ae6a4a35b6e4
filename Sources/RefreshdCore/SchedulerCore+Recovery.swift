extension SchedulerCore {
    /// What the store held when refreshd started.
    package struct RestoredState: Sendable, Hashable {
        package var pending: [PendingRequest]
        /// Runs with a start and no end: in flight when refreshd died.
        package var unfinishedRuns: [RunRecord]
        package var failureStreaks: [String: Int]
        package var nextRunID: Int64
        /// The `earliest:` text each job's first request was last made from.
        package var seedSpecs: [String: String]
        /// The counters of the most recent day that has any (the core goes on counting them if
        /// that day is today).
        package var counters: [DailyCounter]
        /// The records of the machines beside the core (timelines, activities), by table then
        /// key (UTF-8 byte order); the core itself ignores them.
        package var records: [MachineRecord]
        /// The instances of templates (issue 23), declared before the pending requests are
        /// restored, so an instance's request, streak and runs come back with it.
        package var instances: [InstanceRecord] = []

        package init(pending: [PendingRequest] = [], unfinishedRuns: [RunRecord] = [],
                    failureStreaks: [String: Int] = [:], nextRunID: Int64 = 1,
                    seedSpecs: [String: String] = [:], counters: [DailyCounter] = [],
                    records: [MachineRecord] = [], instances: [InstanceRecord] = []) {
            self.instances = instances
            self.pending = pending
            self.unfinishedRuns = unfinishedRuns
            self.failureStreaks = failureStreaks
            self.nextRunID = nextRunID
            self.seedSpecs = seedSpecs
            self.counters = counters
            self.records = records
        }
    }

    /// Loads durable state at start.
    ///
    /// Pending requests come back as they were (one whose earliest begin passed while refreshd
    /// was down is simply due: it runs once, soon). Requests for identifiers no longer declared
    /// are dropped. Unfinished runs are recorded `interrupted` and retried by their policy.
    package mutating func restore(_ state: RestoredState, at now: Instant) -> [SchedulerEffect] {
        var effects: [SchedulerEffect] = []
        restore(state, at: now, into: &effects)
        return effects
    }

    mutating func restore(_ state: RestoredState, at now: Instant, into effects: inout [SchedulerEffect]) {
        nextRunID = max(nextRunID, state.nextRunID)
        if let first = state.counters.first, let day = ISO8601.dayNumber(first.day) {
            counterDay = day
            counters = TodayCounters(state.counters.filter { $0.day == first.day })
        }
        if !state.instances.isEmpty { reserveInstances(state.instances.count) }
        let unique = definitions.table.holdsNoInstanceNames
        for record in state.instances { restoreInstance(record, new: unique) }
        failureStreaks = TrackedTable(state.failureStreaks.filter { $0.value > 0 })
        restorePauses(state.records)
        for p in state.pending {
            nextSequence = max(nextSequence, p.sequence + 1)
        }
        for p in state.pending.sorted(by: { $0.sequence < $1.sequence }) {
            if restoreBySlot(p) { continue }
            guard let definition = definitions[p.identifier] else {
                persist(.deletePending(identifier: p.identifier), into: &effects)
                effects.append(.log(.droppedUndeclared(identifier: p.identifier)))
                continue
            }
            var request = makePending(definition, earliest: p.earliest, at: p.submitted, origin: p.origin,
                                      power: p.requiresExternalPower, network: p.requiresNetworkConnectivity)
            request.sequence = p.sequence
            queue.insert(request, wake: wakeKey(request))
        }
        applyMissedPolicies(since: nil, at: now, into: &effects)
        for run in state.unfinishedRuns.sorted(by: { $0.runID < $1.runID }) {
            nextRunID = max(nextRunID, run.runID < Int64.max ? run.runID + 1 : Int64.max)
            persist(.runEnded(runID: run.runID, identifier: run.identifier, ended: now,
                              outcome: .interrupted, exitStatus: nil, signal: nil), into: &effects)
            tally(run.identifier, at: now, into: &effects) { $0.interrupted += 1 }
            effects.append(.log(.recoveredInterrupted(runID: run.runID, identifier: run.identifier)))
            if configuration.retriesInterruptedRuns {
                recordOutcome(.interrupted, identifier: run.identifier, at: now, into: &effects)
            }
            if configuration.emitsRunEnds {
                effects.append(.ended(runID: run.runID, identifier: run.identifier, outcome: .interrupted, results: []))
            }
        }
        finishEvent(into: &effects)
    }

    /// Restores a pending request of a declared identifier by its slot, as the loop below does
    /// by name (the same request: the definition's namespace, kind and conditions), without a
    /// copy of its definition or another hash of its name: a million instances' requests come
    /// back in one pass. False when it must go the general way (the queue keeps its own table,
    /// the identifier is not declared, or its slot already holds a request).
    private mutating func restoreBySlot(_ p: PendingRequest) -> Bool {
        guard queue.ids.sharesNames(with: definitions.table), let slot = definitions.table.slot(of: p.identifier),
              queue.record(at: slot) == nil else { return false }
        let r = definitions.rule(at: slot)
        guard r >= 0 else { return false }
        let processing = definitions.rules[Int(r)].kind == .processing
        queue.insert(slot: slot, namespace: definitions.rules[Int(r)].namespace, kind: definitions.rules[Int(r)].kind,
                     earliest: p.earliest, submitted: p.submitted, sequence: p.sequence,
                     power: processing && (p.requiresExternalPower || definitions.rules[Int(r)].requiresExternalPower),
                     network: processing && (p.requiresNetworkConnectivity || definitions.rules[Int(r)].requiresNetworkConnectivity),
                     origin: p.origin, wake: (p.earliest + max(.zero, definitions.rules[Int(r)].accuracy)).milliseconds)
        return true
    }
}
