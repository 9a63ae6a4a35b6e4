import ArgumentParser
import Foundation
import RefreshdConfig
import RefreshdCore
import RefreshdRuntime

/// `refreshd check`: validates a job directory, or one job file, without running anything.
package struct CheckCommand: ParsableCommand {
    package init() {}
    package static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Validate job files; print every error with file:line:column, exit 1 if any.")

    @Argument(help: ArgumentHelp("Directory of job files, or one job file (checked against the other jobs of its folder).",
                                 valueName: "directory-or-file"))
    var directory = "Jobs"

    @Flag(help: "Print a JSON object with keys directory, valid, jobs and errors (also when there are errors).")
    var json = false

    package func run() throws {
        var isFolder: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: directory, isDirectory: &isFolder)
        let loaded = exists && !isFolder.boolValue ? JobDirectory.load(file: directory) : JobDirectory.load(directory)
        switch loaded {
        case let .failure(errors):
            if json {
                try printJSON(CheckReport(directory: directory, jobs: [],
                                          errors: errors.errors.map(CheckReport.Problem.init)))
                throw ExitCode(1)
            }
            for error in errors.errors { print(error) }
            print("\(errors.errors.count) error\(errors.errors.count == 1 ? "" : "s") in \(directory)")
            throw ExitCode(1)
        case let .success(jobs):
            let now = Instant(secondsSinceEpoch: Date().timeIntervalSince1970)
            if json {
                try printJSON(CheckReport(directory: directory, jobs: jobs.map { Self.summary(of: $0, now: now) },
                                          errors: []))
                return
            }
            for job in jobs {
                let d = job.definition
                if let widget = job.widget {
                    // A timeline template (issue 23): each instance a widget of this kind pattern.
                    let template = job.parameters.map { "template [\($0.joined(separator: ", "))], " } ?? ""
                    print("\(d.identifier): \(template)\(Self.describe(widget)), allowance \(DurationParser.format(d.allowance))  (\(job.file))")
                    continue
                }
                let earliest = job.earliest == .relative(.zero) && d.schedule != nil ? "next slot" : job.earliest.text
                var parts = ["\(d.kind.rawValue)", "earliest \(earliest)",
                             "allowance \(DurationParser.format(d.allowance))"]
                switch d.resubmit {
                case .none: break
                case let .after(interval): parts.append("resubmit after \(DurationParser.format(interval))")
                case let .calendar(schedule): parts.append("resubmit calendar \(schedule.text)")
                }
                if let retry = d.retry { parts.append("retry \(retry.backoff.rawValue) x\(retry.limit)") }
                if d.missed != .once { parts.append("missed \(d.missed.rawValue)") }
                if d.missed == .all { parts.append("catch-up \(DurationParser.format(d.catchUp))") }
                if d.jitter != .zero {
                    parts.append("jitter \(DurationParser.format(d.jitter))\(d.fixedJitter ? " (fixed)" : "")")
                }
                if d.accuracy != .zero { parts.append("accuracy \(DurationParser.format(d.accuracy))") }
                let needs = Self.requirements(of: d)
                if !needs.isEmpty { parts.append("requires \(needs.joined(separator: " and "))") }
                parts.append("namespace \(d.namespace)")
                if let account = job.runAs?.account {
                    parts.append("runs as \(account.name) (uid \(account.uid), gid \(account.gid), groups "
                        + account.groups.map(String.init).joined(separator: ",") + ")")
                }
                if let parameters = job.parameters { parts.insert("template [\(parameters.joined(separator: ", "))]", at: 0) }
                print("\(d.identifier): \(parts.joined(separator: ", "))  (\(job.file))")
                if d.schedule != nil, let first = job.earliest.schedule, let elapse = first.next(after: now) {
                    let zone = CalendarScheduleBuilder.zone(of: first) ?? TimeZone.current
                    print("  earliest: \(Self.localAndUTC(elapse, in: zone))")
                }
                if let schedule = Self.calendar(of: job) {
                    let zone = CalendarScheduleBuilder.zone(of: schedule) ?? TimeZone.current
                    let elapses = CalendarScheduleBuilder.elapses(of: schedule, after: now, count: 3)
                    if elapses.isEmpty { print("  next: never") }
                    for elapse in elapses {
                        print("  next: \(Self.localAndUTC(elapse, in: zone))")
                    }
                }
            }
            print("\(jobs.count) job\(jobs.count == 1 ? "" : "s") OK in \(directory)")
        }
    }

    /// Prints `report` as pretty JSON with sorted keys on stdout.
    private func printJSON(_ report: CheckReport) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        print(String(decoding: try encoder.encode(report), as: UTF8.self))
    }

    /// One valid job as `check --json` shows it.
    static func summary(of job: JobConfig, now: Instant) -> CheckReport.Job {
        let d = job.definition
        let resubmit: String? = switch d.resubmit {
        case .none: nil
        case let .after(interval): "after \(DurationParser.format(interval))"
        case let .calendar(schedule): "calendar \(schedule.text)"
        }
        let nextElapses = calendar(of: job).map { schedule in
            CalendarScheduleBuilder.elapses(of: schedule, after: now, count: 3).map { iso($0, in: utc) }
        }
        let retry = d.retry.map {
            CheckReport.Retry(backoff: $0.backoff.rawValue, initial: DurationParser.format($0.initial),
                              max: DurationParser.format($0.maximum), limit: $0.limit)
        }
        let action = job.action ?? job.widget.flatMap { widget in
            if case let .action(action) = widget.provider { action } else { nil }
        }
        return CheckReport.Job(
            identifier: d.identifier, kind: job.widget == nil ? d.kind.rawValue : "timeline", file: job.file,
            command: job.command, environment: job.environment, namespace: d.namespace,
            requires: requirements(of: d), earliest: job.earliest.text,
            allowance: DurationParser.format(d.allowance), grace: DurationParser.format(d.grace), missed: d.missed.rawValue,
            jitter: DurationParser.format(d.jitter), fixedJitter: d.fixedJitter,
            accuracy: DurationParser.format(d.accuracy),
            catchUp: d.missed == .all ? DurationParser.format(d.catchUp) : nil,
            resubmit: resubmit, nextElapses: nextElapses, retry: retry,
            action: action.map { CheckReport.Action(name: $0.name, options: options(of: $0)) },
            widget: job.widget.map(describe), simulate: job.simulate != nil,
            limits: job.limits.isEmpty ? nil : CheckReport.Limits(memory: job.limits.memoryBytes, cpu: job.limits.cpuPercent,
                                                                   tasks: job.limits.tasks, nice: job.limits.nice,
                                                                   ioWeight: job.limits.ioWeight),
            runAs: job.runAs.map { CheckReport.RunAsReport(user: $0.user, group: $0.group, uid: $0.account?.uid,
                                                           gid: $0.account?.gid, groups: $0.account?.groups,
                                                           home: $0.account?.home) })
    }

    /// `["external-power", "network"]`, as `requires:` names them.
    static func requirements(of d: TaskDefinition) -> [String] {
        [d.requiresExternalPower ? "external-power" : nil, d.requiresNetworkConnectivity ? "network" : nil].compactMap { $0 }
    }

    /// An action's options from its canonical text (`key=value` lines).
    static func options(of action: ActionSpec) -> [String: String] {
        var options: [String: String] = [:]
        for line in action.fingerprint.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            options[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return options
    }

    /// `timeline widget dayparts [systemSmall, systemMedium], budget 50/24h per family, reloads
    /// 5m apart at least, shared fetch 5m, command provider`.
    static func describe(_ widget: WidgetSpec) -> String {
        let provider = switch widget.provider {
        case .command: "command provider"
        case let .action(action): "\(action.name) provider"
        }
        return "timeline widget \(widget.kind) [\(widget.families.joined(separator: ", "))], "
            + "budget \(widget.budget.map { "\($0)/24h" } ?? "unlimited") per \(widget.budgetScope.rawValue), "
            + "reloads \(DurationParser.format(widget.minReloadInterval)) apart at least, "
            + "shared fetch \(DurationParser.format(widget.sharedFetch)), \(provider)"
    }

    /// The calendar a job's runs follow: its resubmit calendar, else its calendar `earliest:`.
    static func calendar(of job: JobConfig) -> Schedule? {
        job.definition.schedule ?? job.earliest.schedule
    }

    static let utc = TimeZone(identifier: "UTC")!

    /// `2026-11-22T04:00:00+01:00` in `zone` (`Z` in UTC).
    /// `2026-12-05T07:00:00+01:00 (2026-12-05T06:00:00Z)`; once when the zone's reading is UTC's
    /// (a UTC machine printed `next: X (X)`).
    static func localAndUTC(_ instant: Instant, in zone: TimeZone) -> String {
        let local = iso(instant, in: zone), utc = iso(instant, in: Self.utc)
        return local == utc ? local : "\(local) (\(utc))"
    }

    static func iso(_ instant: Instant, in zone: TimeZone) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = zone
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: Date(timeIntervalSince1970: Double(instant.milliseconds) / 1000))
    }
}
