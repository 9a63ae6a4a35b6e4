import ArgumentParser
import Foundation
import RefreshdDaemon
import RefreshdConfig
import RefreshdCore
import RefreshdRuntime
import RefreshdStore

/// `refreshd status`: what is pending, what ran and how it ended, each widget's entry, reload
/// and budget, and each live activity, read from the state file.
///
/// Asks the running refreshd over its control socket when there is one (adding what only the
/// live process knows: where each request waits, the runs in flight); otherwise opens the state
/// file read-only, as it always could.
package struct StatusCommand: ParsableCommand {
    package init() {}
    package static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show pending requests, recent runs and each job's last outcome.")

    @Option(name: .long, help: "State directory.")
    var state = ".refreshd"

    @Option(name: .long, help: "How many recent runs to show (0 to 1000; page with --before).")
    var runs = 20

    @Option(name: .long, help: "Show runs older than this run id (the next page: the last run id shown, or nextBefore in --json).")
    var before: Int64?

    @Option(name: .long, help: "Job directory, read for widget budgets when refreshd is not running.")
    var jobs = "Jobs"

    @Flag(help: "Print a JSON object with keys pending, runs, jobs, counters, timelines, activities, heldNotifications and paused (and, live, processTracking); on an error, an object with the key error.")
    var json = false

    package func validate() throws {
        guard ControlRequest.Bounds.runs.contains(runs) else {
            throw ValidationError("--runs: expected \(ControlRequest.Bounds.runs.lowerBound) to \(ControlRequest.Bounds.runs.upperBound), found \(runs); page with --before")
        }
        if let before, before < 1 { throw ValidationError("--before: expected a run id from 1, found \(before)") }
    }

    package func run() throws {
        if showLive() { return }
        do {
            try show()
        } catch let error as StoreError {
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                print(String(decoding: try encoder.encode(StatusFailure(error)), as: UTF8.self))
            } else {
                FileHandle.standardError.write(Data("refreshd: status: \(error)\n".utf8))
            }
            throw ExitCode(1)
        }
    }

    /// Opens the state read-only and prints it; every failure is a `StoreError` naming the path.
    private func show() throws {
        // Checks the folder and the file first, so that what is wrong with them is named
        // precisely (does not exist, not a directory, permission denied).
        try StateDirectory.checkReadable(state)
        let store = try StateStore.open(directory: state, readOnly: true)
        let pending = try store.pendingRequests()
        let recent = try store.recentRuns(limit: runs, before: before)
        let last = try store.lastRunPerJob()
        let now = Instant(secondsSinceEpoch: Date().timeIntervalSince1970)
        let saved = try SavedMachineState(store: store)
        let timelines = saved.timelineSnapshot(at: now, definitions: Self.widgetDefinitions(jobs: jobs, instances: try store.instances()))
        let activities = saved.activitySnapshot(at: now)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            var report = try StatusReport(store: store, runs: runs, days: 7, before: before)
            report.timelines = timelines
            report.activities = activities
            let data = try encoder.encode(report)
            print(String(decoding: data, as: UTF8.self))
            return
        }
        print("refreshd is not running on \(state) (no answer on its control socket): the saved state.")
        print("Pending requests (\(pending.count)):")
        for line in Self.folded(pending, \.identifier, { p in
            let wait = p.earliest > now ? "in \(formatDuration(p.earliest.duration(since: now)))" : "due"
            return "  \(p.identifier)  \(p.kind.rawValue)  earliest \(p.earliest) (\(wait))  \(p.origin.rawValue)"
        }, Self.pendingFold) { print(line) }
        let paused = try StatusReport.paused(in: store)
        Self.printPaused(paused, now: now)
        print("Recent runs (\(recent.count)):")
        for r in recent {
            print("  " + Self.describe(r))
            for line in StatusReport.Run(r).outputExcerpt() { print(line) }
        }
        print("Jobs (last outcome):")
        for line in Self.folded(last, \.identifier, { r in
            "  \(r.identifier)  \(r.outcome?.rawValue ?? "running")  run \(r.runID) at \(r.started)"
        }, { template, runs in Self.lastOutcomeFold(template, runs.map { $0.outcome?.rawValue ?? "running" }) }) { print(line) }
        Self.printMachines(timelines, activities, now: now)
        let held = try StatusReport(store: store, runs: 0, days: 0).heldNotifications
        Self.printHeld(held, running: false)
        if saved.unreadable > 0 { print("(\(saved.unreadable) saved widget or activity record\(saved.unreadable == 1 ? "" : "s") could not be read)") }
    }

    /// Rows with the instances of a template folded (issue 23): a row per job as `line` says,
    /// and one row per template whose instances are several, at its first instance's place, as
    /// `fold` says, given the row's label (`T[*]`; the provider runs of a timeline template's
    /// instances' widgets, `T[K]#family`, fold as `T[*]#family`): a million instances are one
    /// row; `--json` keeps every row. Linear.
    static func folded<T>(_ items: [T], _ identifier: (T) -> String, _ line: (T) -> String,
                          _ fold: (String, [T]) -> String) -> [String] {
        var of: [String: [T]] = [:]
        for item in items { if let label = foldLabel(identifier(item)) { of[label, default: []].append(item) } }
        var lines: [String] = []
        var done: Set<String> = []
        for item in items {
            if let label = foldLabel(identifier(item)), let all = of[label], all.count > 1 {
                if done.insert(label).inserted { lines.append(fold(label, all)) }
            } else {
                lines.append(line(item))
            }
        }
        return lines
    }

    /// `T[*]` for an instance `T[K]`, `T[*]#family` for its widget's provider `T[K]#family`,
    /// nil for any other identifier.
    static func foldLabel(_ identifier: String) -> String? {
        if let split = InstanceName.split(identifier) { return split.template + "[*]" }
        guard let hash = identifier.utf8.lastIndex(of: UInt8(ascii: "#")),
              let split = InstanceName.split(String(identifier[..<hash])) else { return nil }
        return split.template + "[*]" + identifier[hash...]
    }

    static func pendingFold(_ label: String, _ pending: [PendingRequest]) -> String {
        let next = pending.min { $0.earliest < $1.earliest }!
        return "  \(label)  \(pending.count) instances pending, next \(next.identifier) at \(next.earliest)"
    }

    static func snapshotPendingFold(_ label: String, _ pending: [SchedulerSnapshot.Pending]) -> String {
        let next = pending.min { $0.earliest < $1.earliest }!
        return "  \(label)  \(pending.count) instances pending, next \(next.identifier) at \(next.earliest)"
    }

    /// `t[*]  30 instances: 18 success, 12 failure` (each instance's last run).
    static func lastOutcomeFold(_ label: String, _ outcomes: [String]) -> String {
        var counts: [String: Int] = [:]
        for outcome in outcomes { counts[outcome, default: 0] += 1 }
        let order = Outcome.allCases.map(\.rawValue) + ["running"]
        return "  \(label)  \(outcomes.count) instances: " + order.compactMap { o in counts[o].map { "\($0) \(o)" } }.joined(separator: ", ")
    }

    /// The widget and activity sections, when there is anything to show.
    static func printMachines(_ timelines: TimelineSnapshot?, _ activities: ActivitySnapshot?, now: Instant) {
        if let timelines, !timelines.widgets.isEmpty {
            for line in MachineStatusText.widgets(timelines, now: now) { print(line) }
        }
        if let activities, !activities.activities.isEmpty || !activities.recentlyDismissed.isEmpty {
            for line in MachineStatusText.activities(activities, now: now) { print(line) }
        }
    }

    /// The widgets the job files declare, and (issue 23) those of the saved `instances` of
    /// their timeline templates, for an offline status (`WidgetSpec.definitions`); none when
    /// the job files cannot be read (budgets then come from the saved records).
    static func widgetDefinitions(jobs: String, instances: [InstanceRecord] = []) -> [WidgetDefinition] {
        guard case let .success(configs) = JobDirectory.load(jobs, accounts: nil) else { return [] }
        return WidgetSpec.definitions(of: configs.map(\.spec), instances: instances)
    }

    /// Prints the live refreshd's status; false when none runs on this state directory.
    private func showLive() -> Bool {
        guard let client = try? ControlClient.connect(stateDirectory: state),
              let reply = try? client.request(ControlRequest(.status, runs: runs, before: before)), reply.ok,
              let report = reply.status else { return false }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            if let data = try? encoder.encode(report) { print(String(decoding: data, as: UTF8.self)) }
            return true
        }
        let now = reply.now ?? Instant(secondsSinceEpoch: Date().timeIntervalSince1970)
        if let cluster = report.cluster {
            showCluster(report, cluster, now: now)
            return true
        }
        let snapshot = reply.snapshot
        print("Live from the running refreshd (\(state)/control.sock).")
        if let tracking = report.processTracking { print("Process tracking: \(tracking.summary).") }
        print("Pending requests (\(report.pending.count)):")
        for line in Self.folded(snapshot?.pending ?? [], \.identifier, { "  " + ControlOutput.describe($0, now: now) },
                                Self.snapshotPendingFold) { print(line) }
        if let templates = snapshot?.templates {
            print("Templates (\(templates.count)):")
            for t in templates {
                print("  \(t.identifier) [\(t.parameters.joined(separator: ", "))]  \(t.instances) instance\(t.instances == 1 ? "" : "s") (refreshd ctl instance list \(t.identifier))")
            }
        }
        Self.printPaused(report.paused, now: now)
        print("Running (\(snapshot?.runs.count ?? 0)):")
        for r in snapshot?.runs ?? [] {
            print("  run \(r.runID)  \(r.identifier)  started \(r.started)  deadline \(r.deadline)  attempt \(r.attempt)")
        }
        print("Recent runs (\(report.runs.count)):")
        for r in report.runs {
            var text = "run \(r.runID)  \(r.identifier)  started \(r.started)  \(r.outcome)"
            if let ended = r.ended { text += " after \(formatDuration(ended.duration(since: r.started)))" }
            if let status = r.exitStatus { text += " (exit \(status))" }
            if let signal = r.signal { text += " (signal \(signal))" }
            if let reason = r.reason { text += " (\(reason))" }
            text += r.costText
            if r.attempt > 1 { text += "  attempt \(r.attempt)" }
            print("  " + text)
            for line in r.outputExcerpt() { print(line) }
        }
        Self.printJobsAndMachines(report, now: now)
        return true
    }

    /// A running refreshd's last part, one machine's or a node's: each job's last outcome (a
    /// template's folded), the widgets and activities, the held notifications.
    private static func printJobsAndMachines(_ report: StatusReport, now: Instant) {
        print("Jobs (last outcome):")
        for line in Self.folded(report.jobs, \.identifier, { j in "  \(j.identifier)  \(j.lastOutcome)  run \(j.lastRun.runID) at \(j.lastRun.started)" },
                                { template, jobs in Self.lastOutcomeFold(template, jobs.map(\.lastOutcome)) }) { print(line) }
        Self.printMachines(report.timelines, report.activities, now: now)
        Self.printHeld(report.heldNotifications, running: true)
    }

    /// Cluster mode (issue 24): every shard's state as the database holds it, and its leader.
    private func showCluster(_ report: StatusReport, _ cluster: ClusterStatus, now: Instant) {
        print("Cluster node \(cluster.node) (\(state)/control.sock), from the database at \(cluster.databaseNow).")
        let led = cluster.shards.filter(\.led)
        print("Shards (\(cluster.shards.count), \(led.count) led):")
        for line in cluster.lines { print("  " + line) }
        print("Pending requests (\(report.pending.count)):")
        for line in Self.folded(report.pending, \.identifier, { p in
            let wait = p.earliest > now ? "in \(formatDuration(p.earliest.duration(since: now)))" : "due"
            return "  \(p.identifier)  \(p.kind.rawValue)  earliest \(p.earliest) (\(wait))  \(p.origin.rawValue)\(p.shard.map { "  shard \($0)" } ?? "")"
        }, { label, pending in "  \(label)  \(pending.count) instances pending" }) { print(line) }
        Self.printPaused(report.paused, now: now)
        print("Recent runs (\(report.runs.count)):")
        for r in report.runs {
            var text = "run \(r.runID)  \(r.identifier)  started \(r.started)  \(r.outcome)"
            if let ended = r.ended { text += " after \(formatDuration(ended.duration(since: r.started)))" }
            if let status = r.exitStatus { text += " (exit \(status))" }
            print("  " + text)
            for line in r.outputExcerpt() { print(line) }
        }
        Self.printJobsAndMachines(report, now: now)
    }

    /// The notifications waiting to be delivered, when there are any.
    /// `Paused (1):` and a line per paused identifier, since when; nothing when none is.
    static func printPaused(_ paused: [SchedulerSnapshot.Paused], now: Instant) {
        guard !paused.isEmpty else { return }
        print("Paused (\(paused.count)): nothing of these launches until refreshd ctl resume ID")
        for p in paused { print("  \(p.identifier)  since \(p.since) (\(formatDuration(now.duration(since: p.since))) ago)") }
    }

    static func printHeld(_ held: [StatusReport.HeldNotification], running: Bool) {
        guard !held.isEmpty else { return }
        print("Held notifications (\(held.count)\(running ? ", being retried" : ", sent at the next start")):")
        for n in held {
            print("  \(n.kind) of \(n.job) run \(n.runID) (\(n.outcome), ended \(n.ended))  \(n.notifier)  \(n.attempts) failed attempt\(n.attempts == 1 ? "" : "s")  id \(n.id)")
        }
    }

    static func describe(_ r: RunRecord) -> String {
        var text = "run \(r.runID)  \(r.identifier)  started \(r.started)  "
        if let outcome = r.outcome, let ended = r.ended {
            text += "\(outcome.rawValue) after \(formatDuration(ended.duration(since: r.started)))"
            if let status = r.exitStatus { text += " (exit \(status))" }
            if let signal = r.signal { text += " (signal \(signal))" }
            if let reason = r.reason { text += " (\(reason))" }
            text += StatusReport.Run(r).costText
        } else {
            text += "running, deadline \(r.deadline)"
        }
        if r.attempt > 1 { text += "  attempt \(r.attempt)" }
        return text
    }
}

/// What `refreshd status --json` prints when the state cannot be read (exit status 1):
///
/// ```json
/// {"error": {"kind": "wrong-type", "path": ".refreshd/state.sqlite",
///            "detail": "it is a directory, not a regular file; ...", "message": "refreshd state file ..."}}
/// ```
///
/// `kind` is `StoreError.Kind.name` (`no-state`, `wrong-type`, `inaccessible`, `not-a-database`,
/// `corrupt`, `foreign-database`, `newer-schema`, `sqlite`, ...); `path` is the file or directory
/// concerned, `detail` the short reason and `message` the full sentence the text output prints.
struct StatusFailure: Encodable {
    struct Body: Encodable {
        var kind: String
        var path: String
        var detail: String
        var message: String
    }

    var error: Body

    init(_ error: StoreError) {
        self.error = Body(kind: error.kind.name, path: error.path, detail: error.detail,
                          message: error.description)
    }
}
