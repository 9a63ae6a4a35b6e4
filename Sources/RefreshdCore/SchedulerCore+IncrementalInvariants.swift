/// What the incremental invariant check remembers between steps: each slot's pending request
/// as it last saw it (its sequence and counter), so that the counters and the uniqueness of
/// sequences are re-derived from the slots a step touched instead of from every slot.
struct InvariantTracking: Sendable {
    /// Per slot: the sequence and the counter index (namespace * 2 + processing) of its
    /// request when last checked; counter -1 for none.
    var sequenceBySlot: [UInt64] = []
    var counterBySlot: [Int32] = []
    /// The slot holding each pending sequence.
    var sequenceOwner: [UInt64: Int32] = [:]
    /// The counters recomputed from the records (as `withCountsFromRecords` does), kept.
    var counts: [Int] = []
    var occupied = 0
    var withdrawals = 0
    var nextSequence: UInt64 = 0
    /// The identifiers with a run in flight at the last check: a run that ended may leave a
    /// request blocked behind nothing, without touching the request.
    var runIdentifiers: [String] = []
    /// Scratch buffers of one check, kept with their capacity so that a step allocates
    /// nothing for them (the simulator checks after every step).
    var identifiers: [String] = []
    var slots: [Int32] = []
    var entries: [PendingQueue.Entry] = []
}

extension SchedulerCore {
    /// `checkInvariants()` at the cost of what changed since the last call: the same rules, each
    /// checked where a step could have broken it.
    ///
    /// The first call checks everything and starts noting changes: the queue notes the slots
    /// whose request or heap entries changed and the heap entries added, with each slot's live
    /// heap entries counted where the heap changes; the side tables (waiting, blocked, held,
    /// failure streaks) note the keys written. Each later call checks those slots and keys (a
    /// slot's identifier brings its side entries in, a run's identifier its blocked request),
    /// the heap entries added (wake-up not before earliest, sequence below the next), the
    /// counters and the pending limits from counts kept by slot, the runs in flight (at most
    /// `maxConcurrentRuns`), the armed wake-up and the condition watch. What no step touches
    /// cannot have changed; what changes without a slot (a definition withdrawn, `nextSequence`
    /// moved back) makes the call check everything again. Meant for the simulator after every
    /// step; a full `checkInvariants()` stays at a simulation's start, end and each restart.
    ///
    /// Returns what it found, which is in `checkInvariants()` too; the order may differ (a
    /// caller that reports a violation runs the full check for it).
    package mutating func checkInvariantsIncrementally() -> [InvariantViolation] {
        guard var tracking = invariantTracking,
              nextSequence >= tracking.nextSequence, definitions.withdrawals == tracking.withdrawals
        else {
            let all = checkInvariants()
            startInvariantTracking()
            return all
        }
        invariantTracking = nil  // (held uniquely below, so that its arrays grow in place)
        var violations: [InvariantViolation] = []
        var identifiers = tracking.identifiers, slots = tracking.slots, entries = tracking.entries
        tracking.identifiers = []; tracking.slots = []; tracking.entries = []  // (unique while in use)
        identifiers.removeAll(keepingCapacity: true)
        slots.removeAll(keepingCapacity: true)
        entries.removeAll(keepingCapacity: true)
        queue.takeChanges(slots: &slots, entries: &entries)
        waitingOnConditions.takeChanged(into: &identifiers)
        blockedByRun.takeChanged(into: &identifiers)
        held.takeChanged(into: &identifiers)
        parked.takeChanged(into: &identifiers)
        failureStreaks.takeChanged(into: &identifiers)
        // A slot's or a run's identifier matters only through its side entries (a waiting,
        // held or blocked entry of it): with those three tables empty there is none to check,
        // and its failure streak is in `failureStreaks`' own notes. (Building an instance's
        // name for every changed slot, then finding its slot by name again, was 8% of a
        // simulated month of instances.)
        if !waitingOnConditions.isEmpty || !blockedByRun.isEmpty || !held.isEmpty || !parked.isEmpty {
            identifiers += tracking.runIdentifiers
            for slot in slots { identifiers.append(queue.identifiers[Int(slot)]) }
            for run in active.values { identifiers.append(run.order.identifier) }
            identifiers += activeByIdentifier.keys
        }
        // Each identifier once, in order (sorted in place: no set, no second array).
        identifiers.sort()
        var previous: String?
        for identifier in identifiers where identifier != previous {
            previous = identifier
            checkSideEntries(of: identifier, into: &violations)
            if let slot = queue.slots.slot(of: identifier) { slots.append(slot) }
        }
        for entry in entries {
            checkWake(entry, into: &violations)
            if entry.sequence >= nextSequence {
                violations.append(.init(.sequenceInvalid, identifier: queue.identifier(of: entry),
                                        "heap entry sequence \(entry.sequence) is not below nextSequence \(nextSequence)"))
            }
        }
        let needed = queue.slotCount
        if tracking.counterBySlot.count < needed {
            tracking.counterBySlot += repeatElement(-1, count: needed - tracking.counterBySlot.count)
            tracking.sequenceBySlot += repeatElement(0, count: needed - tracking.sequenceBySlot.count)
        }
        slots.sort()
        var previousSlot: Int32 = -1
        for slot in slots where slot != previousSlot {
            previousSlot = slot
            checkSlot(slot, tracking: &tracking, into: &violations)
        }
        tracking.counts.withUnsafeBufferPointer { counts in
            checkPendingCounts(counts, tracking.occupied, into: &violations)
        }
        checkRuns(streaks: false, into: &violations)
        checkTimerAndWatch(quickly: true, into: &violations)
        tracking.runIdentifiers.removeAll(keepingCapacity: true)
        // (Only an entry that exists now can be left behind by a run that ends before the next
        // check: with the side tables empty, the next check needs no run of this one.)
        if !waitingOnConditions.isEmpty || !blockedByRun.isEmpty || !held.isEmpty || !parked.isEmpty {
            tracking.runIdentifiers += activeByIdentifier.keys
            for run in active.values { tracking.runIdentifiers.append(run.order.identifier) }
        }
        tracking.identifiers = identifiers; tracking.slots = slots; tracking.entries = entries
        invariantTracking = tracking
        return violations
    }

