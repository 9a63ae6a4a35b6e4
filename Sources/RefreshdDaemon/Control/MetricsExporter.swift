import CoreMetrics
import Foundation
import Prometheus
import RefreshdCore
import RefreshdRuntime

/// refreshd's metrics, kept with swift-metrics and exposed in the Prometheus text format by
/// swift-prometheus (its own registry, not the process-wide `MetricsSystem`, so embedding
/// applications and tests keep theirs).
///
/// Fed on the loop thread from the runtime's observations and snapshots:
/// - `refreshd_pending_requests` and `refreshd_runs_in_flight` (gauges);
/// - `refreshd_launches_total{job}`, `refreshd_runs_total{job,outcome}`,
///   `refreshd_missed_slots_total{job}` (counters since this process started);
/// - `refreshd_launch_lateness_seconds{job}` (histogram: launch after the earliest begin date);
/// - `refreshd_notifications_total{job,kind,result}` (counter: failure and recovery notifications
///   delivered, retried, given up or dropped; issue 25);
/// - `refreshd_run_cpu_seconds{job}` and `refreshd_run_peak_memory_bytes{job}` (histograms: what
///   each ended command run used, where measured: from its cgroup, else from its zombie; issue 35).
/// An instance of a template (`template[key]`) counts under its template's `job` label; what
/// is per instance is bounded (issue 23): `refreshd_failing_instances{job}` (gauge: instances of
/// the template whose last attempts failed) and `refreshd_failing_instance_streak{job,instance}`
/// (gauge: the consecutive failures of the template's `FailingInstances.top` most failing instances, most
/// first, ties by key; an instance that leaves the top or recovers loses its series), so a
/// million users are at most 10 series a template, not a million.
///
/// - `refreshd_widget_budget_left{kind,family}` (gauge; not emitted for an unlimited budget),
///   `refreshd_widget_stale{kind,family}` (1 while stale), `refreshd_stale_widgets` (gauges);
///   a timeline template's instances' widgets only as `refreshd_template_widgets{job}` and
///   `refreshd_template_widgets_stale{job}` (no series per instance's kind);
/// - `refreshd_activities{state}` (gauge: activities in each state, `dismissed` the recent ones).
/// - `refreshd_paused{job}` (gauge, issue 33): 1 while the job or template is paused; an
///   instance paused on its own adds 1 under its template's label; 0 once resumed.
///
/// `writeFile` replaces the file atomically (temporary file, then rename) for
/// node_exporter's textfile collector.
///
/// A cluster node keeps one too (`countsRuns` false): the same families from the observations
/// of the shards it leads and the database's gauges, but not the per-job run counters, which a
/// node reads from the database's daily counters so that every node answers the same
/// (`ClusterControl.metricsText`). Its shards' loops feed it at once: calls hold `lock`.
final class MetricsExporter: @unchecked Sendable {
    let registry = PrometheusCollectorRegistry()
    /// Whether `refreshd_launches_total`, `refreshd_runs_total` and
    /// `refreshd_missed_slots_total` are counted from the observations (one machine).
    let countsRuns: Bool
    private let lock = NSLock()
    private let factory: PrometheusMetricsFactory
    private let pending: CoreMetrics.Gauge
    private let inFlight: CoreMetrics.Gauge
    private var runs: [String: CoreMetrics.Counter] = [:]
    private var launches: [String: CoreMetrics.Counter] = [:]
    private var missed: [String: CoreMetrics.Counter] = [:]
    private var lateness: [String: CoreMetrics.Timer] = [:]
    private var notifications: [String: CoreMetrics.Counter] = [:]
    private var budgetLeft: [String: CoreMetrics.Gauge] = [:]
    private var staleWidget: [String: CoreMetrics.Gauge] = [:]
    /// A timeline template's instances' widgets, folded (issue 23): counts by template, never a
    /// series per instance's kind.
    private var templateWidgets: [String: (widgets: CoreMetrics.Gauge, stale: CoreMetrics.Gauge)] = [:]
    private let staleWidgets: CoreMetrics.Gauge
    private var activityStates: [ActivityState: CoreMetrics.Gauge] = [:]
    static let latenessName = "refreshd_launch_lateness_seconds"
    static let cpuName = "refreshd_run_cpu_seconds"
    static let memoryName = "refreshd_run_peak_memory_bytes"
    private var cpu: [String: CoreMetrics.Timer] = [:]
    private var memory: [String: CoreMetrics.Recorder] = [:]
    private var failingInstances: [String: CoreMetrics.Gauge] = [:]
    /// `template\0key` -> its streak gauge, for the instances now in their template's top.
    private var instanceStreaks: [String: CoreMetrics.Gauge] = [:]
    /// Per job label, its paused gauge (kept at 0 once resumed, so the series stays readable).
    private var paused: [String: CoreMetrics.Gauge] = [:]

