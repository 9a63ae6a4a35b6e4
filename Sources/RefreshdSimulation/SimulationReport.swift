import Foundation
import RefreshdConfig
import RefreshdCore
import RefreshdRuntime

/// What a simulation found: per day and per job, runs and outcomes, missed slots, lateness,
/// the faults injected and the invariants violated. Codable for `--json`; `text` for people.
package struct SimulationReport: Codable, Sendable, Equatable {
    /// Figures for one job (or all jobs) over a day or the whole simulation.
    package struct Figures: Codable, Sendable, Equatable {
        package var launched = 0
        package var success = 0
        package var failure = 0
        package var expired = 0
        package var crashed = 0
        package var interrupted = 0
        package var missed = 0
        /// Milliseconds from earliest begin date to launch.
        package var latenessP50: Int64 = 0
        package var latenessMax: Int64 = 0

        package init() {}

        mutating func count(_ outcome: Outcome?) {
            switch outcome {
            case .success: success += 1
            case .failure: failure += 1
            case .expired: expired += 1
            case .crashed: crashed += 1
            case .interrupted: interrupted += 1
            case nil: break
            }
        }

        /// The figures of `runs` (earliest, started, outcome): launches, outcomes and lateness,
        /// as the report counts them (a replay's columns too).
        package init(runs: [(earliest: Instant, started: Instant, outcome: Outcome?)]) {
            launched = runs.count
            for run in runs { count(run.outcome) }
            Self.fillLateness(&self, runs.map { max(0, $0.started.milliseconds - $0.earliest.milliseconds) })
        }

        /// The p50 and the largest of `values` (milliseconds launched after earliest).
        static func fillLateness(_ f: inout Figures, _ values: [Int64]) {
            let sorted = values.sorted()
            f.latenessP50 = sorted.isEmpty ? 0 : sorted[(sorted.count - 1) / 2]
            f.latenessMax = sorted.last ?? 0
        }

        package func count(of outcome: Outcome) -> Int {
            switch outcome {
            case .success: success
            case .failure: failure
            case .expired: expired
            case .crashed: crashed
            case .interrupted: interrupted
            }
        }
    }

    package struct Day: Codable, Sendable, Equatable {
        package var date: String
        package var total: Figures
        package var jobs: [String: Figures]
        /// Per widget (kind and family) that day: reloads, provider calls, budget, staleness.
        package var widgets: [WidgetDay] = []
        /// Per activity alive that day: its state at the day's end and the day's transitions.
        package var activities: [ActivityDay] = []
    }

    package struct JobTotals: Codable, Sendable, Equatable {
        package var identifier: String
        package var figures: Figures
        /// Each run: start, outcome, lateness; for the picture and for scripts.
        package var runs: [Run]
        /// For a template: how many of its instances ran (their runs are folded into this row,
        /// one row per template, not one per instance). Absent for a job.
        package var instances: Int?
        /// For a template: the instances with the most runs that failed, crashed or expired,
        /// most first (at most `topFailing`). Absent for a job.
        package var failingInstances: [InstanceFailures]?
    }

    /// An instance and how many of its runs failed, crashed or expired.
    package struct InstanceFailures: Codable, Sendable, Equatable {
        package var identifier: String
        package var failures: Int
    }

    /// How many failing instances a template's row names.
    package static let topFailing = 10

    package struct Run: Codable, Sendable, Equatable {
        package var runID: Int64
        package var earliest: Instant
        package var started: Instant
        package var ended: Instant?
        package var outcome: Outcome?
    }

    package struct FaultRecord: Codable, Sendable, Equatable {
        package var kind: String
        package var at: Instant?
        package var until: Instant?
        package var detail: String
    }

    package struct Violation: Codable, Sendable, Equatable {
        package var time: Instant
        package var invariant: String
        package var message: String
        /// The events just before it, oldest first.
        package var recent: [String]
    }

    package struct Missed: Codable, Sendable, Equatable {
        package var identifier: String
        package var noticed: Instant
        package var count: Int
    }

    package var scenario: String
    package var start: Instant
    package var end: Instant
    package var seed: UInt64
    package var timeZone: String
    package var days: [Day]
    package var jobs: [JobTotals]
    package var total: Figures
    package var missed: [Missed]
    package var faults: [FaultRecord]
    /// Spans refreshd was not running (downtime, kills), for the picture.
    package var downtime: [FaultRecord]
    package var violations: [Violation]
    package var expectations: [ExpectationResult]
    /// Events delivered (wake-ups, exits, faults): how much the simulation did.
    package var steps: Int
    /// Each widget's entries shown, reloads, deferrals and stale spans, for the picture.
    package var widgetLanes: [WidgetLane] = []
    /// Each activity's transitions over the whole simulation, for the picture.
    package var activityLanes: [ActivityLane] = []
    /// Failure and recovery notifications, when a job has `on-failure:` or `on-recovery:`
    /// (absent otherwise, so reports of scenarios without them are unchanged).
    package var notifications: NotificationFigures?

    package struct ExpectationResult: Codable, Sendable, Equatable {
        package var expectation: String
        package var passed: Bool
        package var found: String
    }

    /// Whether every expectation held and no invariant was violated.
    package var passed: Bool { violations.isEmpty && expectations.allSatisfy(\.passed) }

    static func build(_ sim: Simulation, keepingRuns: Bool = true) -> SimulationReport {
        let history = sim.history.contents()
        let observations = sim.journal.missedObservations()
        // The days, computed once: a run's day is found by binary search, not by formatting.
        var boundaries: [Instant] = []
        var order: [String] = []
        var day = sim.startOfDay(containing: sim.scenario.start)
        while day < sim.end {
            boundaries.append(day)
            order.append(sim.dayLabel(day))
            day = sim.nextDay(after: day)
        }
        func dayIndex(_ t: Instant) -> Int {
            var low = 0, high = boundaries.count - 1
            while low < high {
                let mid = (low + high + 1) / 2
                if boundaries[mid] <= t { low = mid } else { high = mid - 1 }
            }
            return max(0, low)
        }
        var rows = Rows(sim, dayLabels: order)
        rows.count(history, before: sim.end, keepingRuns: keepingRuns, dayIndex: dayIndex)
        let missed = rows.countMissed(observations, dayIndex: dayIndex)
        let jobs = rows.finish(keepingRuns: keepingRuns)
        let side = sideFigures(sim, dayLabels: order, dayIndex: dayIndex, boundaries: boundaries)
        for index in rows.days.indices {
            rows.days[index].widgets = side.widgets[index]
            rows.days[index].activities = side.activities[index]
        }
        var report = SimulationReport(
            scenario: sim.scenario.name, start: sim.scenario.start, end: sim.end, seed: sim.scenario.seed,
            timeZone: sim.scenario.timeZone, days: rows.days,
            jobs: jobs.values.sorted { $0.identifier < $1.identifier }, total: rows.total, missed: missed,
            faults: sim.faultLog,
            downtime: sim.downSpans.map { FaultRecord(kind: $0.2, at: $0.0, until: $0.1, detail: "refreshd not running") },
            violations: sim.violations, expectations: [], steps: sim.steps)
        report.widgetLanes = side.widgetLanes
        report.activityLanes = side.activityLanes
        report.notifications = sim.notificationTally.figures(sim)
        report.expectations = sim.scenario.expectations.map { report.evaluate($0) }
        return report
    }

    /// Checks one expectation against the figures.
    func evaluate(_ e: Expectation) -> ExpectationResult {
        if let side = evaluateSide(e) { return side }
        if let notified = evaluateNotifications(e) { return notified }
        switch e {
        case let .runs(job, outcome, comparison, bound):
            let f = jobs.first { $0.identifier == job }?.figures ?? Figures()
            let value = outcome.map { f.count(of: $0) } ?? f.launched
            let what = "\(job) \(outcome?.rawValue ?? "runs")"
            return .init(expectation: "\(what) \(comparison.rawValue) \(bound)", passed: comparison.holds(value, bound),
                         found: "\(value)")
        case let .maxMissed(job, bound):
            let value = job.map { id in jobs.first { $0.identifier == id }?.figures.missed ?? 0 } ?? total.missed
            return .init(expectation: "\(job ?? "all jobs") missed <= \(bound)", passed: value <= bound, found: "\(value)")
        case let .maxLateness(job, limit):
            let value = jobs.first { $0.identifier == job }?.figures.latenessMax ?? 0
            return .init(expectation: "\(job) lateness <= \(formatDuration(limit))",
                         passed: value <= limit.wholeMilliseconds, found: formatDuration(.milliseconds(value)))
        case .noViolation:
            return .init(expectation: "no invariant violated", passed: violations.isEmpty,
                         found: violations.first.map { "\($0.invariant) at \($0.time)" } ?? "none")
        default:
            return .init(expectation: "\(e)", passed: false, found: "not evaluated")
        }
    }
}
