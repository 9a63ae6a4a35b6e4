import Foundation
@_spi(Benchmarks) import RefreshdCore
@_spi(Benchmarks) import RefreshdRuntime
import RefreshdSimulation
@_spi(Benchmarks) import RefreshdStore

/// The JSON of `/api/...`: each page's facts, which the page renders, so the API mirrors the
/// pages field for field. Built from the engine's own Codable types (`SchedulerSnapshot`,
/// `StatusReport`, `TimelineSnapshot`, `ActivitySnapshot`, `WhyReport`), the shapes the control
/// socket replies with.

struct OverviewData: Codable, Sendable {
    var now: Instant
    /// Runs started in the last 24 h, by outcome (`running` for those without an end).
    var last24h: [String: Int]
    var runsLast24h: Int
    /// True when the window held more runs than the dashboard reads (`Views.maxWindowRuns`).
    var truncated: Bool
    var running: [SchedulerSnapshot.Run]
    var failing: [FailingJob]
    var next: [SchedulerSnapshot.Pending]
    var staleWidgets: [TimelineSnapshot.Widget]
    var liveActivities: [ActivitySnapshot.Entry]
    var recentRuns: [StatusReport.Run]
    var violations: [InvariantViolation]
    /// Failure notifications waiting to be delivered, and those given up or dropped.
    var notifications: NotificationsData
}

struct FailingJob: Codable, Sendable {
    var identifier: String
    var lastOutcome: String
    var lastRunID: Int64
    var retryStreak: Int
}

struct JobRow: Codable, Sendable {
    var identifier: String
    var kind: TaskKind
    /// The kind as the job file names it: `app-refresh`, `processing`, or `timeline` (a
    /// widget's job, whose providers run as processing tasks).
    var kindName: String
    /// For a template: its instances counted (a template itself never runs).
    var instances: InstanceCounts?
    /// The schedule in words: "every day at 04:00 (Europe/Paris), up to 10 min later".
    var schedule: String
    var next: Instant?
    /// Where the pending request waits (`queued`, `waitingOnConditions`, `blockedByRun`, `held`, `paused`).
    var nextPlace: String?
    /// The pause that holds it (its own, or its template's), and since when (issue 33).
    var paused: SchedulerSnapshot.Paused?
    var running: SchedulerSnapshot.Run?
    var lastRun: StatusReport.Run?
    var retryStreak: Int
    /// Conditions the job needs that do not hold now ("external power", "network").
    var unmet: [String]
    var why: WhyReport
}

/// A template's instances: how many, and how many are pending, running and failing.
struct InstanceCounts: Codable, Sendable {
    var count: Int
    var pending: Int
    var running: Int
    /// A failure streak above zero (`SearchState.failing`).
    var failing: Int

    /// Counted from the live facts (pending, running) and `failing` (`Views.failingInstances`).
    static func make(_ template: String, count: Int, _ live: Live, failing: Int) -> InstanceCounts {
        let prefix = template + "["
        return InstanceCounts(count: count, pending: live.snapshot.pending.count(where: { $0.identifier.hasPrefix(prefix) }),
                              running: live.snapshot.runs.count(where: { $0.identifier.hasPrefix(prefix) }), failing: failing)
    }
}

struct JobsData: Codable, Sendable {
    var now: Instant
    /// A page of the jobs the search finds (every job without one), by identifier.
    var jobs: [JobRow]
    var search: SearchQuery
    var page: PageInfo
}

struct RunRow: Codable, Sendable {
    var run: StatusReport.Run
    var durationMilliseconds: Int64?
    var allowanceMilliseconds: Int64
    /// The run's kept output and results lines (`run.output`, `run.results`: the store's).
    var output: [String] { run.output ?? [] }
    var results: [String] { run.results ?? [] }
}

struct JobData: Codable, Sendable {
    var now: Instant
    var job: JobRow
    var command: [String]?
    var action: String?
    var allowanceMilliseconds: Int64
    var runs: [RunRow]
    /// Ask again with `?before=` this for older runs.
    var nextBefore: Int64?
    var nextSlots: [Instant]
    var actionsEnabled: Bool
    /// This job's (or its instances') held and given-up notifications.
    var notifications: NotificationsData
    /// For a template: its instances, folded (count, failing ones, a page of the list).
    var template: TemplateData?
    /// For an instance (`TEMPLATE[KEY]`): its template.
    var instanceOf: String?
}

/// A template's instances on its page: how many, which are failing, and a page of the list.
struct TemplateData: Codable, Sendable {
    var parameters: [String]
    var count: Int
    /// Instances whose runs are failing (a retry streak, or the last run failed), at most 50.
    var failing: [FailingJob]
    var failingMore: Bool
    /// A page of the instances the search finds (every instance without one), in identifier
    /// order (`?after=KEY` for the next page, `?beforeKey=KEY` for the previous).
    var instances: [InstanceRecord]
    var nextAfter: String?
    var search: SearchQuery
    var page: PageInfo
}