    init(countsRuns: Bool = true) {
        self.countsRuns = countsRuns
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets[Self.latenessName] = [
            .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(50), .milliseconds(100),
            .milliseconds(500), .seconds(1), .seconds(5), .seconds(30), .seconds(60), .seconds(300), .seconds(3600),
        ]
        factory.durationHistogramBuckets[Self.cpuName] = [
            .milliseconds(10), .milliseconds(50), .milliseconds(100), .milliseconds(500), .seconds(1), .seconds(5),
            .seconds(10), .seconds(30), .seconds(60), .seconds(300), .seconds(1800),
        ]
        // 1 MiB to 16 GiB, by fours.
        factory.valueHistogramBuckets[Self.memoryName] = (0...7).map { Double(1 << (20 + 2 * $0)) }
        self.factory = factory
        pending = CoreMetrics.Gauge(label: "refreshd_pending_requests", factory: factory)
        inFlight = CoreMetrics.Gauge(label: "refreshd_runs_in_flight", factory: factory)
        staleWidgets = CoreMetrics.Gauge(label: "refreshd_stale_widgets", factory: factory)
        pending.record(0)
        inFlight.record(0)
        staleWidgets.record(0)
        for state in ActivityState.allCases {
            let gauge = CoreMetrics.Gauge(label: "refreshd_activities", dimensions: [("state", state.rawValue)], factory: factory)
            gauge.record(0)
            activityStates[state] = gauge
        }
    }

    /// Every series of a job, at zero, so a scraper sees it before it first moves.
    func declare(_ identifier: String) {
        lock.lock()
        defer { lock.unlock() }
        guard countsRuns else { return }
        _ = launchCounter(identifier)
        _ = missedCounter(identifier)
        for outcome in Outcome.allCases { _ = runCounter(identifier, outcome.rawValue) }
    }

    func record(_ batch: [RuntimeObservation]) {
        lock.lock()
        defer { lock.unlock() }
        for o in batch {
            guard let observed = o.identifier else { continue }
            // An instance's series are its template's (issue 23): a label per instance would be
            // a million series for a million users.
            let id = InstanceName.split(observed)?.template ?? observed
            switch o.kind {
            case .launched:
                if countsRuns { launchCounter(id).increment() }
                if case let .launched(_, late)? = o.logMessage {
                    timer(id).recordNanoseconds(Self.nanoseconds(late))
                }
            case .finished:
                if countsRuns, let outcome = o.outcome { runCounter(id, outcome.rawValue).increment() }
                if case let .finished(_, _, _, _, _, _, usage)? = o.logMessage { record(usage, of: id) }
            case .interrupted:
                if countsRuns { runCounter(id, Outcome.interrupted.rawValue).increment() }
            case .missed:
                if countsRuns { missedCounter(id).increment(by: o.count ?? 1) }
            case .notified, .notificationRetry, .notificationGivenUp, .notificationDropped:
                if case let .notification(log)? = o.logMessage { notificationCounter(id, log).increment() }
            default:
                break
            }
        }
    }

    /// A lateness in nanoseconds for the histogram: negative counts as 0, and one beyond
    /// Int64's nanoseconds (292 years: an earliest begin date centuries back) saturates.
    static func nanoseconds(_ late: Duration) -> Int64 {
        let (ns, overflow) = max(0, late.wholeMilliseconds).multipliedReportingOverflow(by: 1_000_000)
        return overflow ? Int64.max : ns
    }

