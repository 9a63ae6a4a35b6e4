extension SchedulerCore {
    /// The core's state as a plain value for observers: see `SchedulerSnapshot`.
    ///
    /// Cost is linear in pending requests, heap entries and runs; meant for simulators, tests and
    /// status, not the hot path.
    package func snapshot() -> SchedulerSnapshot { snapshot(quietInstances: true) }

    /// The snapshot, without the pending requests of templates' instances that are neither
    /// failing nor paused unless `quietInstances` (and except those of `also`): what the
    /// dashboard gathers on the loop, where a million instances' requests, copied and sorted,
    /// took seconds; their counts are the store's (`InstanceCounts`). Without them it costs what
    /// it keeps (`keptPending`), not the instances.
    package func snapshot(quietInstances: Bool, also: [String] = []) -> SchedulerSnapshot {
        let pending = quietInstances || queue.identifiers.holdsNoInstanceNames ? allPending() : keptPending(also: also)
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

    /// Every pending request, where it waits and its wake-up, in due order: linear in the
    /// requests and the heap's entries.
    private func allPending() -> [SchedulerSnapshot.Pending] {
        var heapPlace: [Int32: PendingQueue.Entry] = [:]
        queue.forEachHeapEntry { entry in
            if heapPlace[entry.slot] == nil, queue.isLive(entry) { heapPlace[entry.slot] = entry }
        }
        return queue.sorted().map { p -> SchedulerSnapshot.Pending in
            var place: SchedulerSnapshot.Pending.Place?
            var entry: PendingQueue.Entry?
            if let slot = queue.slots[p.identifier], let e = heapPlace[slot] {
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
            return snapshotPending(p, wake: entry.map { Instant(milliseconds: $0.due) }, place: place)
        }
    }

    /// The pending requests of plain identifiers and of the instances that fail, are paused or
    /// are in `also`, as `allPending` shows them: the plain ones found through the identifier
    /// table's index of plain names, the instances by name, none of a million quiet instances'
    /// slots or heap entries looked at. A request is in exactly one place between events
    /// (`pending-unplaced`, `pending-in-several-places`): so one in no side table is in the heap,
    /// and its wake-up, the same wherever its entry is, is its record's (`wake-unrecorded`).
    private func keptPending(also: [String]) -> [SchedulerSnapshot.Pending] {
        let ids = queue.identifiers
        var slots: [Int32] = []
        ids.forEachPlainSlot { if queue.record(at: $0) != nil { slots.append($0) } }
        var instances = Set<Int32>()
        for id in Array(failureStreaks.storage.keys) + Array(paused.keys) + also {
            guard let slot = ids.slot(of: id), ids.isInstance(slot), queue.record(at: slot) != nil,
                  instances.insert(slot).inserted else { continue }
            slots.append(slot)
        }
        let requests = slots.compactMap { slot in queue.request(at: slot).map { (slot, $0) } }.sorted {
            $0.1.earliest != $1.1.earliest ? $0.1.earliest < $1.1.earliest : $0.1.sequence < $1.1.sequence
        }
        return requests.map { slot, p -> SchedulerSnapshot.Pending in
            let place: SchedulerSnapshot.Pending.Place = if waitingOnConditions[p.identifier].map(queue.isLive) == true {
                .waitingOnConditions
            } else if blockedByRun[p.identifier].map(queue.isLive) == true {
                .blockedByRun
            } else if held[p.identifier].map({ queue.isLive($0.entry) }) == true {
                .held
            } else if parked[p.identifier].map(queue.isLive) == true {
                .paused
            } else {
                .queued
            }
            return snapshotPending(p, wake: queue.wake(at: slot).map { Instant(milliseconds: $0) }, place: place)
        }
    }

    /// A pending request as a snapshot shows it.
    private func snapshotPending(_ p: PendingRequest, wake: Instant?,
                                 place: SchedulerSnapshot.Pending.Place?) -> SchedulerSnapshot.Pending {
        SchedulerSnapshot.Pending(
            identifier: p.identifier, namespace: p.namespace, kind: p.kind, earliest: p.earliest,
            submitted: p.submitted, sequence: p.sequence, origin: p.origin,
            requiresExternalPower: p.requiresExternalPower,
            requiresNetworkConnectivity: p.requiresNetworkConnectivity,
            wake: wake, place: place, heldUntil: place == .held ? held[p.identifier]?.until : nil)
    }
}
