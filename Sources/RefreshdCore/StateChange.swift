/// A durable change the shell must commit before acting on the effects that follow it.
///
/// The store applies all changes of one event in one transaction, so a kill -9 at any instant
/// leaves either the state before the event or the state after it.
package enum StateChange: Sendable, Hashable {
    case savePending(PendingRequest)
    case deletePending(identifier: String, slot: SlotHint = .none)
    indirect case runStarted(RunRecord)
    /// A run ended. `reason` says why when the outcome and exit do not ("memory limit"), and
    /// `usage` is what the run used (its CPU time and peak memory, where measured).
    case runEnded(runID: Int64, identifier: String, ended: Instant, outcome: Outcome,
                  exitStatus: Int32?, signal: Int32?, slot: SlotHint = .none, reason: String? = nil,
                  usage: RunUsage = .none)
    /// What the store keeps of a run's output (`RunOutput`), committed with its end: replaces
    /// what the run's row kept (no error if the run is not there).
    case runOutput(runID: Int64, output: RunOutput)
    /// Consecutive failed attempts of a job, reset by a success; drives the retry backoff.
    case failureStreak(identifier: String, count: Int, slot: SlotHint = .none)
    /// A job's counters for one UTC day (launches, outcomes, missed calendar slots), as the core
    /// counts them: the store keeps the row as given, it derives nothing.
    case counters(DailyCounter)
    /// A command run's process exists: its process group (the leader's pid, which leads its own
    /// session) and the leader's start time in clock ticks since boot, so a restart can reap
    /// survivors and tell them from a process that reused the pid.
    case processStarted(runID: Int64, processGroup: Int32, startTicks: UInt64?)
    /// The `earliest:` text a job's first request was made from: an absolute date is requested
    /// once, and a restart must know it already was.
    case seedSpec(identifier: String, spec: String, slot: SlotHint = .none)
    /// Inserts or replaces a machine's record at (table, key).
    case putRecord(MachineRecord)
    /// Removes a machine's record (no error if there is none).
    case deleteRecord(table: String, key: String)
    /// Forgets the history of runs that ended before the instant, except each identifier's
    /// latest run (what `status` shows as its last run): unfinished runs are never touched.
    /// The core asks for it once a UTC day (`SchedulerConfiguration.runRetention`), so the
    /// state of a long-lived daemon does not grow without end.
    case pruneRuns(endedBefore: Instant)
    /// Inserts or replaces an instance of a template (its key and parameter values).
    indirect case saveInstance(InstanceRecord)
    /// Removes an instance (no error if there is none); its runs and counters stay.
    case deleteInstance(template: String, key: String)
}
