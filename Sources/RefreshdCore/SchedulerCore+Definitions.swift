extension SchedulerCore {
    /// Replaces a declared definition (config reload). A run in flight keeps the allowance it was
    /// launched with; its retry and resubmit follow the new definition.
    /// Declares the identifier if it was not declared yet.
    package mutating func redeclare(_ definition: TaskDefinition) {
        store(definition)
    }

    /// Stores a definition and gives its identifier a slot in the queue. The queue and the
    /// definitions share one identifier table (one copy of a million names, not two) as long as
    /// the queue interned nothing of its own: the queue lets go of it while the definitions grow
    /// it in place, then takes it back. Otherwise each keeps its own.
    mutating func store(_ definition: TaskDefinition) {
        let shared = queue.ids.sharesNames(with: definitions.table)
        if shared { queue.releaseIdentifiers() }
        definitions.set(definition)
        if shared {
            queue.adopt(definitions.table)
        } else {
            queue.intern(definition.identifier)
        }
    }

    /// Withdraws an identifier: its pending request is cancelled; a run in flight finishes, but
    /// nothing is resubmitted or retried for it.
    package mutating func undeclare(_ identifier: String, at now: Instant) -> [SchedulerEffect] {
        var effects: [SchedulerEffect] = []
        undeclare(identifier, into: &effects)
        finishEvent(into: &effects)
        return effects
    }

    mutating func undeclare(_ identifier: String, into effects: inout [SchedulerEffect]) {
        cancel(identifier, into: &effects)
        definitions[identifier] = nil
    }
}
