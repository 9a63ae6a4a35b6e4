import Foundation
import RefreshdCore

/// A recorded period side by side (issue 34): as it ran, as replayed with the same files, and,
/// for a what-if, as it would have been with other files; per day and per job, and the
/// simulator's error (the replay with the same files against what ran).
package struct ReplayComparison: Sendable, Encodable, Equatable {
    /// One column: runs started in the span and how they ended, lateness (launch after
    /// earliest): the simulation report's own figures and names (`missed` stays 0 here).
    package typealias Figures = SimulationReport.Figures

    /// A run as both sides have it.
    package struct Run: Sendable, Equatable {
        package var identifier: String
        package var earliest: Instant
        package var started: Instant
        package var outcome: Outcome?

        package init(identifier: String, earliest: Instant, started: Instant, outcome: Outcome?) {
            self.identifier = identifier
            self.earliest = earliest
            self.started = started
            self.outcome = outcome
        }
    }

    package struct Row: Sendable, Encodable, Equatable {
        /// The local day (yyyy-MM-dd); nil in the per-job totals.
        package var day: String?
        package var job: String
        package var ran: Figures
        package var replayed: Figures
        package var whatIf: Figures?
    }

    /// The replay with the same files against what ran, over the whole period.
    package struct SimulatorError: Sendable, Codable, Equatable {
        package var ranRuns = 0
        package var replayedRuns = 0
        /// Sum over jobs of |runs replayed - runs that ran|.
        package var runsApart = 0
        /// Sum over jobs and outcomes of the runs apart.
        package var outcomesApart = 0
        /// `runsApart` over the runs that ran.
        package var relative = 0.0
        /// The largest difference of a job's lateness p50, milliseconds.
        package var latenessP50ApartMs: Int64 = 0
        /// Jobs whose runs and outcomes agree exactly, of all.
        package var exactJobs = 0
        package var jobs = 0
        /// Widgets (`compareWidgets`): reloads apart (performed, exempt, deferred, failed),
        /// summed over widgets; provider calls apart; whole stale minutes apart; the largest
        /// difference of a widget's stale time, milliseconds; widgets whose lowest budget differs.
        package var reloadsApart = 0
        package var providerCallsApart = 0
        package var staleMinutesApart: Int64 = 0
        package var staleMillisecondsApart: Int64 = 0
        package var budgetLowApart = 0
        /// Widgets whose reloads, calls, stale minutes and lowest budget agree exactly, of all.
        package var exactWidgets = 0
        package var widgets = 0
        /// Activities (`compareActivities`): updates apart, summed over activities; activities
        /// whose states reached, or whose end, differ; those that agree exactly, of all.
        package var activityUpdatesApart = 0
        package var activityStatesApart = 0
        package var activityEndsApart = 0
        package var exactActivities = 0
        package var activities = 0
    }

    package var from: Instant
    package var to: Instant
    package var whatIfJobs: String?
    package var days: [Row]
    package var jobs: [Row]
    /// Per UTC day and widget, and per widget over the period (`compareWidgets`).
    package var widgetDays: [WidgetRow] = []
    package var widgets: [WidgetRow] = []
    /// Per UTC day and activity, and per activity over the period (`compareActivities`).
    package var activityDays: [ActivityRow] = []
    package var activities: [ActivityRow] = []
    package var error: SimulatorError

    /// - Parameters:
    ///   - ran: the recorded runs started in `from..<to`.
    ///   - replayed: the replay's runs with the same files; `whatIf`: with the other files.
    package init(from: Instant, to: Instant, ran: [Run], replayed: [Run], whatIf: [Run]?, whatIfJobs: String?, zone: TimeZone) {
        self.from = from
        self.to = to
        self.whatIfJobs = whatIfJobs
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = zone
        formatter.dateFormat = "yyyy-MM-dd"
        func day(_ run: Run) -> String { formatter.string(from: Date(timeIntervalSince1970: Double(run.started.milliseconds) / 1000)) }
        let inPeriod: (Run) -> Bool = { $0.started >= from && $0.started < to }
        let sides = [ran, replayed, whatIf ?? []].map { $0.filter(inPeriod) }
        let names = Set(sides.flatMap { $0.map(\.identifier) }).sorted()
        let dayNames = Set(sides.flatMap { $0.map(day) }).sorted()
        func row(_ dayName: String?, _ job: String) -> Row? {
            let pick = sides.map { $0.filter { $0.identifier == job && (dayName == nil || day($0) == dayName) } }
            guard pick.contains(where: { !$0.isEmpty }) else { return nil }
            func figures(_ runs: [Run]) -> Figures { Figures(runs: runs.map { ($0.earliest, $0.started, $0.outcome) }) }
            return Row(day: dayName, job: job, ran: figures(pick[0]), replayed: figures(pick[1]),
                       whatIf: whatIf == nil ? nil : figures(pick[2]))
        }
        days = dayNames.flatMap { d in names.compactMap { row(d, $0) } }
        jobs = names.compactMap { row(nil, $0) }
        var e = SimulatorError()
        for job in jobs {
            e.jobs += 1
            e.ranRuns += job.ran.launched
            e.replayedRuns += job.replayed.launched
            e.runsApart += abs(job.ran.launched - job.replayed.launched)
            let apart = job.ran.outcomesApart(job.replayed)
            e.outcomesApart += apart
            e.latenessP50ApartMs = max(e.latenessP50ApartMs, abs(job.ran.latenessP50 - job.replayed.latenessP50))
            if apart == 0, job.ran.launched == job.replayed.launched { e.exactJobs += 1 }
        }
        e.relative = e.ranRuns == 0 ? 0 : Double(e.runsApart) / Double(e.ranRuns)
        error = e
    }

    /// The line that states the simulator's error.
    package var errorLine: String {
        let percent = String(format: "%.1f", error.relative * 100)
        return "simulator's error (replay with the same files against what ran): \(error.ranRuns) runs ran, "
            + "\(error.replayedRuns) replayed, \(error.runsApart) apart (\(percent)%); outcomes \(error.outcomesApart) apart; "
            + "lateness p50 at most \(error.latenessP50ApartMs) ms apart; \(error.exactJobs) of \(error.jobs) jobs exact" + widgetErrorText
            + activityErrorText
    }

    /// The table: per day and job, then per job over the period, the widgets and the
    /// activities likewise, then the error line.
    package var text: String {
        var lines = ["replay \(from.iso8601)..\(to.iso8601): as it ran | as replayed with the same files"
            + (whatIfJobs.map { " | what if with \($0)" } ?? "")]
        func format(_ rows: [Row]) {
            for r in rows {
                var line = "  " + (r.day.map { $0 + "  " } ?? "") + r.job + ": " + r.ran.text + " | " + r.replayed.text
                if let w = r.whatIf { line += " | " + w.text }
                lines.append(line)
            }
        }
        lines.append("per day:")
        format(days)
        lines.append("per job:")
        format(jobs)
        lines += widgetText
        lines += activityText
        lines.append(errorLine)
        return lines.joined(separator: "\n")
    }
}

