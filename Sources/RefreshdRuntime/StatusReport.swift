import Foundation
import RefreshdCore

/// What `refreshd status --json` prints, as a Codable value: pending requests, recent runs,
/// each job's last run, the per-day counters, and the widget timelines and live activities
/// (`timelines`, `activities`: from the live machines, or rebuilt from the saved records by
/// `SavedMachineState` when refreshd is not running). One type for the status command, the control
/// socket to come and anything else that reads a store, whichever store it is.
public struct StatusReport: Codable, Sendable, Equatable {
    public struct Pending: Codable, Sendable, Equatable {
        public var identifier: String
        public var kind: TaskKind
        public var namespace: String
        public var earliest: Instant
        public var submitted: Instant
        public var origin: PendingRequest.Origin
        public var requiresExternalPower: Bool
        public var requiresNetworkConnectivity: Bool

        public init(_ p: PendingRequest) {
            identifier = p.identifier
            kind = p.kind
            namespace = p.namespace
            earliest = p.earliest
            submitted = p.submitted
            origin = p.origin
            requiresExternalPower = p.requiresExternalPower
            requiresNetworkConnectivity = p.requiresNetworkConnectivity
        }
    }

    public struct Run: Codable, Sendable, Equatable {
        public var runID: Int64
        public var identifier: String
        public var kind: TaskKind
        public var submitted: Instant
        public var earliest: Instant
        public var started: Instant
        public var deadline: Instant
        public var attempt: Int
        /// The outcome's name, or `running` for a run without an end.
        public var outcome: String
        public var ended: Instant?
        public var exitStatus: Int32?
        public var signal: Int32?

        public init(_ r: RunRecord) {
            runID = r.runID
            identifier = r.identifier
            kind = r.kind
            submitted = r.submitted
            earliest = r.earliest
            started = r.started
            deadline = r.deadline
            attempt = r.attempt
            outcome = r.outcome?.rawValue ?? "running"
            ended = r.ended
            exitStatus = r.exitStatus
            signal = r.signal
        }
    }

    public struct Job: Codable, Sendable, Equatable {
        public var identifier: String
        public var lastOutcome: String
        public var lastRun: Run
    }

    public struct Counter: Codable, Sendable, Equatable {
        public var day: String
        public var identifier: String
        public var launches: Int
        public var success: Int
        public var failure: Int
        public var expired: Int
        public var crashed: Int
        public var interrupted: Int
        public var missed: Int

        public init(_ c: DailyCounter) {
            day = c.day
            identifier = c.identifier
            launches = c.launches
            success = c.successes
            failure = c.failures
            expired = c.expired
            crashed = c.crashed
            interrupted = c.interrupted
            missed = c.missed
        }
    }

    public var pending: [Pending]
    public var runs: [Run]
    public var jobs: [Job]
    public var counters: [Counter]
    /// Every widget: entry shown, next switch, policy, next reload and why, budget, staleness.
    public var timelines: TimelineSnapshot?
    /// Every live or ended activity: state, progress, stale date, dismissal, held updates.
    public var activities: ActivitySnapshot?
    /// When `runs` is a full page: ask again with this as `before` for the next (older) page.
    public var nextBefore: Int64?
    /// Failure and recovery notifications committed and not yet delivered (a receiver down, or
    /// refreshd stopped before it could send them), oldest run first: the next start sends them.
    public var heldNotifications: [HeldNotification] = []
    /// In cluster mode (issue 24): who leads each shard, from the database; the report's other
    /// parts are every shard's, merged.
    public var cluster: ClusterStatus?

    /// A notification waiting to be delivered, as its record holds it.
    public struct HeldNotification: Codable, Sendable, Equatable {
        public var id: String
        /// `failure` or `recovery`.
        public var kind: String
        public var job: String
        public var runID: Int64
        public var outcome: String
        public var ended: Instant
        /// `webhook URL` or `command PROGRAM`.
        public var notifier: String
        /// Attempts made so far, as last committed.
        public var attempts: Int

        public init(_ n: RunNotification) {
            id = n.id
            kind = n.kind.rawValue
            job = n.job
            runID = n.runID
            outcome = n.outcome.rawValue
            ended = n.ended
            notifier = n.notifier.summary
            attempts = n.attempts
        }
    }

    /// Reads a store: its pending requests, its `runs` most recent runs (below the run id
    /// `before`, if given), the last run of each job, and the counters of its `days` most recent days.
    public init(store: any StateStoring, runs: Int, days: Int, before: Int64? = nil) throws {
        pending = try store.pendingRequests().map(Pending.init)
        self.runs = try store.recentRuns(limit: runs, before: before).map(Run.init)
        if runs > 0, self.runs.count == runs, let oldest = self.runs.last?.runID, oldest > 1 { nextBefore = oldest }
        jobs = try store.lastRunPerJob().map { Job(identifier: $0.identifier, lastOutcome: $0.outcome?.rawValue ?? "running",
                                                     lastRun: Run($0)) }
        counters = try store.dailyCounters(days: days).map(Counter.init)
        let decoder = JSONDecoder()
        heldNotifications = try store.records(table: NotificationMachine.table)
            .compactMap { try? decoder.decode(RunNotification.self, from: Data($0.value.utf8)) }
            .sorted { ($0.runID, $0.kind.rawValue) < ($1.runID, $1.kind.rawValue) }
            .map(HeldNotification.init)
    }
}
