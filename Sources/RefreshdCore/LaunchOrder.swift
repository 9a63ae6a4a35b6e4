/// What the shell needs to start a run: the task, its run id and when its time is up.
@_spi(Benchmarks) public struct LaunchOrder: Sendable, Hashable {
    @_spi(Benchmarks) public var runID: Int64
    package var identifier: String
    package var kind: TaskKind
    @_spi(Benchmarks) public var started: Instant
    package var deadline: Instant
    package var attempt: Int

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
