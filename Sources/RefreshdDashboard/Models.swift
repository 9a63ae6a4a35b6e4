import Foundation
import RefreshdCore
import RefreshdRuntime
import RefreshdSimulation
import RefreshdStore
import RefreshdDaemon

/// The JSON of `/api/...`: each page's facts, which the page renders, so the API mirrors the
/// pages field for field. Built from the engine's own Codable types (`SchedulerSnapshot`,
/// `StatusReport`, `TimelineSnapshot`, `ActivitySnapshot`, `WhyReport`), the shapes the control
/// socket replies with.

package struct OverviewData: Codable, Sendable {
    var now: Instant
    /// Runs started in the last 24 h, by outcome (`running` for those without an end).
    var last24h: [String: Int]
    var runsLast24h: Int
    /// True when the window held more runs than the dashboard reads (`Views.maxWindowRuns`).
    var truncated: Bool
    var running: [SchedulerSnapshot.Run]
    /// Failing jobs (a template's instances are counted on its row in `templates`).
    var failing: [FailingJob]
    /// One row a template: its instances counted by the store (issue 33, item 6).
    var templates: [TemplateRow]
    /// The first pending requests (a template's instances' are counted on its row).
    var next: [SchedulerSnapshot.Pending]
    var staleWidgets: [TimelineSnapshot.Widget]
    var liveActivities: [ActivitySnapshot.Entry]
    var recentRuns: [StatusReport.Run]
    var violations: [InvariantViolation]
    /// Failure notifications waiting to be delivered, and those given up or dropped.
    var notifications: NotificationsData
}

package struct FailingJob: Codable, Sendable {
    var identifier: String
    var lastOutcome: String
    var lastRunID: Int64
    var retryStreak: Int
}

/// A template on the overview: its instances counted by state, and their longest failure streak.
struct TemplateRow: Codable, Sendable {
    var identifier: String
    var instances: InstanceCounts
    var longestStreak: Int
}