    /// `pendingCount`: every pending request (the snapshot may leave quiet instances' out).
    func record(_ snapshot: SchedulerSnapshot, pendingCount: Int? = nil) {
        lock.lock()
        defer { lock.unlock() }
        pending.record(pendingCount ?? snapshot.pending.count)
        inFlight.record(snapshot.runs.count)
        recordFailingInstances(snapshot.failureStreaks)
        recordPaused(snapshot.paused ?? [])
    }

    /// `refreshd_paused{job}`: what is paused, an instance under its template's label.
    private func recordPaused(_ pauses: [SchedulerSnapshot.Paused]) {
        var counts: [String: Int] = [:]
        for p in pauses { counts[InstanceName.split(p.identifier)?.template ?? p.identifier, default: 0] += 1 }
        for job in Set(paused.keys).union(counts.keys) {
            let gauge = paused[job] ?? CoreMetrics.Gauge(label: "refreshd_paused", dimensions: [("job", job)], factory: factory)
            paused[job] = gauge
            gauge.record(counts[job] ?? 0)
        }
    }

    /// The most failing instances of each template, from the core's failure streaks (only
    /// non-zero ones are kept there, so this is linear in the failing identifiers). Without
    /// `lock`: called by `record(_ snapshot:)`, or by a test on its one thread.
    func recordFailingInstances(_ streaks: [SchedulerSnapshot.FailureStreak]) {
        var byTemplate: [String: [(key: String, count: Int)]] = [:]
        for streak in streaks {
            guard let (template, key) = InstanceName.split(streak.identifier) else { continue }
            byTemplate[template, default: []].append((key, streak.count))
        }
        for template in Set(failingInstances.keys).union(byTemplate.keys) {
            let gauge = failingInstances[template]
                ?? CoreMetrics.Gauge(label: "refreshd_failing_instances", dimensions: [("job", template)], factory: factory)
            failingInstances[template] = gauge
            gauge.record(byTemplate[template]?.count ?? 0)
        }
        var top: [String: Int] = [:]
        for (template, failing) in byTemplate {
            for item in FailingInstances.most(failing) { top[template + "\u{0}" + item.key] = item.count }
        }
        for (name, gauge) in instanceStreaks where top[name] == nil {
            gauge.destroy()
            instanceStreaks[name] = nil
        }
        for (name, count) in top {
            let gauge = instanceStreaks[name] ?? {
                let parts = name.split(separator: "\u{0}", maxSplits: 1).map(String.init)
                return CoreMetrics.Gauge(label: "refreshd_failing_instance_streak",
                                         dimensions: [("job", parts[0]), ("instance", parts[1])], factory: factory)
            }()
            instanceStreaks[name] = gauge
            gauge.record(count)
        }
    }

    /// Each widget's budget left and staleness, and how many are stale.
    func record(_ timelines: TimelineSnapshot) {
        lock.lock()
        defer { lock.unlock() }
        var stale = 0
        var perTemplate: [String: (widgets: Int, stale: Int)] = [:]
        for w in timelines.widgets {
            if let split = InstanceName.split(w.job) {
                perTemplate[split.template, default: (0, 0)].widgets += 1
                if w.staleSince != nil {
                    perTemplate[split.template, default: (0, 0)].stale += 1
                    stale += 1
                }
                continue
            }
            let key = "\(w.kind)/\(w.family.rawValue)"
            let dimensions = [("kind", w.kind), ("family", w.family.rawValue)]
            if let left = w.budgetLeft {
                let gauge = budgetLeft[key] ?? CoreMetrics.Gauge(label: "refreshd_widget_budget_left", dimensions: dimensions, factory: factory)
                budgetLeft[key] = gauge
                gauge.record(left)
            }
            let gauge = staleWidget[key] ?? CoreMetrics.Gauge(label: "refreshd_widget_stale", dimensions: dimensions, factory: factory)
            staleWidget[key] = gauge
            gauge.record(w.staleSince == nil ? 0 : 1)
            if w.staleSince != nil { stale += 1 }
        }
        staleWidgets.record(stale)
        for template in Set(templateWidgets.keys).union(perTemplate.keys) {
            let gauges = templateWidgets[template] ?? (
                CoreMetrics.Gauge(label: "refreshd_template_widgets", dimensions: [("job", template)], factory: factory),
                CoreMetrics.Gauge(label: "refreshd_template_widgets_stale", dimensions: [("job", template)], factory: factory))
            templateWidgets[template] = gauges
            gauges.widgets.record(perTemplate[template]?.widgets ?? 0)
            gauges.stale.record(perTemplate[template]?.stale ?? 0)
        }
    }