/// `/api/simulate`: `refreshd simulate` of the jobs folder, as the Simulate page shows it.
struct SimulateData: Codable, Sendable {
    var jobsFolder: String
    var start: Instant
    var days: Int
    var seed: UInt64
    /// Nil when the whole span was simulated; otherwise why it stopped early.
    var stopped: String?
    var elapsedMilliseconds: Int64
    var steps: Int
    var total: SimulationReport.Figures
    var violations: [SimulationReport.Violation]
    /// The report as `refreshd simulate` prints it.
    var text: String
    /// The report's picture (`simulate --svg`).
    var svg: String
    /// Jobs in force that the folder no longer has, and jobs of the folder not in force (an
    /// edit refused or not yet applied): the page simulates the folder.
    var notInFolder: [String]
    var notInForce: [String]
}

struct WidgetRow: Codable, Sendable {
    var widget: TimelineSnapshot.Widget
    /// The shown entry's image, relative to the shared container, if its content names one.
    var rendition: String?
    var entries: [TimelineEntry]
    /// Counted reloads in the budget's trailing window, oldest first.
    var ledger: [Instant]
}

struct WidgetsData: Codable, Sendable {
    var now: Instant
    var widgets: [WidgetRow]
    var actionsEnabled: Bool
}

struct ActivitiesData: Codable, Sendable {
    var now: Instant
    var activities: ActivitySnapshot
    var actionsEnabled: Bool
}

/// `/cluster` on a node (issue 32): who leads each shard, at which epoch and until when (the
/// database's leases, the same on every node), the nodes that lead, and this node's own latest
/// lease events (takeovers, releases, fences), newest first.
struct ClusterData: Codable, Sendable {
    struct Node: Codable, Sendable {
        var name: String
        var shards: [Int]
    }

    struct Event: Codable, Sendable {
        var at: Instant
        var line: String
    }

    var now: Instant
    var cluster: ClusterStatus
    var nodes: [Node]
    var unled: [Int]
    var events: [Event]

    static let maxEvents = 100

    init(now: Instant, cluster: ClusterStatus, history: [(at: Instant, line: String)]) {
        self.now = now
        self.cluster = cluster
        let led = cluster.shards.filter(\.led)
        nodes = Dictionary(grouping: led, by: { $0.owner ?? "" }).map { Node(name: $0.key, shards: $0.value.map(\.shard).sorted()) }
            .sorted { $0.name < $1.name }
        unled = cluster.shards.filter { !$0.led }.map(\.shard)
        events = history.suffix(Self.maxEvents).reversed().map { Event(at: $0.at, line: $0.line) }
    }
}

/// How the pages' facts are put together from the live facts and the store.
enum Views {
    /// The most runs of the last 24 h read for the overview (its counts say when there were more).
    static let maxWindowRuns = 5000
    static let pageSize = 20

    /// Whether a run is the job's own or, for a timeline job, one of its families' provider runs
    /// (`JOB#FAMILY`).
    static func belongs(_ runIdentifier: String, to job: String) -> Bool {
        runIdentifier == job || (runIdentifier.hasPrefix(job) && runIdentifier.dropFirst(job.count).first == "#")
    }

    static func overview(_ live: Live, window: [RunRecord], truncated: Bool, status: StatusReport,
                         notifications: NotificationsData) -> OverviewData {
        var counts: [String: Int] = [:]
        for run in window { counts[run.outcome?.rawValue ?? "running", default: 0] += 1 }
        let streaks = Dictionary(live.snapshot.failureStreaks.map { ($0.identifier, $0.count) }, uniquingKeysWith: max)
        // Failing: a failure streak above zero (`SearchState.failing`, the core's count).
        let failing = status.jobs.compactMap { job -> FailingJob? in
            let streak = streaks[job.identifier] ?? 0
            guard streak > 0 else { return nil }
            return FailingJob(identifier: job.identifier, lastOutcome: job.lastOutcome, lastRunID: job.lastRun.runID, retryStreak: streak)
        }
        return OverviewData(
            now: live.now, last24h: counts, runsLast24h: window.count, truncated: truncated,
            running: live.snapshot.runs, failing: failing, next: Array(live.snapshot.pending.prefix(10)),
            staleWidgets: live.timelines.widgets.filter { $0.staleSince != nil },
            liveActivities: live.activities.activities.filter { $0.state.isLive },
            recentRuns: window.prefix(10).map(StatusReport.Run.init), violations: live.violations,
            notifications: notifications)
    }

