import Foundation
@_spi(Benchmarks) import RefreshdCore
import RefreshdSimulation

/// The last 24 hours drawn by the simulator's own renderer (`SimulationPicture.svg`), fed a
/// `SimulationReport` made of the store's real runs: one lane per job, each run at its real
/// time, coloured by outcome.
///
/// The report type has no public initializer (the simulator builds it), but it is Codable, so
/// it is decoded from the same JSON `simulate --json` writes. What the renderer cannot take from
/// real history, and is therefore left empty: downtime spans, faults, missed-slot marks, and the
/// widget and activity lanes (the simulator builds them from its journal, which a live refreshd
/// does not keep). Its title and verdict are the simulator's: "N days from ..., seed 0" and
/// "invariants held over N steps", here with the live invariant check and the number of runs.
enum OverviewPicture {
    struct Mirror: Encodable {
        struct Day: Encodable {
            var date: String
            var total: SimulationReport.Figures
            var jobs: [String: SimulationReport.Figures]
            var widgets: [String] = []
            var activities: [String] = []
        }
        struct Run: Encodable {
            var runID: Int64
            var earliest: Instant
            var started: Instant
            var ended: Instant?
            var outcome: Outcome?
        }
        struct Job: Encodable {
            var identifier: String
            var figures: SimulationReport.Figures
            var runs: [Run]
        }
        struct Violation: Encodable {
            var time: Instant
            var invariant: String
            var message: String
            var recent: [String]
        }
        var scenario: String
        var start: Instant
        var end: Instant
        var seed: UInt64 = 0
        var timeZone = "UTC"
        var days: [Day]
        var jobs: [Job]
        var total: SimulationReport.Figures
        var missed: [String] = []
        var faults: [String] = []
        var downtime: [String] = []
        var violations: [Violation]
        var expectations: [String] = []
        var steps: Int
        var widgetLanes: [String] = []
        var activityLanes: [String] = []
    }

    /// The SVG of `runs` (newest first, as the store gives them) over the 24 h before `now`.
    static func svg(runs: [RunRecord], jobs: [String], now: Instant, violations: [InvariantViolation]) throws -> String {
        func add(_ outcome: Outcome?, to f: inout SimulationReport.Figures) {
            f.launched += 1
            switch outcome {
            case .success: f.success += 1
            case .failure: f.failure += 1
            case .expired: f.expired += 1
            case .crashed: f.crashed += 1
            case .interrupted: f.interrupted += 1
            case nil: break
            }
        }
        var byJob: [String: Mirror.Job] = [:]
        for id in jobs { byJob[id] = Mirror.Job(identifier: id, figures: .init(), runs: []) }
        var total = SimulationReport.Figures()
        for run in runs.reversed() {
            var job = byJob[run.identifier] ?? Mirror.Job(identifier: run.identifier, figures: .init(), runs: [])
            job.runs.append(Mirror.Run(runID: run.runID, earliest: run.earliest, started: run.started, ended: run.ended, outcome: run.outcome))
            add(run.outcome, to: &job.figures)
            add(run.outcome, to: &total)
            byJob[run.identifier] = job
        }
        let lanes = byJob.values.sorted { $0.identifier < $1.identifier }
        let start = now - .seconds(86_400)
        let mirror = Mirror(
            scenario: "refreshd, the last 24 hours", start: start, end: now,
            days: [Mirror.Day(date: "24 h to " + Words.time(now), total: total,
                              jobs: Dictionary(uniqueKeysWithValues: lanes.map { ($0.identifier, $0.figures) }))],
            jobs: lanes, total: total,
            violations: violations.map { Mirror.Violation(time: now, invariant: $0.invariant.rawValue, message: $0.description, recent: []) },
            steps: runs.count)
        let data = try JSONEncoder().encode(mirror)
        let report = try JSONDecoder().decode(SimulationReport.self, from: data)
        return SimulationPicture.svg(report)
    }
}
