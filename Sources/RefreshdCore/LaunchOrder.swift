/// What the shell needs to start a run: the task, its run id and when its time is up.
public struct LaunchOrder: Sendable, Hashable {
    public var runID: Int64
    public var identifier: String
    public var kind: TaskKind
    public var started: Instant
    public var deadline: Instant
    public var attempt: Int

    public init(runID: Int64, identifier: String, kind: TaskKind, started: Instant,
                deadline: Instant, attempt: Int) {
        self.runID = runID
        self.identifier = identifier
        self.kind = kind
        self.started = started
        self.deadline = deadline
        self.attempt = attempt
    }
}
