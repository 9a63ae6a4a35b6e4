import ArgumentParser
import Foundation
import RefreshdConfig
import RefreshdCore

/// `refreshd check`: validates a job directory without running anything.
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Validate job files; print every error with file:line:column, exit 1 if any.")

    @Argument(help: "Directory of job files.")
    var directory = "Jobs"

    @Flag(help: "Print the jobs as JSON.")
    var json = false

    func run() throws {
        switch JobDirectory.load(directory) {
        case let .failure(errors):
            for error in errors.errors { print(error) }
            print("\(errors.errors.count) error\(errors.errors.count == 1 ? "" : "s") in \(directory)")
            throw ExitCode(1)
        case let .success(jobs):
            let now = Instant(secondsSinceEpoch: Date().timeIntervalSince1970)
            if json {
                let rows = jobs.map { job -> [String: Any] in
                    let d = job.definition
                    var row: [String: Any] = [
                        "identifier": d.identifier, "kind": d.kind.rawValue,
                        "file": job.file, "earliest": job.earliest.text,
                        "allowance": DurationParser.format(d.allowance),
                        "missed": d.missed.rawValue, "jitter": DurationParser.format(d.jitter),
                        "fixedJitter": d.fixedJitter, "accuracy": DurationParser.format(d.accuracy),
                    ]
                    if d.missed == .all { row["catchUp"] = DurationParser.format(d.catchUp) }
                    switch d.resubmit {
                    case .none: break
                    case let .after(interval): row["resubmit"] = "after \(DurationParser.format(interval))"
                    case let .calendar(schedule): row["resubmit"] = "calendar \(schedule.text)"
                    }
                    if let schedule = Self.calendar(of: job) {
                        row["nextElapses"] = CalendarScheduleBuilder.elapses(of: schedule, after: now, count: 3)
                            .map { Self.iso($0, in: Self.utc) }
                    }
                    return row
                }
                let data = try JSONSerialization.data(withJSONObject: rows, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
                print(String(decoding: data, as: UTF8.self))
                return
            }
            for job in jobs {
                let d = job.definition
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
                print("\(d.identifier): \(parts.joined(separator: ", "))  (\(job.file))")
                if d.schedule != nil, let first = job.earliest.schedule, let elapse = first.next(after: now) {
                    let zone = CalendarScheduleBuilder.zone(of: first) ?? TimeZone.current
                    print("  earliest: \(Self.iso(elapse, in: zone)) (\(Self.iso(elapse, in: Self.utc)))")
                }
                if let schedule = Self.calendar(of: job) {
                    let zone = CalendarScheduleBuilder.zone(of: schedule) ?? TimeZone.current
                    let elapses = CalendarScheduleBuilder.elapses(of: schedule, after: now, count: 3)
                    if elapses.isEmpty { print("  next: never") }
                    for elapse in elapses {
                        print("  next: \(Self.iso(elapse, in: zone)) (\(Self.iso(elapse, in: Self.utc)))")
                    }
                }
            }
            print("\(jobs.count) job\(jobs.count == 1 ? "" : "s") OK in \(directory)")
        }
    }

    /// The calendar a job's runs follow: its resubmit calendar, else its calendar `earliest:`.
    static func calendar(of job: JobConfig) -> Schedule? {
        job.definition.schedule ?? job.earliest.schedule
    }

    static let utc = TimeZone(identifier: "UTC")!

    /// `2026-11-22T04:00:00+01:00` in `zone` (`Z` in UTC).
    static func iso(_ instant: Instant, in zone: TimeZone) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = zone
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: Date(timeIntervalSince1970: Double(instant.milliseconds) / 1000))
    }
}
