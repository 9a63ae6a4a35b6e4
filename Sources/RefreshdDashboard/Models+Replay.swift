import Foundation
import RefreshdCore
import RefreshdSimulation

/// `/api/replay`: a recorded period replayed (issue 34), as the Simulate page's replay shows
/// it. The figures of runs are `ReplayComparison`'s own; the widgets' and activities' rows are
/// its words (`simulate --replay --json` has their every figure).
package struct ReplayData: Codable, Sendable {
    var from: Instant
    var to: Instant
    /// The state directory read, and the folder that ran (refreshd's own).
    var state: String
    var jobsFolder: String
    /// The what-if folder, resolved; nil for a replay alone.
    var whatIfJobs: String?
    var seed: UInt64
    var stopped: String?
    var elapsedMilliseconds: Int64
    /// Jobs whose recorded runs were replayed, and what the replay could not reproduce.
    var replayedJobs: [String]
    var notes: [String]
    /// The world then, as the replay met it (stops, kills, clock steps, conditions, orders).
    var faults: [SimulationReport.FaultRecord]
    var days: [ReplayRow]
    var jobs: [ReplayRow]
    var widgets: [ReplayWords]
    var activities: [ReplayWords]
    var error: ReplayComparison.SimulatorError
    var errorLine: String
    /// The comparison as `simulate --replay` prints it.
    var text: String
    var svg: String
    var violations: [SimulationReport.Violation]

    /// Rows past this are in `text` only (a month of a hundred jobs is 3,100 day rows).
    static let maxRows = 500

    init(_ result: ReplayRunner.Result, state: String, jobsFolder: String) {
        let outcome = result.outcome, comparison = outcome.comparison
        (from, to, self.state, self.jobsFolder) = (comparison.from, comparison.to, state, jobsFolder)
        whatIfJobs = comparison.whatIfJobs
        seed = outcome.setup.scenario.seed
        (stopped, elapsedMilliseconds) = (result.stopped, result.elapsedMilliseconds)
        (replayedJobs, notes, faults) = (outcome.setup.replayedJobs, outcome.setup.notes, outcome.replayed.faults)
        let row = { (r: ReplayComparison.Row) in ReplayRow(day: r.day, job: r.job, ran: r.ran, replayed: r.replayed, whatIf: r.whatIf) }
        days = comparison.days.prefix(Self.maxRows).map(row)
        jobs = comparison.jobs.prefix(Self.maxRows).map(row)
        widgets = (comparison.widgetDays + comparison.widgets).prefix(Self.maxRows).map {
            ReplayWords(day: $0.day, name: $0.widget, ran: $0.ran.text, replayed: $0.replayed.text, whatIf: $0.whatIf?.text)
        }
        activities = (comparison.activityDays + comparison.activities).prefix(Self.maxRows).map {
            ReplayWords(day: $0.day, name: $0.activity, ran: $0.ran.text, replayed: $0.replayed.text, whatIf: $0.whatIf?.text)
        }
        (error, errorLine, text) = (comparison.error, comparison.errorLine, comparison.text)
        (svg, violations) = (result.svg, outcome.violations)
    }
}

/// One job on one day (nil: over the period): as it ran, replayed, what if.
struct ReplayRow: Codable, Sendable {
    var day: String?
    var job: String
    var ran: SimulationReport.Figures
    var replayed: SimulationReport.Figures
    var whatIf: SimulationReport.Figures?
}

/// One widget or activity on one UTC day (nil: over the period), each side in words.
struct ReplayWords: Codable, Sendable {
    var day: String?
    var name: String
    var ran: String
    var replayed: String
    var whatIf: String?
}