extension ReplayComparison {
    /// A recorded identifier as the simulation's report names its row: an instance `T[K]` (or
    /// its provider `T[K]#family`) under its template `T` when the files declare `T`.
    package static func folded(_ identifier: String, templates: Set<String>) -> String {
        guard let split = SimulationReport.Rows.instance(of: identifier), templates.contains(split.template) else { return identifier }
        return split.template
    }
}

extension ReplayComparison.Run {
    /// A recorded run.
    package init(_ record: RunRecord) {
        self.init(identifier: record.identifier, earliest: record.earliest, started: record.started, outcome: record.outcome)
    }
}

extension SimulationReport {
    /// Every run the report kept, as a comparison reads them.
    package var comparedRuns: [ReplayComparison.Run] {
        jobs.flatMap { job in
            job.runs.map { ReplayComparison.Run(identifier: job.identifier, earliest: $0.earliest, started: $0.started, outcome: $0.outcome) }
        }
    }
}

extension ReplayComparison {
    /// The replay's report with its job lanes paired for the picture (`--svg`): per job, its
    /// runs as they ran, as replayed, and as with the other files, one lane each, over the
    /// replay's downtime and faults.
    package static func pairedReport(replayed: SimulationReport, ran: [RunRecord], whatIf: SimulationReport?) -> SimulationReport {
        func lane(_ name: String, _ runs: [SimulationReport.Run]) -> SimulationReport.JobTotals {
            .init(identifier: name, figures: SimulationReport.Figures(runs: runs.map { ($0.earliest, $0.started, $0.outcome) }),
                  runs: runs, instances: nil, failingInstances: nil)
        }
        let ranRuns = Dictionary(grouping: ran.filter { $0.started >= replayed.start && $0.started < replayed.end }, by: \.identifier)
            .mapValues { $0.map { SimulationReport.Run(runID: $0.runID, earliest: $0.earliest, started: $0.started, ended: $0.ended, outcome: $0.outcome) } }
        let replayedRuns = Dictionary(replayed.jobs.map { ($0.identifier, $0.runs) }, uniquingKeysWith: { a, _ in a })
        let whatIfRuns = whatIf.map { Dictionary($0.jobs.map { ($0.identifier, $0.runs) }, uniquingKeysWith: { a, _ in a }) }
        let names = Set(ranRuns.keys).union(replayedRuns.keys).union(whatIfRuns?.keys ?? [:].keys).sorted()
        var paired = replayed
        paired.jobs = names.flatMap { name in
            [lane(name + " · ran", ranRuns[name] ?? []), lane(name + " · replayed", replayedRuns[name] ?? [])]
                + (whatIfRuns.map { [lane(name + " · what if", $0[name] ?? [])] } ?? [])
        }
        paired.missed = []
        return paired
    }
}

/// What a replay's columns say of the figures: runs apart, and the table's words.
extension SimulationReport.Figures {
    /// Runs apart, summed over the outcomes.
    func outcomesApart(_ other: Self) -> Int {
        abs(success - other.success) + abs(failure - other.failure) + abs(expired - other.expired)
            + abs(crashed - other.crashed) + abs(interrupted - other.interrupted)
    }

    /// `12 (10 ok, 2 failed), late p50 3 ms`.
    package var text: String {
        var parts: [String] = []
        for (n, word) in [(success, "ok"), (failure, "failed"), (expired, "expired"), (crashed, "crashed"),
                          (interrupted, "interrupted")] where n > 0 { parts.append("\(n) \(word)") }
        return "\(launched)" + (parts.isEmpty ? "" : " (" + parts.joined(separator: ", ") + ")") + ", late p50 \(latenessP50) ms"
    }
}
