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
        // Per job, by index (one hash per run, not one per figure): its totals, runs, lateness,
        // and per day its figures and lateness (nil: nothing that day).
        var days = order.map { Day(date: $0, total: Figures(), jobs: [:]) }
        var indexOf: [String: Int] = [:]
        var identifiers: [String] = []
        var jobFigures: [Figures] = []
        var jobRuns: [[Run]] = []
        var jobLateness: [[Int64]] = []
        var dayJobs = [[Figures?]](repeating: [], count: days.count)
        var dayJobLateness = [[[Int64]]](repeating: [], count: days.count)
        func index(of id: String) -> Int {
            if let i = indexOf[id] { return i }
            indexOf[id] = identifiers.count
            identifiers.append(id)
            jobFigures.append(Figures())
            jobRuns.append([])
            jobLateness.append([])
            for d in days.indices {
                dayJobs[d].append(nil)
                dayJobLateness[d].append([])
            }
            return identifiers.count - 1
        }
        let named = Set(sim.scenario.jobs.map(\.spec.identifier))
        for job in sim.scenario.jobs { _ = index(of: job.spec.identifier) }
        // An instance counts in its template's row (issue 23: one row per template, not 10,000),
        // and by itself only for the template's instance count and failing top-N.
        var instanceFailures: [String: [String: Int]] = [:]
        // An instance `T[K]`, or its widget's provider `T[K]#family` (a timeline template's
        // instance runs only those): its template and the instance.
        func instance(of id: String) -> (template: String, instance: String)? {
            if let split = InstanceName.split(id) { return (split.template, id) }
            guard let hash = id.utf8.lastIndex(of: UInt8(ascii: "#")), let split = InstanceName.split(String(id[..<hash])) else { return nil }
            return (split.template, String(id[..<hash]))
        }
        func row(of id: String) -> Int {
            if let i = indexOf[id] { return i }
            if let split = instance(of: id), named.contains(split.template) {
                let i = index(of: split.template)
                indexOf[id] = i
                instanceFailures[split.template, default: [:]][split.instance, default: 0] += 0
                return i
            }
            return index(of: id)
        }
        // A job has a totals row if the scenario names it or it ran.
        func hasTotals(_ j: Int) -> Bool { named.contains(identifiers[j]) || jobFigures[j].launched > 0 }
        var dayLateness = [[Int64]](repeating: [], count: days.count)
        var total = Figures()
        var totalLateness: [Int64] = []
        totalLateness.reserveCapacity(history.entries.count)
        // A history job number to its row here, given in the order jobs first ran (as by name).
        var rowOf = [Int?](repeating: nil, count: history.identifiers.count)
        for entry in history.entries where entry.run.started < sim.end {
            let r = entry.run
            let d = dayIndex(r.started)
            let j = rowOf[Int(entry.job)] ?? row(of: history.identifiers[Int(entry.job)])
            rowOf[Int(entry.job)] = j
            if !instanceFailures.isEmpty, identifiers[j] != history.identifiers[Int(entry.job)],
               r.outcome == .failure || r.outcome == .crashed || r.outcome == .expired {
                let id = history.identifiers[Int(entry.job)]
                instanceFailures[identifiers[j], default: [:]][instance(of: id)?.instance ?? id, default: 0] += 1
            }
            let late = max(0, r.started.milliseconds - r.earliest.milliseconds)
            days[d].total.launched += 1
            days[d].total.count(r.outcome)
            var figures = dayJobs[d][j] ?? Figures()
            figures.launched += 1
            figures.count(r.outcome)
            dayJobs[d][j] = figures
            dayJobLateness[d][j].append(late)
            dayLateness[d].append(late)
            jobFigures[j].launched += 1
            jobFigures[j].count(r.outcome)
            if keepingRuns {
                jobRuns[j].append(r)
            }
            jobLateness[j].append(late)
            total.launched += 1
            total.count(r.outcome)
            totalLateness.append(late)
        }
        var missed: [Missed] = []
        for o in observations where o.kind == .missed {
            guard let id = o.identifier, let count = o.count else { continue }
            missed.append(Missed(identifier: id, noticed: o.time, count: count))
            let d = dayIndex(o.time)
            days[d].total.missed += count
            // A job without a totals row still counts in its day's row.
            let j = row(of: id)
            var figures = dayJobs[d][j] ?? Figures()
            figures.missed += count
            dayJobs[d][j] = figures
            if hasTotals(j) { jobFigures[j].missed += count }
            total.missed += count
        }
        func fill(_ f: inout Figures, _ values: [Int64]) { Figures.fillLateness(&f, values) }
        for d in days.indices {
            fill(&days[d].total, dayLateness[d])
            for j in identifiers.indices {
                guard var figures = dayJobs[d][j] else { continue }
                fill(&figures, dayJobLateness[d][j])
                days[d].jobs[identifiers[j]] = figures
            }
        }
        var jobs: [String: JobTotals] = [:]
        for j in identifiers.indices {
            guard hasTotals(j) else { continue }
            var figures = jobFigures[j]
            fill(&figures, jobLateness[j])
            var totals = JobTotals(identifier: identifiers[j], figures: figures, runs: jobRuns[j])
            if let perInstance = instanceFailures[identifiers[j]] {
                totals.instances = perInstance.count
                totals.failingInstances = perInstance.filter { $0.value > 0 }
                    .sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
                    .prefix(topFailing).map { InstanceFailures(identifier: $0.key, failures: $0.value) }
                if keepingRuns { totals.runs.sort { $0.started != $1.started ? $0.started < $1.started : $0.runID < $1.runID } }
            }
            jobs[identifiers[j]] = totals
        }
        fill(&total, totalLateness)
        let side = sideFigures(sim, dayLabels: order, dayIndex: dayIndex, boundaries: boundaries)
        for index in days.indices {
            days[index].widgets = side.widgets[index]
            days[index].activities = side.activities[index]
        }
        var report = SimulationReport(
            scenario: sim.scenario.name, start: sim.scenario.start, end: sim.end, seed: sim.scenario.seed,
            timeZone: sim.scenario.timeZone, days: days,
            jobs: jobs.values.sorted { $0.identifier < $1.identifier }, total: total, missed: missed,
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