package struct JobRow: Codable, Sendable {
    var identifier: String
    var kind: TaskKind
    /// The kind as the job file names it: `app-refresh`, `processing`, or `timeline` (a
    /// widget's job, whose providers run as processing tasks).
    var kindName: String
    /// For a template: its instances counted by the store (a template itself never runs; its
    /// `next`, `running` and `lastRun` are then nil: the latest of its instances' runs is
    /// `lastRun` only if among the 500 latest runs).
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

package struct JobsData: Codable, Sendable {
    var now: Instant
    /// A page of the jobs the search finds (every job without one), by identifier.
    var jobs: [JobRow]
    var search: SearchQuery
    var page: PageInfo
}

package struct RunRow: Codable, Sendable {
    var run: StatusReport.Run
    var durationMilliseconds: Int64?
    var allowanceMilliseconds: Int64
    /// The run's kept output and results lines (`run.output`, `run.results`: the store's).
    var output: [String] { run.output ?? [] }
    var results: [String] { run.results ?? [] }
}

package struct JobData: Codable, Sendable {
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
package struct TemplateData: Codable, Sendable {
    var parameters: [String]
    var count: Int
    /// Its instances counted by state (the store's, on its indexes).
    var counts: InstanceCounts
    /// Instances with a failure streak, the first 50 in key order (`counts.failing` in all).
    var failing: [FailingJob]
    var failingMore: Bool
    /// A page of the instances the search finds (every instance without one), in identifier
    /// order (`?after=KEY` for the next page, `?beforeKey=KEY` for the previous), each with its
    /// state (a timeline template's providers' folded in).
    var instances: [InstanceRow]
    var nextAfter: String?
    var search: SearchQuery
    var page: PageInfo
}

/// An instance in its template's list: its values, and what it is doing (its own state and,
/// for a timeline template, its widget providers', `T[K]#family`).
package struct InstanceRow: Codable, Sendable {
    var template: String
    var key: String
    var values: [String: String]
    var next: Instant?
    var running: Int64?
    var retryStreak: Int
    var paused: Bool
    var lastRun: StatusReport.Run?

    var valuesText: String { InstanceRecord(template: template, key: key, values: values).valuesText }

    init(_ record: InstanceRecord, _ state: IdentifierState?) {
        (template, key, values) = (record.template, record.key, record.values)
        next = state?.pending
        running = state?.running
        retryStreak = state?.failureStreak ?? 0
        paused = state?.paused ?? false
        lastRun = state?.lastRun.map(StatusReport.Run.init)
    }
}

/// `/api/simulate`: `refreshd simulate` of the jobs folder, as the Simulate page shows it.
package struct SimulateData: Codable, Sendable {
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
    package var svg: String
    /// Jobs in force that the folder no longer has, and jobs of the folder not in force (an
    /// edit refused or not yet applied): the page simulates the folder.
    var notInFolder: [String]
    var notInForce: [String]
}

package struct WidgetRow: Codable, Sendable {
    var widget: TimelineSnapshot.Widget
    /// The shown entry's image, relative to the shared container, if its content names one.
    var rendition: String?
    var entries: [TimelineEntry]
    /// Counted reloads in the budget's trailing window, oldest first.
    var ledger: [Instant]
}

package struct WidgetsData: Codable, Sendable {
    var now: Instant
    var widgets: [WidgetRow]
    var actionsEnabled: Bool
}

package struct ActivitiesData: Codable, Sendable {
    var now: Instant
    var activities: ActivitySnapshot
    var actionsEnabled: Bool
}

/// `/cluster` on a node (issue 32): who leads each shard, at which epoch and until when (the
/// database's leases, the same on every node), the nodes that lead, and this node's own latest
/// lease events (takeovers, releases, fences), newest first.
package struct ClusterData: Codable, Sendable {
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
package enum Views {
    /// The most runs of the last 24 h read for the overview (its counts say when there were more).
    package static let maxWindowRuns = 5000
    package static let pageSize = 20

    /// Whether a run is the job's own or, for a timeline job, one of its families' provider runs
    /// (`JOB#FAMILY`).
    package static func belongs(_ runIdentifier: String, to job: String) -> Bool {
        runIdentifier == job || (runIdentifier.hasPrefix(job) && runIdentifier.dropFirst(job.count).first == "#")
    }

    /// The template an identifier's state counts for: an instance's (`T[K]`) or one of its
    /// providers' (`T[K]#family`); nil for a job's own.
    package static func template(of identifier: String) -> String? {
        let own = identifier.firstIndex(of: "#").map { String(identifier[..<$0]) } ?? identifier
        return InstanceName.split(own)?.template
    }

    /// `lastRuns`: the failing jobs' (`states(of:)`); `templates`: each template's counts.
    package static func overview(_ live: Live, window: [RunRecord], truncated: Bool, lastRuns: [String: IdentifierState],
                         templates: [String: InstanceCounts], notifications: NotificationsData) -> OverviewData {
        var counts: [String: Int] = [:]
        for run in window { counts[run.outcome?.rawValue ?? "running", default: 0] += 1 }
        // Failing: a failure streak above zero (`SearchState.failing`, the core's count); an
        // instance's on its template's row.
        var longest: [String: Int] = [:]
        var failing: [FailingJob] = []
        for streak in live.snapshot.failureStreaks where streak.count > 0 {
            if let template = template(of: streak.identifier) {
                longest[template] = max(longest[template] ?? 0, streak.count)
                continue
            }
            let last = lastRuns[streak.identifier]?.lastRun
            failing.append(FailingJob(identifier: streak.identifier, lastOutcome: last.map { $0.outcome?.rawValue ?? "running" } ?? "none",
                                      lastRunID: last?.runID ?? 0, retryStreak: streak.count))
        }
        let rows = templates.sorted { $0.key < $1.key }.map { TemplateRow(identifier: $0.key, instances: $0.value, longestStreak: longest[$0.key] ?? 0) }
        return OverviewData(
            now: live.now, last24h: counts, runsLast24h: window.count, truncated: truncated,
            running: live.snapshot.runs, failing: failing, templates: rows,
            next: Array(live.snapshot.pending.lazy.filter { template(of: $0.identifier) == nil }.prefix(10)),
            staleWidgets: live.timelines.widgets.filter { $0.staleSince != nil },
            liveActivities: live.activities.activities.filter { $0.state.isLive },
            recentRuns: window.prefix(10).map(StatusReport.Run.init), violations: live.violations,
            notifications: notifications)
    }

    /// A job's row: its live facts, its last run, and its `why` (`Views.why`, read off the loop).
    package static func jobRow(_ spec: JobSpec, id: String? = nil, _ live: Live, lastRun: StatusReport.Run?, why: WhyReport,
                       instances: InstanceCounts? = nil) -> JobRow {
        let id = id ?? spec.identifier
        // A template's row tells of its instances by their counts (`instances`, the store's) and
        // their longest streak; the live facts hold only its failing and paused instances'
        // requests, so its own row has no next request or run.
        let pending = instances != nil ? nil : live.snapshot.pending.first { $0.identifier == id }
        let running = instances != nil ? nil : live.snapshot.runs.first { $0.identifier == id }
        let streak = live.snapshot.failureStreaks.filter { instances != nil ? template(of: $0.identifier) == id : $0.identifier == id }
            .map(\.count).max() ?? 0
        var unmet: [String] = []
        if spec.definition.requiresExternalPower, !live.snapshot.conditions.externalPower { unmet.append("external power") }
        if spec.definition.requiresNetworkConnectivity, !live.snapshot.conditions.network { unmet.append("network") }
        let schedule = Words.schedule(spec) + (spec.template != nil ? "; a template: its instances run, it never does" : "")
        let kindName = spec.widget != nil ? "timeline" : spec.definition.kind.rawValue
        return JobRow(identifier: id, kind: spec.definition.kind, kindName: kindName, instances: instances, schedule: schedule,
                      next: pending?.earliest, nextPlace: pending?.place?.rawValue,
                      paused: WhyFacts.pause(of: id, among: live.snapshot.paused ?? []), running: running,
                      lastRun: lastRun, retryStreak: streak, unmet: unmet,
                      why: why)
    }

    /// `why` as every asker gathers it (`WhyFacts.gather`), on the dashboard's store queue:
    /// `store` holds the identifier (`StateReader.store(of:)`), `counters` are 7 days' read once
    /// for the page. One machine's facts are its scheduler's memory (the live facts) and its
    /// store; a node's are the database's, as `refreshd why` on any node reads them.
    package static func why(_ id: String, _ live: Live, store: any StateStoring, counters: [DailyCounter]) throws -> WhyReport {
        let jobs = Array(live.jobs.values)
        let facts = try live.fromDatabase
            ? WhyFacts.gather(id, store: store, jobs: jobs, memory: nil, counters: counters,
                              machines: (live.timelines, live.activities), source: .database, now: live.now)
            : WhyFacts.gather(id, store: store, jobs: jobs, memory: live.whyMemory, counters: counters, now: live.now)
        return WhyExplainer.explain(facts)
    }

    package static func runRow(_ record: RunRecord) -> RunRow {
        RunRow(run: StatusReport.Run(record),
               durationMilliseconds: record.ended.map { $0.milliseconds - record.started.milliseconds },
               allowanceMilliseconds: record.deadline.milliseconds - record.started.milliseconds)
    }

    /// The next `count` slots of a calendar job after `now` (none for other jobs).
    package static func nextSlots(_ spec: JobSpec, after now: Instant, count: Int = 10) -> [Instant] {
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
    package static func rendition(of entry: TimelineEntry?) -> String? {
        guard let content = entry?.content,
              let object = try? JSONSerialization.jsonObject(with: Data(content.utf8)) as? [String: Any],
              let path = object["rendition"] as? String, !path.isEmpty else { return nil }
        return path
    }
}
