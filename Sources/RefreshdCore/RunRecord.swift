/// One run of a task: launched from a pending request, ended with an outcome.
///
/// The store keeps every run; a run without an end when refreshd starts was in flight when it
/// died, and is recorded `interrupted`.
public struct RunRecord: Sendable, Hashable {
    public var runID: Int64
    public var identifier: String
    public var kind: TaskKind
    public var submitted: Instant
    public var earliest: Instant
    public var started: Instant
    /// When the expiration is delivered if the run has not ended.
    public var deadline: Instant
    /// 1 for a regular run, n+1 for the n-th retry after consecutive failures.
    public var attempt: Int
    public var ended: Instant?
    public var outcome: Outcome?
    public var exitStatus: Int32?
    public var signal: Int32?
    /// Process group of a command run (its leader's pid), so a restart can reap survivors.
    public var processGroup: Int32?
    /// The leader's start time in clock ticks since boot (/proc/PID/stat field 22), to tell a
    /// survivor from an unrelated process that reused the pid.
    public var processStartTicks: UInt64?

    public init(runID: Int64, identifier: String, kind: TaskKind, submitted: Instant,
                earliest: Instant, started: Instant, deadline: Instant, attempt: Int = 1,
                ended: Instant? = nil, outcome: Outcome? = nil, exitStatus: Int32? = nil,
                signal: Int32? = nil, processGroup: Int32? = nil, processStartTicks: UInt64? = nil) {
        self.runID = runID
        self.identifier = identifier
        self.kind = kind
        self.submitted = submitted
        self.earliest = earliest
        self.started = started
        self.deadline = deadline
        self.attempt = attempt
        self.ended = ended
        self.outcome = outcome
        self.exitStatus = exitStatus
        self.signal = signal
        self.processGroup = processGroup
        self.processStartTicks = processStartTicks
    }
}