    /// How many activities are in each state (dismissed: those in the recent history).
    func record(_ activities: ActivitySnapshot) {
        lock.lock()
        defer { lock.unlock() }
        var counts: [ActivityState: Int] = [:]
        for a in activities.activities { counts[a.state, default: 0] += 1 }
        counts[.dismissed, default: 0] += activities.recentlyDismissed.count
        for (state, gauge) in activityStates { gauge.record(counts[state] ?? 0) }
    }

    /// The exposition, in the Prometheus text format.
    func text() -> String {
        lock.lock()
        defer { lock.unlock() }
        return MetricsHelp.annotate(registry.emitToString())
    }

    /// Writes the exposition to `path` atomically. Returns the error text on failure.
    func writeFile(_ path: String) -> String? { Self.writeReplacing(path, with: text()) }

    /// Replaces the file at `path` with `text` (a temporary file beside it, then a rename, so a
    /// reader never sees half a file); nil, or why it failed. Shared with cluster nodes.
    static func writeReplacing(_ path: String, with text: String) -> String? {
        let temporary = path + ".tmp.\(getpid())"
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: temporary))
            guard rename(temporary, path) == 0 else {
                let reason = String(cString: strerror(errno))
                unlink(temporary)
                return "cannot rename \(temporary) to \(path): \(reason)"
            }
            return nil
        } catch {
            unlink(temporary)
            return "cannot write \(temporary): \(error.localizedDescription)"
        }
    }

    private func runCounter(_ id: String, _ outcome: String) -> CoreMetrics.Counter {
        let key = id + "\u{0}" + outcome
        if let c = runs[key] { return c }
        let c = CoreMetrics.Counter(label: "refreshd_runs_total", dimensions: [("job", id), ("outcome", outcome)], factory: factory)
        runs[key] = c
        return c
    }

    private func launchCounter(_ id: String) -> CoreMetrics.Counter {
        if let c = launches[id] { return c }
        let c = CoreMetrics.Counter(label: "refreshd_launches_total", dimensions: [("job", id)], factory: factory)
        launches[id] = c
        return c
    }

    private func missedCounter(_ id: String) -> CoreMetrics.Counter {
        if let c = missed[id] { return c }
        let c = CoreMetrics.Counter(label: "refreshd_missed_slots_total", dimensions: [("job", id)], factory: factory)
        missed[id] = c
        return c
    }

    private func notificationCounter(_ id: String, _ log: NotificationLog) -> CoreMetrics.Counter {
        let result = switch log {
        case .delivered: "delivered"
        case .retrying: "retry"
        case .gaveUp: "given_up"
        case .dropped: "dropped"
        }
        let kind = log.notification.kind.rawValue
        let key = "\(id)\u{0}\(kind)\u{0}\(result)"
        if let c = notifications[key] { return c }
        let c = CoreMetrics.Counter(label: "refreshd_notifications_total",
                                    dimensions: [("job", id), ("kind", kind), ("result", result)], factory: factory)
        notifications[key] = c
        return c
    }

    /// A run's CPU time and peak memory, where measured, in its job's histograms.
    private func record(_ usage: RunUsage, of id: String) {
        if let micros = usage.cpuMicroseconds {
            let timer = cpu[id] ?? CoreMetrics.Timer(label: Self.cpuName, dimensions: [("job", id)], factory: factory)
            cpu[id] = timer
            timer.recordNanoseconds(micros.multipliedReportingOverflow(by: 1000).overflow ? .max : micros * 1000)
        }
        if let bytes = usage.peakMemoryBytes {
            let recorder = memory[id] ?? CoreMetrics.Recorder(label: Self.memoryName, dimensions: [("job", id)], aggregate: true,
                                                              factory: factory)
            memory[id] = recorder
            recorder.record(bytes)
        }
    }

    private func timer(_ id: String) -> CoreMetrics.Timer {
        if let t = lateness[id] { return t }
        let t = CoreMetrics.Timer(label: Self.latenessName, dimensions: [("job", id)], factory: factory)
        lateness[id] = t
        return t
    }
}
