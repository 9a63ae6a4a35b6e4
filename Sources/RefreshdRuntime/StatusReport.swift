import Foundation
import RefreshdCore

/// What `refreshd status --json` prints, as a Codable value: pending requests, recent runs,
/// each job's last run, the per-day counters, and the widget timelines and live activities
/// (`timelines`, `activities`: from the live machines, or rebuilt from the saved records by
/// `SavedMachineState` when refreshd is not running). One type for the status command, the control
/// socket to come and anything else that reads a store, whichever store it is.
package struct StatusReport: Codable, Sendable, Equatable {
    package struct Pending: Codable, Sendable, Equatable {
        package var identifier: String
        package var kind: TaskKind
        package var namespace: String
        package var earliest: Instant
        package var submitted: Instant
        package var origin: PendingRequest.Origin
        package var requiresExternalPower: Bool
        package var requiresNetworkConnectivity: Bool
        /// In cluster mode: the shard whose state holds it (nil on one machine).
        package var shard: Int?

        package init(_ p: PendingRequest) {
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

    package struct Run: Codable, Sendable, Equatable {
        package var runID: Int64
        package var identifier: String
        package var kind: TaskKind
        package var submitted: Instant
        package var earliest: Instant
        package var started: Instant
        package var deadline: Instant
        package var attempt: Int
        /// The outcome's name, or `running` for a run without an end.
        package var outcome: String
        package var ended: Instant?
        package var exitStatus: Int32?
        package var signal: Int32?
        /// Why it ended so, when the outcome and exit do not say it ("memory limit").
        package var reason: String?
        /// CPU time of its processes (microseconds) and their peak memory (bytes), where measured.
        package var cpuMicroseconds: Int64?
        package var peakMemoryBytes: Int64?
        /// The last lines it printed, as the store keeps them (`RunOutput`); absent when none
        /// were kept (or read: a job's last run in `jobs` has none).
        package var output: [String]?
        /// Lines printed before `output` and not kept.
        package var outputEarlier: Int?
        /// Its accepted results lines (compact JSON).
        package var results: [String]?
        /// True when the report left its kept output out (`StatusReport.outputBudget`).
        package var outputOmitted: Bool?

        package init(_ r: RunRecord) {
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
            reason = r.reason
            cpuMicroseconds = r.usage.cpuMicroseconds
            peakMemoryBytes = r.usage.peakMemoryBytes
            output = r.output.lines.isEmpty ? nil : r.output.lines
            outputEarlier = r.output.earlier == 0 ? nil : r.output.earlier
            results = r.output.results.isEmpty ? nil : r.output.results
        }

        /// Lines `status` prints under a run that did not succeed: the last `count` lines it
        /// printed (`    | line`), after how many more the state keeps; none for a success or a
        /// run still running.
        package func outputExcerpt(_ count: Int = 3) -> [String] {
            guard outcome != Outcome.success.rawValue, outcome != "running", let output, !output.isEmpty else { return [] }
            let shown = output.suffix(count)
            let more = output.count - shown.count + (outputEarlier ?? 0)
            var lines = more > 0 ? ["    | ... \(more) line\(more == 1 ? "" : "s") before these"] : []
            lines += shown.map { "    | " + $0 }
            return lines
        }

        /// `  cpu 0.21s, peak memory 12.3 MiB`, what `status` adds to an ended run's line
        /// (empty where nothing was measured).
        package var costText: String {
            RunUsage(cpuMicroseconds: cpuMicroseconds, peakMemoryBytes: peakMemoryBytes).summary.map { "  " + $0 } ?? ""
        }
    }

    package struct Job: Codable, Sendable, Equatable {
        package var identifier: String
        package var lastOutcome: String
        package var lastRun: Run
    }

    package struct Counter: Codable, Sendable, Equatable {
        package var day: String
        package var identifier: String
        package var launches: Int
        package var success: Int
        package var failure: Int
        package var expired: Int
        package var crashed: Int
        package var interrupted: Int
        package var missed: Int

        package init(_ c: DailyCounter) {
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

    package var pending: [Pending]
    package var runs: [Run]
    package var jobs: [Job]
    package var counters: [Counter]
    /// Every widget: entry shown, next switch, policy, next reload and why, budget, staleness.
    package var timelines: TimelineSnapshot?
    /// Every live or ended activity: state, progress, stale date, dismissal, held updates.
    package var activities: ActivitySnapshot?
    /// When `runs` is a full page: ask again with this as `before` for the next (older) page.
    package var nextBefore: Int64?
    /// Failure and recovery notifications committed and not yet delivered (a receiver down, or
    /// refreshd stopped before it could send them), oldest run first: the next start sends them.
    package var heldNotifications: [HeldNotification] = []
    /// In cluster mode (issue 24): who leads each shard, from the database; the report's other
    /// parts are every shard's, merged.
    package var cluster: ClusterStatus?
    /// How the running refreshd tracks its runs' processes, and why (issue 35); only live.
    package var processTracking: ProcessTracking?
    /// Paused jobs, instances and templates and since when (issue 33), by identifier: they keep
    /// their pending requests and launch nothing until resumed.
    package var paused: [SchedulerSnapshot.Paused] = []

    /// A notification waiting to be delivered, as its record holds it.
    package struct HeldNotification: Codable, Sendable, Equatable {
        package var id: String
        /// `failure` or `recovery`.
        package var kind: String
        package var job: String
        package var runID: Int64
        package var outcome: String
        package var ended: Instant
        /// `webhook URL` or `command PROGRAM`.
        package var notifier: String
        /// Attempts made so far, as last committed.
        package var attempts: Int

        package init(_ n: RunNotification) {
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
    package init(store: any StateStoring, runs: Int, days: Int, before: Int64? = nil) throws {
        pending = try store.pendingRequests().map(Pending.init)
        self.runs = Self.withinOutputBudget(try store.recentRuns(limit: runs, before: before).map(Run.init))
        if runs > 0, self.runs.count == runs, let oldest = self.runs.last?.runID, oldest > 1 { nextBefore = oldest }
        jobs = try store.lastRunPerJob().map { Job(identifier: $0.identifier, lastOutcome: $0.outcome?.rawValue ?? "running",
                                                     lastRun: Run($0)) }
        counters = try store.dailyCounters(days: days).map(Counter.init)
        let decoder = JSONDecoder()
        heldNotifications = try store.records(table: NotificationMachine.table)
            .compactMap { try? decoder.decode(RunNotification.self, from: Data($0.value.utf8)) }
            .sorted { ($0.runID, $0.kind.rawValue) < ($1.runID, $1.kind.rawValue) }
            .map(HeldNotification.init)
        paused = try Self.paused(in: store)
    }

    /// The most bytes of kept output one report carries (the control socket queues at most
    /// 4 MiB for a client): newest runs first; older runs of a long page go without theirs
    /// (`output` absent, `outputOmitted`), a smaller page (`--runs`, `--before`) shows it.
    package static let outputBudget = 2 * 1024 * 1024

    static func withinOutputBudget(_ runs: [Run]) -> [Run] {
        var left = outputBudget
        return runs.map { run in
            let bytes = (run.output ?? []).reduce(0) { $0 + $1.utf8.count + 1 } + (run.results ?? []).reduce(0) { $0 + $1.utf8.count + 1 }
            guard bytes > left else {
                left -= bytes
                return run
            }
            var trimmed = run
            trimmed.output = nil
            trimmed.outputEarlier = nil
            trimmed.results = nil
            trimmed.outputOmitted = true
            left = 0
            return trimmed
        }
    }

    /// The pauses a store holds (issue 33), by identifier.
    package static func paused(in store: any StateStoring) throws -> [SchedulerSnapshot.Paused] {
        SchedulerCore.pauses(in: try store.records(table: SchedulerCore.pausedTable))
            .sorted { $0.key < $1.key }.map { SchedulerSnapshot.Paused(identifier: $0.key, since: $0.value) }
    }
}

/// How the host tracks a command run's processes, and why (issue 35): the start log line and
/// `status` show it.
package struct ProcessTracking: Codable, Sendable, Equatable {
    /// `cgroup`: a cgroup per run (killed whole at the run's end); `subreaper`: refreshd is a
    /// child subreaper and sweeps /proc at each run's end; `sweep`: the /proc sweep alone (a
    /// scheduler embedded in another program's process).
    package var mode: String
    /// Why this mode: the layout chosen, or why no cgroup can be used.
    package var reason: String
    /// The runs' parent cgroup directory, with `cgroup`.
    package var cgroup: String?
    /// Where refreshd's own process lives (its `supervisor/` leaf in a delegated subtree).
    package var home: String?
    /// The controllers enabled for the runs.
    package var controllers: [String]

    package init(mode: String, reason: String, cgroup: String? = nil, home: String? = nil, controllers: [String] = []) {
        self.mode = mode
        self.reason = reason
        self.cgroup = cgroup
        self.home = home
        self.controllers = controllers
    }

    /// One line: `a cgroup per run under DIR (why)`, or `no cgroup per run (why): ...`.
    package var summary: String {
        switch mode {
        case "cgroup": "a cgroup per run under \(cgroup ?? "?") (\(reason))"
        case "subreaper": "no cgroup per run (\(reason)): refreshd is a child subreaper and sweeps /proc at each run's end"
        default: "no cgroup per run (\(reason)): a run's processes are found by process group, session and environment (/proc sweep)"
        }
    }
}
