/// Pausing and resuming a job, an instance or a template (issue 33): an operator's order, a
/// rule of the core like every other.
///
/// A paused identifier keeps its pending request (it may be replaced, by a submit, a retry or a
/// resubmission, like any) but does not launch: when it is due, `dispatch` parks it out of the
/// heap, so it costs no wake-up. A run in flight at the pause runs to its end. Pausing a template
/// pauses its instances. On resume the parked requests go back to the heap and the missed-slot
/// policy of each calendar job applies to the slots that passed as after downtime (`once` runs
/// once, `skip` goes to the next slot, `all` replays within the catch-up window); then due
/// requests launch. The pause is saved as a `paused` record (key: the identifier), so it
/// survives a restart in every store without a table of its own.
///
/// ```swift
/// try core.pause("app.feed", at: now, into: &effects)
/// // [.persist(.putRecord(paused app.feed {"since":...})), .log(.paused(...))]
/// ```
extension SchedulerCore {
    /// The records' table of pauses: key the identifier, value `{"since": MILLISECONDS}`.
    package static let pausedTable = "paused"

    /// Pauses a declared job or instance, or a template. Refused for an identifier that is
    /// neither, and for one already paused (which says since when).
    package mutating func pause(_ identifier: String, at now: Instant,
                                into effects: inout [SchedulerEffect]) throws(ControlRefusal) {
        let template = isTemplate(identifier)
        guard template || definitions.contains(identifier) else { throw .notDeclared(identifier: identifier) }
        if let since = paused[identifier] { throw .alreadyPaused(identifier: identifier, since: since) }
        paused[identifier] = now
        persist(.putRecord(MachineRecord(table: Self.pausedTable, key: identifier,
                                         value: "{\"since\":\(now.milliseconds)}")), into: &effects)
        effects.append(.log(.paused(identifier: identifier, template: template)))
        finishEvent(into: &effects)
    }

    /// Resumes a paused identifier: its parked requests (and, for a template, its instances'
    /// that are not paused themselves) go back to the heap, the missed-slot policies apply to
    /// them as after downtime, and what is due launches. Refused when it is not paused.
    package mutating func resume(_ identifier: String, at now: Instant,
                                 into effects: inout [SchedulerEffect]) throws(ControlRefusal) {
        guard let since = paused.removeValue(forKey: identifier) else { throw .notPaused(identifier: identifier) }
        persist(.deleteRecord(table: Self.pausedTable, key: identifier), into: &effects)
        effects.append(.log(.resumed(identifier: identifier, pausedFor: now.duration(since: since))))
        var released: [String] = []
        for (id, entry) in parked where pausedBy(id, slot: entry.slot) == nil { released.append(id) }
        released.sort()
        for id in released {
            if let entry = parked.removeValue(forKey: id) { queue.reinsert(entry) }
        }
        // Every request of what was resumed, parked or not (a run in flight held one back).
        let resumed: (String) -> Bool = { [paused] id in
            id == identifier || (paused[id] == nil && InstanceName.split(id)?.template == identifier)
        }
        applyMissedPolicies(since: nil, at: now, only: resumed, into: &effects)
        dispatch(at: now, freshConditions: false, into: &effects)
        finishEvent(into: &effects)
    }

    /// What pauses the identifier (itself, or its template) and since when; nil: it may launch.
    /// `slot`, when known, is its queue slot (its template is then found without its name).
    package func pausedBy(_ identifier: String, slot: Int32? = nil) -> (identifier: String, since: Instant)? {
        guard !paused.isEmpty else { return nil }
        if let since = paused[identifier] { return (identifier, since) }
        let template: String?
        if let slot, queue.ids.sharesNames(with: definitions.table) {
            let index = instances.template(at: slot)
            template = index >= 0 ? instances.templates[Int(index)].identifier : nil
        } else {
            template = InstanceName.split(identifier)?.template
        }
        guard let template, let since = paused[template] else { return nil }
        return (template, since)
    }

    /// The pauses saved in the records, at a restore. A pause of an identifier not declared
    /// now is kept: the job may come back with its files.
    mutating func restorePauses(_ records: [MachineRecord]) {
        paused.merge(Self.pauses(in: records)) { _, saved in saved }
    }

    /// The pauses among saved records, by identifier (a record that cannot be read is skipped):
    /// what a restore and `status` read.
    package static func pauses(in records: [MachineRecord]) -> [String: Instant] {
        var found: [String: Instant] = [:]
        for record in records where record.table == pausedTable {
            guard let members = StrictJSON.object(record.value),
                  case let .integer(milliseconds)? = members.first(where: { $0.key == "since" })?.value
            else { continue }
            found[record.key] = Instant(milliseconds: milliseconds)
        }
        return found
    }
}