    /// Turns the change notes on and takes the state as it is (just checked in full).
    mutating func startInvariantTracking() {
        queue.startChangeLog()
        waitingOnConditions.tracking = true
        var tracking = InvariantTracking()
        waitingOnConditions.takeChanged(into: &tracking.identifiers)
        blockedByRun.tracking = true
        blockedByRun.takeChanged(into: &tracking.identifiers)
        held.tracking = true
        held.takeChanged(into: &tracking.identifiers)
        parked.tracking = true
        parked.takeChanged(into: &tracking.identifiers)
        failureStreaks.tracking = true
        failureStreaks.takeChanged(into: &tracking.identifiers)
        tracking.identifiers.removeAll(keepingCapacity: true)
        tracking.counterBySlot = Array(repeating: -1, count: queue.slotCount)
        tracking.sequenceBySlot = Array(repeating: 0, count: queue.slotCount)
        for index in 0..<queue.slotCount {
            guard let record = queue.record(at: Int32(index)) else { continue }
            let counter = Self.counterIndex(record)
            tracking.counterBySlot[index] = Int32(counter)
            tracking.sequenceBySlot[index] = record.sequence
            tracking.sequenceOwner[record.sequence] = Int32(index)
            if tracking.counts.count <= counter { tracking.counts += repeatElement(0, count: counter + 1 - tracking.counts.count) }
            tracking.counts[counter] += 1
            tracking.occupied += 1
        }
        tracking.withdrawals = definitions.withdrawals
        tracking.nextSequence = nextSequence
        tracking.runIdentifiers = Array(activeByIdentifier.keys) + active.values.map(\.order.identifier)
        invariantTracking = tracking
    }

    private static func counterIndex(_ record: PendingQueue.Record) -> Int {
        Int(record.namespace) * 2 + (record.flags & PendingQueue.Record.processing != 0 ? 1 : 0)
    }

