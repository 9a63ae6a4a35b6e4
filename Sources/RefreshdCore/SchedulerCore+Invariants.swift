extension SchedulerCore {
    /// Checks the rules the core's state keeps between events; empty when all hold.
    ///
    /// Meant to run after every step of a simulation or test (it is linear in the state, not
    /// cheap enough for the hot path). See `InvariantViolation.Invariant` for the rules.
    package func checkInvariants() -> [InvariantViolation] {
        var violations: [InvariantViolation] = []
        checkPendingPlacement(into: &violations)
        checkPendingCounts(into: &violations)
        checkRuns(into: &violations)
        checkTimerAndWatch(into: &violations)
        return violations
    }

    /// `checkInvariants()` plus what must hold right after `event` was handled at `now`:
    ///
    /// - after `timerFired`: no run is running at or past its deadline or expiring past its kill
    ///   instant (a kill due exactly now may wait for the immediate next wake-up: with zero grace,
    ///   expiration and kill are two wake-ups at one instant),
    ///   and no request is held by the admission policy past the instant it named;
    /// - after `timerFired`, `clockChanged`, `conditionsChanged` and `runFinished` (the events that
    ///   dispatch), when the core is not stopping and a run slot is free: the heap holds nothing
    ///   the dispatch would have launched at `now`. "Would have launched" is precisely what
    ///   dispatch pops: a live entry whose wake-up (earliest + accuracy) is at or before `now`, or
    ///   the first live entry if its earliest begin date is. Requests waiting on conditions or
    ///   blocked by a run are out of the heap and not counted; a later entry whose earliest
    ///   begin date has passed, behind a first entry that is not due, waits for that entry's
    ///   wake-up (at most its accuracy window) and is not counted either;
    /// - after `conditionsChanged` (a fresh reading), with a run slot free and not stopping: no
    ///   request waits on conditions that the reading allows;
    /// - after `runFinished`: the run is not in flight.
    ///
    /// Pass `runFinished` only for a run that was in flight: for an unknown run id the core does
    /// nothing (no dispatch), so use `checkInvariants()` then.
    package func checkInvariants(after event: SchedulerEvent, at now: Instant) -> [InvariantViolation] {
        var violations = checkInvariants()
        switch event {
        case .timerFired:
            checkNoOverdueRun(at: now, into: &violations)
            checkNothingDueLeft(at: now, into: &violations)
            checkNoHeldPastRelease(at: now, into: &violations)
        case .clockChanged:
            checkNothingDueLeft(at: now, into: &violations)
        case .conditionsChanged:
            checkNothingDueLeft(at: now, into: &violations)
            checkWaitingDisallowed(into: &violations)
        case let .runFinished(runID, _, _, _):
            if let run = active[runID] {
                violations.append(.init(.finishedRunStillActive, identifier: run.order.identifier, runID: runID,
                                        "run is still in flight after runFinished"))
            }
            checkNothingDueLeft(at: now, into: &violations)
        default:
            break
        }
        return violations
    }

    // MARK: Pending requests

    private func checkPendingPlacement(into violations: inout [InvariantViolation]) {
        checkSideTables(into: &violations)
        // Live heap entries per slot, counted in a buffer on the stack (no array per step).
        withUnsafeTemporaryAllocation(of: Int.self, capacity: max(1, queue.slotCount)) { liveInHeap in
            liveInHeap.initialize(repeating: 0)
            queue.forEachHeapEntry { entry in
                if queue.isLive(entry) { liveInHeap[Int(entry.slot)] += 1 }
            }
            checkSlots(liveInHeap: UnsafeBufferPointer(liveInHeap), into: &violations)
        }

        queue.forEachHeapEntry { entry in
            checkWake(entry, into: &violations)
            if entry.sequence >= nextSequence {
                violations.append(.init(.sequenceInvalid, identifier: queue.identifier(of: entry),
                                        "heap entry sequence \(entry.sequence) is not below nextSequence \(nextSequence)"))
            }
        }
        for entry in waitingOnConditions.values { checkWake(entry, into: &violations) }
        for entry in blockedByRun.values { checkWake(entry, into: &violations) }
        for h in held.values { checkWake(h.entry, into: &violations) }
        for entry in parked.values { checkWake(entry, into: &violations) }
    }

    /// A live entry wakes at or after its request's earliest begin date, when its record says.
    func checkWake(_ entry: PendingQueue.Entry, into violations: inout [InvariantViolation]) {
        guard queue.isLive(entry), let record = queue.record(at: entry.slot) else { return }
        if entry.due < record.earliest {
            violations.append(.init(.wakeBeforeEarliest, identifier: queue.identifier(of: entry),
                                    "wake-up \(Instant(milliseconds: entry.due)) is before earliest \(Instant(milliseconds: record.earliest))"))
        }
        let recorded = queue.wake(at: entry.slot)
        if recorded != entry.due {
            let says = recorded.map { "\(Instant(milliseconds: $0))" } ?? "none"
            violations.append(.init(.wakeUnrecorded, identifier: queue.identifier(of: entry),
                                    "wake-up \(Instant(milliseconds: entry.due)), its record says \(says)"))
        }
    }

    /// The requests out of the heap (waiting on conditions, held, blocked by a run) point at
    /// their identifier's live request, and are where their state says.
    private func checkSideTables(into violations: inout [InvariantViolation]) {
        Self.inKeyOrder(waitingOnConditions, into: &violations) { identifier, entry, violations in
            checkSideEntry(identifier, entry, place: "waitingOnConditions", into: &violations)
            if let runID = activeByIdentifier[identifier] {
                violations.append(.init(.waitingMisfiled, identifier: identifier, runID: runID,
                                        "waits on conditions while run \(runID) of it is in flight"))
            }
            if let request = queue[identifier], !request.requiresExternalPower, !request.requiresNetworkConnectivity {
                violations.append(.init(.waitingMisfiled, identifier: identifier,
                                        "waits on conditions but requires neither power nor network"))
            }
        }
        Self.inKeyOrder(held, into: &violations) { identifier, h, violations in
            checkSideEntry(identifier, h.entry, place: "held", into: &violations)
            if let runID = activeByIdentifier[identifier] {
                violations.append(.init(.heldMisfiled, identifier: identifier, runID: runID,
                                        "held by the admission policy while run \(runID) of it is in flight"))
            }
        }
        Self.inKeyOrder(blockedByRun, into: &violations) { identifier, entry, violations in
            checkSideEntry(identifier, entry, place: "blockedByRun", into: &violations)
            if activeByIdentifier[identifier] == nil {
                violations.append(.init(.blockedWithoutRun, identifier: identifier,
                                        "blocked by a run but no run of it is in flight"))
            }
        }
        Self.inKeyOrder(parked, into: &violations) { identifier, entry, violations in
            checkParked(identifier, entry, into: &violations)
        }
    }

    /// A parked entry's rules (`parkedMisfiled`), shared by the full and the incremental check.
    func checkParked(_ identifier: String, _ entry: PendingQueue.Entry, into violations: inout [InvariantViolation]) {
        checkSideEntry(identifier, entry, place: "parked", into: &violations)
        if pausedBy(identifier) == nil {
            violations.append(.init(.parkedMisfiled, identifier: identifier, "parked but neither it nor its template is paused"))
        }
        if let runID = activeByIdentifier[identifier] {
            violations.append(.init(.parkedMisfiled, identifier: identifier, runID: runID,
                                    "parked as paused while run \(runID) of it is in flight"))
        }
    }

    /// Runs `check` over a table as if in key order (the order violations are reported in)
    /// without sorting it at every step: the table is walked as it is, and walked again sorted
    /// only when that found something. Exact: the same violations, in the same order, as a
    /// sorted walk. (Sorting a table of one or two requests after every simulated step was an
    /// allocation per step.)
    static func inKeyOrder<Value>(
        _ table: TrackedTable<Value>, into violations: inout [InvariantViolation],
        _ check: (String, Value, inout [InvariantViolation]) -> Void
    ) {
        inKeyOrder(table.storage, into: &violations, check)
    }

    static func inKeyOrder<Key: Comparable, Value>(
        _ table: [Key: Value], into violations: inout [InvariantViolation],
        _ check: (Key, Value, inout [InvariantViolation]) -> Void
    ) {
        guard !table.isEmpty else { return }
        var found: [InvariantViolation] = []
        for (key, value) in table { check(key, value, &found) }
        guard !found.isEmpty else { return }
        if table.count == 1 {
            violations += found
            return
        }
        for (key, value) in table.sorted(by: { $0.key < $1.key }) { check(key, value, &violations) }
    }

    /// The rules of one pending record, shared by the full and the incremental check: in exactly
    /// one place (the heap, waiting, blocked or held), declared, and conditions only on a
    /// processing request.
    /// `id` is built only for a finding (an instance's name is made from its key); `declared`:
    /// whether the identifier is declared, which the caller may know by slot.
    func checkRecord(_ record: PendingQueue.Record, of id: @autoclosure () -> String, declared: Bool, inHeap: Int,
                     waiting: Bool, blocked: Bool, held isHeld: Bool, parked isParked: Bool,
                     into violations: inout [InvariantViolation]) {
        let places = inHeap + (waiting ? 1 : 0) + (blocked ? 1 : 0) + (isHeld ? 1 : 0) + (isParked ? 1 : 0)
        if places == 0 {
            violations.append(.init(.pendingUnplaced, identifier: id(),
                                    "sequence \(record.sequence) is in none of the heap, waitingOnConditions, blockedByRun, held, parked"))
        } else if places > 1 {
            violations.append(.init(.pendingInSeveralPlaces, identifier: id(),
                                    "sequence \(record.sequence): \(inHeap) live heap entries, waiting \(waiting), blocked \(blocked), held \(isHeld), parked \(isParked)"))
        }
        if !declared {
            violations.append(.init(.pendingUndeclared, identifier: id(), "pending for an undeclared identifier"))
        }
        let processing = record.flags & PendingQueue.Record.processing != 0
        let power = record.flags & PendingQueue.Record.power != 0
        let network = record.flags & PendingQueue.Record.network != 0
        if !processing, power || network {
            violations.append(.init(.appRefreshWithConditions, identifier: id(),
                                    "app-refresh request requires power \(power), network \(network)"))
        }
    }

    /// Every slot's request is in exactly one place, declared, with a unique sequence below
    /// the next one.
    private func checkSlots(liveInHeap: UnsafeBufferPointer<Int>, into violations: inout [InvariantViolation]) {
        // Duplicate sequences: pairwise while the queue is small (no table to build after every
        // simulated step), through a dictionary beyond.
        var sequences: [UInt64: Int32] = [:]
        let pairwise = queue.slotCount <= 64
        if !pairwise { sequences.reserveCapacity(queue.count) }
        for index in 0..<queue.slotCount {
            let slot = Int32(index)
            guard let record = queue.record(at: slot) else { continue }
            let id = queue.identifiers[index]
            let inHeap = liveInHeap[index]
            let waiting = !waitingOnConditions.isEmpty
                && (waitingOnConditions[id].map { queue.isLive($0) && $0.slot == slot } ?? false)
            let blocked = !blockedByRun.isEmpty && (blockedByRun[id].map { queue.isLive($0) && $0.slot == slot } ?? false)
            let isHeld = !held.isEmpty && (held[id].map { queue.isLive($0.entry) && $0.entry.slot == slot } ?? false)
            let isParked = !parked.isEmpty && (parked[id].map { queue.isLive($0) && $0.slot == slot } ?? false)
            checkRecord(record, of: id, declared: definitions.contains(id),  // (a lookup that copies no definition)
                        inHeap: inHeap, waiting: waiting, blocked: blocked, held: isHeld, parked: isParked,
                        into: &violations)
            let other: Int32? = if pairwise {
                (0..<index).first { queue.record(at: Int32($0))?.sequence == record.sequence }.map { Int32($0) }
            } else {
                sequences.updateValue(slot, forKey: record.sequence)
            }
            if let other {
                violations.append(.init(.sequenceInvalid, identifier: id,
                                        "sequence \(record.sequence) is also \(queue.identifiers[Int(other)])'s"))
            }
            if record.sequence >= nextSequence {
                violations.append(.init(.sequenceInvalid, identifier: id,
                                        "sequence \(record.sequence) is not below nextSequence \(nextSequence)"))
            }
        }
    }

    func checkSideEntry(_ identifier: String, _ entry: PendingQueue.Entry, place: String,
                                into violations: inout [InvariantViolation]) {
        if queue.slots[identifier] != entry.slot {
            violations.append(.init(.sideEntryStale, identifier: identifier,
                                    "\(place) entry points at slot \(entry.slot) (\(queue.identifier(of: entry)))"))
        } else if !queue.isLive(entry) {
            let current = queue[identifier].map { "\($0.sequence)" } ?? "none"
            violations.append(.init(.sideEntryStale, identifier: identifier,
                                    "\(place) entry has sequence \(entry.sequence), pending request has \(current)"))
        }
    }

    private func checkPendingCounts(into violations: inout [InvariantViolation]) {
        // Slot- and index-based, no strings hashed, no array built: this runs after every
        // simulated step.
        queue.withCountsFromRecords { actual, occupied in checkPendingCounts(actual, occupied, into: &violations) }
    }

    func checkPendingCounts(_ actual: UnsafeBufferPointer<Int>, _ occupied: Int,
                                    into violations: inout [InvariantViolation]) {
        if queue.count != occupied {
            violations.append(.init(.pendingCountMismatch, "queue count \(queue.count), requests \(occupied)"))
        }
        let counted = queue.counterValues
        // A template's namespace (issue 23) is exempt: its instances are bounded by the
        // template (one request each), not by the namespace's limit.
        let templateNamespaces = instances.isEmpty ? [] : instances.templates.compactMap { $0.definition?.namespace }
        for index in 0..<max(actual.count, counted.count) {
            let real = index < actual.count ? actual[index] : 0
            let kept = index < counted.count ? counted[index] : 0
            guard real != 0 || kept != 0 else { continue }
            let kind: TaskKind = index % 2 == 1 ? .processing : .appRefresh
            if kept != real {
                violations.append(.init(.pendingCountMismatch,
                                        "\(kind.rawValue) in \(queue.namespaceName(index / 2)): counter \(kept), requests \(real)"))
            }
            let limit = configuration.limit(for: kind)
            if real > limit, templateNamespaces.isEmpty || !templateNamespaces.contains(queue.namespaceName(index / 2)) {
                violations.append(.init(.pendingLimitExceeded,
                                        "\(real) \(kind.rawValue) requests pending in \(queue.namespaceName(index / 2)), limit \(limit)"))
            }
        }
    }

    // MARK: Runs

    /// `streaks: false` leaves the failure streaks to the caller (the incremental check reads
    /// only the changed ones).
    func checkRuns(streaks: Bool = true, into violations: inout [InvariantViolation]) {
        Self.inKeyOrder(active, into: &violations) { key, run, violations in
            let order = run.order
            let id = order.identifier
            if key != order.runID {
                violations.append(.init(.runIndexMismatch, identifier: id, runID: order.runID,
                                        "kept under run id \(key)"))
            }
            if activeByIdentifier[id] != key {
                let indexed = activeByIdentifier[id].map { "run \($0)" } ?? "nothing"
                violations.append(.init(.runIndexMismatch, identifier: id, runID: key,
                                        "activeByIdentifier has \(indexed) for it"))
            }
            if order.runID >= nextRunID {
                violations.append(.init(.runIDNotBelowNext, identifier: id, runID: order.runID,
                                        "not below nextRunID \(nextRunID)"))
            }
            // The allowance is looked up only for a deadline before the start (a lookup copies
            // the definition, after every simulated step).
            if order.deadline < order.started,
               (definitions[id]?.allowance ?? order.kind.defaultAllowance) >= .zero {
                violations.append(.init(.runTimesInvalid, identifier: id, runID: order.runID,
                                        "deadline \(order.deadline) is before start \(order.started)"))
            }
            if order.attempt < 1 {
                violations.append(.init(.runTimesInvalid, identifier: id, runID: order.runID,
                                        "attempt \(order.attempt)"))
            }
            if case let .expiring(killAt) = run.phase, !run.stoppedByShutdown, killAt < order.deadline,
               graceFor(id) >= .zero {
                violations.append(.init(.killBeforeDeadline, identifier: id, runID: order.runID,
                                        "kill at \(killAt) is before deadline \(order.deadline)"))
            }
            if isStopping, run.phase == .running {
                violations.append(.init(.runningWhileStopping, identifier: id, runID: order.runID,
                                        "still running (no expiration) while stopping"))
            }
            if run.stoppedByShutdown, !isStopping {
                violations.append(.init(.runningWhileStopping, identifier: id, runID: order.runID,
                                        "stopped by a shutdown while the core is not stopping"))
            }
        }
        Self.inKeyOrder(activeByIdentifier, into: &violations) { id, runID, violations in
            guard active[runID]?.order.identifier != id else { return }
            let target = active[runID].map { "run of \($0.order.identifier)" } ?? "no run"
            violations.append(.init(.runIndexMismatch, identifier: id, runID: runID,
                                    "activeByIdentifier points at \(target)"))
        }
        if active.count > configuration.maxConcurrentRuns {
            violations.append(.init(.tooManyRuns,
                                    "\(active.count) runs in flight, limit \(configuration.maxConcurrentRuns)"))
        }
        if stoppedReported, !isStopping || !active.isEmpty {
            violations.append(.init(.stoppedTooEarly,
                                    "stopped reported with isStopping \(isStopping), \(active.count) runs in flight"))
        }
        guard streaks else { return }
        Self.inKeyOrder(failureStreaks, into: &violations) { id, streak, violations in
            if streak <= 0 { violations.append(.init(.failureStreakNotPositive, identifier: id, "streak \(streak)")) }
        }
    }

    // MARK: Timer and conditions

    /// `quickly`: the heap's top when it is live, instead of a walk for the first live entry.
    func checkTimerAndWatch(quickly: Bool = false, into violations: inout [InvariantViolation]) {
        let next = deadline(firstInQueue: quickly ? queue.firstLiveQuickly() : queue.firstLive())
        if next != armedAt {
            violations.append(.init(.armedWakeUpMismatch,
                                    "armed \(armedAt.map(\.description) ?? "nothing"), next deadline \(next.map(\.description) ?? "none")"))
        }
        let wantWatch = !waitingOnConditions.isEmpty && !isStopping
        if watchingConditions != wantWatch {
            violations.append(.init(.conditionWatchMismatch,
                                    "watching \(watchingConditions), \(waitingOnConditions.count) waiting, stopping \(isStopping)"))
        }
    }
}
