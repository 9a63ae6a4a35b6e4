/// One run of a task: launched from a pending request, ended with an outcome.
///
/// The store keeps every run; a run without an end when refreshd starts was in flight when it
/// died, and is recorded `interrupted`.
package struct RunRecord: Sendable, Hashable {
    package var runID: Int64
    package var identifier: String
    package var kind: TaskKind
    package var submitted: Instant
    package var earliest: Instant
    package var started: Instant
    /// When the expiration is delivered if the run has not ended.
    package var deadline: Instant
    /// 1 for a regular run, n+1 for the n-th retry after consecutive failures.
    package var attempt: Int
    package var ended: Instant?
    package var outcome: Outcome?
    package var exitStatus: Int32?
    package var signal: Int32?
    /// Process group of a command run (its leader's pid), so a restart can reap survivors.
    package var processGroup: Int32?
    /// The leader's start time in clock ticks since boot (/proc/PID/stat field 22), to tell a
    /// survivor from an unrelated process that reused the pid.
    package var processStartTicks: UInt64?
    /// The identifier's slot in the core's table, when the core made the record (`SlotHint`).
    package var slot: SlotHint = .none
    /// Why it ended so, when the outcome and exit do not say it ("memory limit").
    package var reason: String?
    /// What it used (CPU time, peak memory) where the host measured it; kept with the run.
    package var usage = RunUsage.none
    /// Its kept output and results lines (`RunOutput`), where the store read them: the queries
    /// of a page of runs do, the latest run of every job and the restore do not.
    package var output = RunOutput.none

    package init(runID: Int64, identifier: String, kind: TaskKind, submitted: Instant,
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