    /// The rules of one slot (`checkSlots`'), and its request taken into the kept counters.
    private func checkSlot(_ slot: Int32, tracking: inout InvariantTracking, into violations: inout [InvariantViolation]) {
        let index = Int(slot)
        let oldCounter = Int(tracking.counterBySlot[index])
        if oldCounter >= 0 {
            tracking.counts[oldCounter] -= 1
            tracking.occupied -= 1
            let oldSequence = tracking.sequenceBySlot[index]
            if tracking.sequenceOwner[oldSequence] == slot { tracking.sequenceOwner[oldSequence] = nil }
            tracking.counterBySlot[index] = -1
        }
        guard let record = queue.record(at: slot) else { return }
        let counter = Self.counterIndex(record)
        if tracking.counts.count <= counter { tracking.counts += repeatElement(0, count: counter + 1 - tracking.counts.count) }
        tracking.counts[counter] += 1
        tracking.occupied += 1
        tracking.counterBySlot[index] = Int32(counter)
        tracking.sequenceBySlot[index] = record.sequence
        // The slot's name is built (an instance's from its key) only where a rule needs it by
        // name: a side table that holds anything, a lookup in a table of other slots, a finding.
        let sideTables = !waitingOnConditions.isEmpty || !blockedByRun.isEmpty || !held.isEmpty || !parked.isEmpty
        let shared = queue.ids.sharesNames(with: definitions.table)
        let named: String? = sideTables || !shared ? queue.identifiers[index] : nil
        // (A local function, not a closure stored in a constant: that closure copied `self`,
        // the whole core with every table retained, 7% of a simulated month of instances.)
        func id() -> String { named ?? queue.identifiers[index] }
        if let other = tracking.sequenceOwner[record.sequence], other != slot,
           queue.record(at: other)?.sequence == record.sequence {
            violations.append(.init(.sequenceInvalid, identifier: id(),
                                    "sequence \(record.sequence) is also \(queue.identifiers[Int(other)])'s"))
        }
        tracking.sequenceOwner[record.sequence] = slot
        let inHeap = queue.liveInHeap(slot: slot)
        let waiting = named.flatMap { waitingOnConditions[$0] }.map { queue.isLive($0) && $0.slot == slot } ?? false
        let blocked = named.flatMap { blockedByRun[$0] }.map { queue.isLive($0) && $0.slot == slot } ?? false
        let isHeld = named.flatMap { held[$0] }.map { queue.isLive($0.entry) && $0.entry.slot == slot } ?? false
        let isParked = named.flatMap { parked[$0] }.map { queue.isLive($0) && $0.slot == slot } ?? false
        let declared = shared ? definitions.rule(at: slot) >= 0 : definitions.contains(id())
        checkRecord(record, of: id(), declared: declared, inHeap: inHeap, waiting: waiting, blocked: blocked,
                    held: isHeld, parked: isParked, into: &violations)
        if record.sequence >= nextSequence {
            violations.append(.init(.sequenceInvalid, identifier: id(),
                                    "sequence \(record.sequence) is not below nextSequence \(nextSequence)"))
        }
    }

    /// `checkSideTables`' rules and the wake-up rule for one identifier's side entries, and its
    /// failure streak.
    private func checkSideEntries(of identifier: String, into violations: inout [InvariantViolation]) {
        if let entry = waitingOnConditions[identifier] {
            checkSideEntry(identifier, entry, place: "waitingOnConditions", into: &violations)
            if let runID = activeByIdentifier[identifier] {
                violations.append(.init(.waitingMisfiled, identifier: identifier, runID: runID,
                                        "waits on conditions while run \(runID) of it is in flight"))
            }
            if let request = queue[identifier], !request.requiresExternalPower, !request.requiresNetworkConnectivity {
                violations.append(.init(.waitingMisfiled, identifier: identifier,
                                        "waits on conditions but requires neither power nor network"))
            }
            checkWake(entry, into: &violations)
        }
        if let h = held[identifier] {
            checkSideEntry(identifier, h.entry, place: "held", into: &violations)
            if let runID = activeByIdentifier[identifier] {
                violations.append(.init(.heldMisfiled, identifier: identifier, runID: runID,
                                        "held by the admission policy while run \(runID) of it is in flight"))
            }
            checkWake(h.entry, into: &violations)
        }
        if let entry = blockedByRun[identifier] {
            checkSideEntry(identifier, entry, place: "blockedByRun", into: &violations)
            if activeByIdentifier[identifier] == nil {
                violations.append(.init(.blockedWithoutRun, identifier: identifier,
                                        "blocked by a run but no run of it is in flight"))
            }
            checkWake(entry, into: &violations)
        }
        if let entry = parked[identifier] {
            checkParked(identifier, entry, into: &violations)
            checkWake(entry, into: &violations)
        }
        if let streak = failureStreaks[identifier], streak <= 0 {
            violations.append(.init(.failureStreakNotPositive, identifier: identifier, "streak \(streak)"))
        }
    }
}
