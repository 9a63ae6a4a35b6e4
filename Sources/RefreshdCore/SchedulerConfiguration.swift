/// Limits the core enforces: concurrent runs and pending requests per namespace.
public struct SchedulerConfiguration: Sendable, Hashable {
    /// Runs in flight at once, across all identifiers. Due requests beyond it wait in due order.
    public var maxConcurrentRuns: Int
    /// Pending app-refresh requests per namespace (iOS: 1).
    public var maxPendingAppRefresh: Int
    /// Pending processing requests per namespace (iOS: 10).
    public var maxPendingProcessing: Int
    /// Seeds jitter and the accuracy alignment, so a run (and a simulation) is repeatable. The
    /// daemon derives it from /etc/machine-id, like systemd's FixedRandomDelay.
    public var seed: UInt64
    /// Emit `.persist` effects. Off when nothing is stored (an in-memory scheduler), so the core
    /// does not build records nobody reads.
    package var emitsStateChanges: Bool = true
    /// Emit the per-request log effects (submitted, launched, finished). Off when the logger
    /// would drop them anyway. Warnings and lifecycle messages are always emitted.
    package var emitsRoutineLogs: Bool = true
    /// Emit `.ended` for every run that ends (the runtime turns it into events for the machines
    /// beside the core). Off by default, so the core alone emits exactly its own effects.
    package var emitsRunEnds: Bool = false
    /// How long the store keeps a finished run's row (nil: for ever). Pruned once a UTC day,
    /// at the first launch or outcome counted on a new day: runs that ended before that day's
    /// start minus the retention go, except each job's latest. The daily counters keep the
    /// totals. A per-minute job is 43,200 rows in 30 days, 525,600 in a year.
    public var runRetention: Duration? = .seconds(30 * 86_400)
    /// Lines of each run's output the store keeps with the run (`RunOutput`; 0: none, and no
    /// results lines either), within `RunOutput.maxLines`.
    package var keptOutputLines = RunOutput.defaultLines
    /// Whether a run found unfinished at the restore (in flight when refreshd died) is retried
    /// (at once, or by its retry policy). On one machine it is: the restart reaped its processes
    /// first. A shard taken over by another node of a cluster (issue 24) cannot reap the old
    /// owner's processes (a paused node's run may still be running), so there the interrupted
    /// run's request counts as run: a slot never runs twice. Its next slot was requested at its
    /// launch (`ResubmitPolicy`), so the job keeps its future.
    public var retriesInterruptedRuns: Bool = true
    /// The shard this scheduler's state is, on a cluster node (issue 32; nil on one machine): a
    /// sync job's instance lines about instances of other shards are sent to those shards'
    /// leaders in the run's own commit (`ShardCommand.outboxTable`), not applied here.
    package var shardPlace: ShardPlace?

    /// The BGTaskScheduler limits by default: 4 runs at once, 1 pending app refresh and 10 pending
    /// processing requests per namespace, seed 0 (`maxConcurrentRuns` is at least 1).
    public init(maxConcurrentRuns: Int = 4, maxPendingAppRefresh: Int = 1, maxPendingProcessing: Int = 10,
                seed: UInt64 = 0) {
        self.seed = seed
        self.maxConcurrentRuns = max(1, maxConcurrentRuns)
        self.maxPendingAppRefresh = maxPendingAppRefresh
        self.maxPendingProcessing = maxPendingProcessing
    }

    func limit(for kind: TaskKind) -> Int {
        kind == .appRefresh ? maxPendingAppRefresh : maxPendingProcessing
    }
}
