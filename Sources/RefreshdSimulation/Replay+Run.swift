import Foundation
import RefreshdConfig
import RefreshdCore

/// One replay, whoever asks (issue 34): `simulate --replay` and the dashboard's replay read a
/// store with `read` and run the period with `compare`; only the printing differs.
///
/// ```swift
/// let recorded = try Replay.read(store, from: from, to: to)
/// let outcome = Replay.compare(recorded, ran: base, whatIf: nil, from: from, to: to, seed: nil, zone: .current)
/// print(outcome.comparison.text)
/// ```
extension Replay {
    /// What a store recorded that the replay of a period reads: the runs that overlap it (with
    /// their results lines), every world event, the widgets' counter days, the activities' steps.
    package struct Recorded: Sendable {
        package var runs: [RunRecord] = []
        package var world: [WorldEvent] = []
        package var widgets: [WidgetDayCounter] = []
        package var activities: [ReplayComparison.ActivityStep] = []

        package init() {}

        /// Whether nothing was recorded in `from..<to` (no run, no world event): nothing to replay.
        package func isEmpty(from: Instant, to: Instant) -> Bool {
            runs.isEmpty && !world.contains { $0.at >= from && $0.at < to }
        }
    }

    /// Reads `from..<to` from `store`: the runs newest first, a page at a time, back to those
    /// started before the period (bounded by the store's run history).
    package static func read(_ store: any StateStoring, from: Instant, to: Instant) throws -> Recorded {
        var recorded = Recorded()
        recorded.world = try store.records(table: WorldEvent.table).compactMap(WorldEvent.init)
        recorded.widgets = ReplayComparison.widgetCounters(store, from: from, to: to)
        recorded.activities = ReplayComparison.activitySteps(store, to: to)
        var before: Int64?
        while true {
            let page = try store.recentRuns(limit: 10_000, before: before, withOutput: true)
            recorded.runs += page.filter { $0.started < to && ($0.ended ?? $0.started) >= from }
            guard let oldest = page.last, oldest.started >= from, page.count == 10_000 else { break }
            before = oldest.runID
        }
        return recorded
    }

    /// A replay's whole answer: the scenario's notes, both simulations' reports, the table.
    package struct Outcome: Sendable {
        package var setup: Setup
        package var replayed: SimulationReport
        package var whatIf: SimulationReport?
        package var comparison: ReplayComparison
        /// Both simulations' invariant violations.
        package var violations: [SimulationReport.Violation]
        /// The runs as recorded (the picture's "ran" lanes), an instance's under its template.
        package var ran: [RunRecord]

        /// The report the picture draws: per job, its lanes as ran, replayed and what if.
        package var paired: SimulationReport {
            ReplayComparison.pairedReport(replayed: replayed, ran: ran, whatIf: whatIf)
        }
    }

    /// The period replayed with the files that ran (`ran`, loaded from `from`) and, for a
    /// what-if, with `whatIf`'s (named `jobs`), side by side with what ran. `stopRequested` is
    /// asked before every simulated step of both (a caller's time bound); a stopped replay
    /// compares what it simulated.
    package static func compare(_ recorded: Recorded, ran base: Scenario, whatIf other: (jobs: String, scenario: Scenario)?,
                                from: Instant, to: Instant, seed: UInt64?, zone: TimeZone,
                                stopRequested: (@Sendable () -> Bool)? = nil) -> Outcome {
        var same = scenario(base, runs: recorded.runs, world: recorded.world, from: from, to: to)
        if let seed { same.scenario.seed = seed }
        let replaying = Simulation(scenario: same.scenario)
        replaying.stopRequested = stopRequested
        let replayed = replaying.run()
        var whatIf: (report: SimulationReport, widgets: [WidgetDayCounter], activities: [ReplayComparison.ActivityStep])?
        if let other {
            var setup = scenario(other.scenario, runs: recorded.runs, world: recorded.world, from: from, to: to, recordedFiles: base)
            setup.scenario.seed = same.scenario.seed
            let simulation = Simulation(scenario: setup.scenario)
            simulation.stopRequested = stopRequested
            let report = simulation.run()
            whatIf = (report, simulation.widgetCounters(from: from, to: to), simulation.activitySteps(to: to))
        }
        // An instance's runs under its template, as the simulation's report counts them.
        let templates = Set(base.jobs.filter { $0.spec.template != nil }.map(\.spec.identifier))
        let ran = recorded.runs.filter { $0.started >= same.scenario.start }.map {
            var run = ReplayComparison.Run($0)
            run.identifier = ReplayComparison.folded(run.identifier, templates: templates)
            return run
        }
        var comparison = ReplayComparison(from: same.scenario.start, to: to, ran: ran, replayed: replayed.comparedRuns,
                                          whatIf: whatIf?.report.comparedRuns, whatIfJobs: other?.jobs, zone: zone)
        comparison.compareWidgets(ran: recorded.widgets, replayed: replaying.widgetCounters(from: from, to: to), whatIf: whatIf?.widgets)
        comparison.compareActivities(ran: recorded.activities, replayed: replaying.activitySteps(to: to), whatIf: whatIf?.activities)
        let folded = recorded.runs.map { run in
            var run = run
            run.identifier = ReplayComparison.folded(run.identifier, templates: templates)
            return run
        }
        return Outcome(setup: same, replayed: replayed, whatIf: whatIf?.report, comparison: comparison,
                       violations: replayed.violations + (whatIf?.report.violations ?? []), ran: folded)
    }

    static let periodExpectation = "FROM..TO, each an ISO 8601 date with an offset like 2026-11-23T00:00:00Z "
        + "or a span back from now like 2h (TO may be left out: now)"

    /// One side of a period: an ISO 8601 date with an offset, or a span back from `now` (`2h`,
    /// `1d`); empty is `now`. Nil when it is neither.
    package static func instant(_ side: String, now: Instant) -> Instant? {
        if side.isEmpty { return now }
        if let instant = ISO8601.parse(side) { return instant }
        if case let .success(span) = DurationParser.parse(side), span >= .zero { return now - span }
        return nil
    }

    /// `FROM..TO` (TO empty: now), or nil with the words of what was expected.
    package static func period(_ text: String, now: Instant) -> Result<(Instant, Instant), PeriodError> {
        let parts = text.components(separatedBy: "..")
        guard parts.count == 2, !parts[0].isEmpty, let from = instant(parts[0], now: now), let to = instant(parts[1], now: now) else {
            return .failure(PeriodError(message: "expected \(periodExpectation), found \(EchoText.quoted(text, limit: 80))"))
        }
        return .success((from, to))
    }

    package struct PeriodError: Error, Sendable {
        package var message: String
    }
}
