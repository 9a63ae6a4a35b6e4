extension SchedulerCore {
    /// The core's state as a plain value for observers: see `SchedulerSnapshot`.
    ///
    /// Cost is linear in pending requests, heap entries and runs; meant for simulators, tests and
    /// status, not the hot path.
    package func snapshot() -> SchedulerSnapshot { snapshot(quietInstances: true) }

    /// The snapshot, without the pending requests of templates' instances that are neither
    /// failing nor paused unless `quietInstances` (and except those of `also`): what the
    /// dashboard gathers on the loop, where a million instances' requests, copied and sorted,
    /// took seconds; their counts are the store's (`InstanceCounts`). Linear in the requests
    /// kept, plus one test a slot.
    package func snapshot(quietInstances: Bool, also: [String] = []) -> SchedulerSnapshot {
        let ids = queue.identifiers
        var kept = Set<Int32>()
        if !quietInstances {
            for id in Array(failureStreaks.storage.keys) + Array(paused.keys) + also {
                if let slot = ids.slot(of: id) { kept.insert(slot) }
            }
        }
        let keep: (Int32) -> Bool = quietInstances || ids.holdsNoInstanceNames
            ? { _ in true } : { !ids.isInstance($0) || kept.contains($0) }
        var heapPlace: [Int32: PendingQueue.Entry] = [:]
        // Kept slots first: a million instances' entries are neither copied nor tested for life.
        for entry in queue.heapEntries where keep(entry.slot) && heapPlace[entry.slot] == nil && queue.isLive(entry) {
            heapPlace[entry.slot] = entry
        }
        let pending = queue.sorted(keeping: keep).map { p -> SchedulerSnapshot.Pending in
            let slot = queue.slots[p.identifier]
            var place: SchedulerSnapshot.Pending.Place?
            var entry: PendingQueue.Entry?
            if let slot, let e = heapPlace[slot] {
                (place, entry) = (.queued, e)
            } else if let e = waitingOnConditions[p.identifier], queue.isLive(e) {
                (place, entry) = (.waitingOnConditions, e)
            } else if let e = blockedByRun[p.identifier], queue.isLive(e) {
                (place, entry) = (.blockedByRun, e)
            } else if let h = held[p.identifier], queue.isLive(h.entry) {
                (place, entry) = (.held, h.entry)
            } else if let e = parked[p.identifier], queue.isLive(e) {
                (place, entry) = (.paused, e)
            }
            return SchedulerSnapshot.Pending(
                identifier: p.identifier, namespace: p.namespace, kind: p.kind, earliest: p.earliest,
                submitted: p.submitted, sequence: p.sequence, origin: p.origin,
                requiresExternalPower: p.requiresExternalPower,
                requiresNetworkConnectivity: p.requiresNetworkConnectivity,
                wake: entry.map { Instant(milliseconds: $0.due) }, place: place,
                heldUntil: place == .held ? held[p.identifier]?.until : nil)
        }
        let runs = active.values.sorted { $0.order.runID < $1.order.runID }.map { run in
            let phase: SchedulerSnapshot.Run.Phase = switch run.phase {
            case .running: .running
            case let .expiring(killAt): .expiring(killAt: killAt)
            case .killed: .killed
            }
            return SchedulerSnapshot.Run(runID: run.order.runID, identifier: run.order.identifier,
                                         kind: run.order.kind, started: run.order.started,
                                         deadline: run.order.deadline, attempt: run.order.attempt,
                                         phase: phase, stoppedByShutdown: run.stoppedByShutdown)
        }
        let streaks = failureStreaks.sorted { $0.key < $1.key }
            .map { SchedulerSnapshot.FailureStreak(identifier: $0.key, count: $0.value) }
        var snapshot = SchedulerSnapshot(pending: pending, runs: runs, failureStreaks: streaks, nextWakeUp: armedAt,
                                         isStopping: isStopping, stopped: stoppedReported, conditions: conditions,
                                         watchingConditions: watchingConditions, nextRunID: nextRunID,
                                         nextSequence: nextSequence)
        if !paused.isEmpty {
            snapshot.paused = paused.sorted { $0.key < $1.key }.map { SchedulerSnapshot.Paused(identifier: $0.key, since: $0.value) }
        }
        let declared = templates
        if !declared.isEmpty {
            snapshot.templates = declared.map {
                SchedulerSnapshot.Template(identifier: $0.identifier, parameters: $0.parameters, instances: $0.instances)
            }
        }
        return snapshot
    }
}
