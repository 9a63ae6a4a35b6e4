extension SchedulerCore {
    /// Replaces a declared definition (config reload). A run in flight keeps the allowance it was
    /// launched with; its retry and resubmit follow the new definition.
    /// Declares the identifier if it was not declared yet.
    public mutating func redeclare(_ definition: TaskDefinition) {
        definitions[definition.identifier] = definition
        queue.intern(definition.identifier)
    }

    /// Withdraws an identifier: its pending request is cancelled; a run in flight finishes, but
    /// nothing is resubmitted or retried for it.
    public mutating func undeclare(_ identifier: String, at now: Instant) -> [SchedulerEffect] {
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