    /// A job's row: its live facts, its last run, and `why` from the shared explainer, with the
    /// store's parts (`allRuns`: the latest 500, `counters`: 7 days) read off the loop.
    static func jobRow(_ spec: JobSpec, id: String? = nil, _ live: Live, lastRun: StatusReport.Run?, allRuns: [RunRecord],
                       counters: [DailyCounter], instances: InstanceCounts? = nil) -> JobRow {
        let id = id ?? spec.identifier
        // A template's row tells of its instances: the first pending one, the longest streak.
        let mine = { (other: String) in other == id || (instances != nil && other.hasPrefix(id + "[")) }
        let pending = live.snapshot.pending.filter { mine($0.identifier) }.min { $0.earliest < $1.earliest }
        let running = live.snapshot.runs.first { mine($0.identifier) }
        let streak = live.snapshot.failureStreaks.filter { mine($0.identifier) }.map(\.count).max() ?? 0
        var unmet: [String] = []
        if spec.definition.requiresExternalPower, !live.snapshot.conditions.externalPower { unmet.append("external power") }
        if spec.definition.requiresNetworkConnectivity, !live.snapshot.conditions.network { unmet.append("network") }
        let schedule = Words.schedule(spec) + (spec.template != nil ? "; a template: its instances run, it never does" : "")
        let kindName = spec.widget != nil ? "timeline" : spec.definition.kind.rawValue
        return JobRow(identifier: id, kind: spec.definition.kind, kindName: kindName, instances: instances, schedule: schedule,
                      next: pending?.earliest, nextPlace: pending?.place?.rawValue,
                      paused: WhyFacts.pause(of: id, among: live.snapshot.paused ?? []), running: running,
                      lastRun: lastRun, retryStreak: streak, unmet: unmet,
                      why: why(id, live, allRuns: allRuns, counters: counters))
    }

    /// `why` as `RefreshRuntime.whyFacts` gathers it for the control socket, but with the store's
    /// part read on the dashboard's connection instead of on the loop; the explanation is the
    /// shared `WhyExplainer`.
    static func why(_ id: String, _ live: Live, allRuns: [RunRecord], counters: [DailyCounter]) -> WhyReport {
        let core = live.snapshot
        let definition = live.definitions[id]
        let runs = allRuns.filter { $0.identifier == id }.prefix(5).map(StatusReport.Run.init)
        let missed = counters.filter { $0.identifier == id && $0.missed > 0 }.map { (day: $0.day, count: $0.missed) }
        let widget = live.timelines.widgets.first {
            WidgetSpec.providerIdentifier(job: $0.job, family: $0.family.rawValue) == id
        }
        var facts = WhyFacts(identifier: id, now: live.now, live: true, definition: definition,
                             knownUndeclared: definition == nil,
                             pending: core.pending.first { $0.identifier == id },
                             running: core.runs.first { $0.identifier == id }, runsInFlight: core.runs,
                             maxConcurrentRuns: live.maxConcurrentRuns, conditions: core.conditions,
                             failureStreak: core.failureStreaks.first { $0.identifier == id }?.count ?? 0,
                             recentRuns: Array(runs), missedByDay: missed,
                             recentEvents: live.recent.filter { $0.identifier == id }, widget: widget)
        facts.addSubject(jobs: Array(live.jobs.values), timelines: live.timelines, activities: live.activities, runs: allRuns)
        facts.paused = WhyFacts.pause(of: id, among: core.paused ?? [])
        return WhyExplainer.explain(facts)
    }

    /// A template's instances that are failing: a failure streak above zero (`SearchState.failing`).
    static func failingInstances(of template: String, _ live: Live, status: StatusReport) -> [FailingJob] {
        let prefix = template + "["
        var streaks: [String: Int] = [:]
        for streak in live.snapshot.failureStreaks where streak.identifier.hasPrefix(prefix) { streaks[streak.identifier] = streak.count }
        var rows: [FailingJob] = []
        var seen = Set<String>()
        for job in status.jobs where job.identifier.hasPrefix(prefix) {
            let streak = streaks[job.identifier] ?? 0
            guard streak > 0 else { continue }
            seen.insert(job.identifier)
            rows.append(FailingJob(identifier: job.identifier, lastOutcome: job.lastOutcome, lastRunID: job.lastRun.runID, retryStreak: streak))
        }
        return rows.sorted { ($0.retryStreak, $0.lastRunID) > ($1.retryStreak, $1.lastRunID) }
    }

    static func runRow(_ record: RunRecord) -> RunRow {
        RunRow(run: StatusReport.Run(record),
               durationMilliseconds: record.ended.map { $0.milliseconds - record.started.milliseconds },
               allowanceMilliseconds: record.deadline.milliseconds - record.started.milliseconds)
    }

    /// The next `count` slots of a calendar job after `now` (none for other jobs).
    static func nextSlots(_ spec: JobSpec, after now: Instant, count: Int = 10) -> [Instant] {
        guard let schedule = spec.definition.schedule else { return [] }
        var slots: [Instant] = []
        var t = now
        while slots.count < count, let next = schedule.next(after: t) {
            slots.append(next)
            t = next
        }
        return slots
    }

    /// The rendition an entry's content names (`{"rendition": "relative/path.jpg"}`), if any.
    static func rendition(of entry: TimelineEntry?) -> String? {
        guard let content = entry?.content,
              let object = try? JSONSerialization.jsonObject(with: Data(content.utf8)) as? [String: Any],
              let path = object["rendition"] as? String, !path.isEmpty else { return nil }
        return path
    }
}
