/// What the shell needs to start a run: the task, its run id and when its time is up.
package struct LaunchOrder: Sendable, Hashable {
    package var runID: Int64
    package var identifier: String
    package var kind: TaskKind
    package var started: Instant
    package var deadline: Instant
    package var attempt: Int
    /// The identifier's slot in the core's definitions table (`SlotHint`): lets the engine find
    /// an instance's record, and the stores the identifier's rows, hashing no name (the core
    /// sets it where its queue shares the definitions' table).
    package var slot: SlotHint = .none

    package init(runID: Int64, identifier: String, kind: TaskKind, started: Instant,
                deadline: Instant, attempt: Int) {
        self.runID = runID
        self.identifier = identifier
        self.kind = kind
        self.started = started
        self.deadline = deadline
        self.attempt = attempt
    }
}
