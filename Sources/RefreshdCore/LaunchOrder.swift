/// What the shell needs to start a run: the task, its run id and when its time is up.
@_spi(Benchmarks) public struct LaunchOrder: Sendable, Hashable {
    @_spi(Benchmarks) public static func == (a: LaunchOrder, b: LaunchOrder) -> Bool {
        a.runID == b.runID && a.identifier == b.identifier && a.kind == b.kind && a.started == b.started
            && a.deadline == b.deadline && a.attempt == b.attempt
    }

    @_spi(Benchmarks) public func hash(into hasher: inout Hasher) {
        hasher.combine(runID)
        hasher.combine(identifier)
        hasher.combine(kind)
        hasher.combine(started)
        hasher.combine(deadline)
        hasher.combine(attempt)
    }

    @_spi(Benchmarks) public var runID: Int64
    package var identifier: String
    package var kind: TaskKind
    @_spi(Benchmarks) public var started: Instant
    package var deadline: Instant
    package var attempt: Int
    /// The identifier's slot in the core's definitions table, or -1: lets the engine find an
    /// instance's record by slot, hashing no name (the core sets it where its queue shares the
    /// definitions' table). Not part of the order's identity (`==`, `hash`).
    package var slot: Int32 = -1

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
