import ArgumentParser
import Foundation
import RefreshdConfig
import RefreshdRuntime
import RefreshdSimulation
import RefreshdCore
import RefreshdStore

/// `simulate --replay FROM..TO [--jobs OTHER]` (issue 34): a recorded period run again by the
/// simulator with what the world did then, side by side with what ran, and with other files
/// for a what-if. The scenario is `Replay`'s, the table `ReplayComparison`'s; this file reads
/// the store and the folders and prints.
extension SimulateCommand {
    static let replayExpectation = "FROM..TO, each an ISO 8601 date with an offset like 2026-11-23T00:00:00Z "
        + "or a span back from now like 2h (TO may be left out: now)"

    func validateReplay() throws {
        guard let replay else {
            if ranJobs != nil { throw ValidationError("--ran-jobs needs --replay") }
            return
        }
        if scenario != nil || nodes != nil || exec || days != nil || start != nil {
            throw ValidationError("--replay reads its period and job files: it cannot be combined with --scenario, --nodes, --exec, --days or --start")
        }
        _ = try Self.period(replay, now: Instant(milliseconds: 0))
    }

    /// `FROM..TO` (TO empty: now); each side a date or a span back from `now`.
    static func period(_ text: String, now: Instant) throws -> (Instant, Instant) {
        let parts = text.components(separatedBy: "..")
        func instant(_ side: String) -> Instant? {
            if side.isEmpty { return now }
            if let instant = ISO8601.parse(side) { return instant }
            if case let .success(span) = DurationParser.parse(side), span >= .zero { return now - span }
            return nil
        }
        guard parts.count == 2, !parts[0].isEmpty, let from = instant(parts[0]), let to = instant(parts[1]) else {
            throw ValidationError("--replay: expected \(replayExpectation), found \(EchoText.quoted(text, limit: 80))")
        }
        return (from, to)
    }

    func runReplay() throws {
        let command = "simulate --replay"
        let now = Instant(secondsSinceEpoch: Date().timeIntervalSince1970)
        let (from, to) = try Self.period(replay ?? "", now: now)
        guard to > from else {
            ControlOutput.fail(ControlFailure(code: "bad-period", message: "--replay: \(from.iso8601)..\(to.iso8601) is empty"),
                               json: json, command: command)
        }
        let directory = state ?? ".refreshd"
        var runs: [RunRecord] = []
        var world: [WorldEvent] = []
        var ranWidgets: [WidgetDayCounter] = []
        var ranActivities: [ReplayComparison.ActivityStep] = []
        do {
            try StateDirectory.checkReadable(directory)
            let store = try StateStore.open(directory: directory, readOnly: true)
            defer { store.close() }
            world = try store.records(table: WorldEvent.table).compactMap(WorldEvent.init)
            ranWidgets = ReplayComparison.widgetCounters(store, from: from, to: to)
            ranActivities = ReplayComparison.activitySteps(store, to: to)
            // Newest first, a page at a time, back to the runs started before the period; with
            // their results lines, which replayed providers write again.
            var before: Int64?
            while true {
                let page = try store.recentRuns(limit: 10_000, before: before, withOutput: true)
                runs += page.filter { $0.started < to && ($0.ended ?? $0.started) >= from }
                guard let oldest = page.last, oldest.started >= from, page.count == 10_000 else { break }
                before = oldest.runID
            }
        } catch {
            ControlOutput.fail(ControlFailure(code: error.kind.name, message: error.description), json: json, command: command)
        }
        if runs.isEmpty, !world.contains(where: { $0.at >= from && $0.at < to }) {
            ControlOutput.fail(ControlFailure(code: "no-history", message: "nothing recorded in \(directory) between \(from.iso8601) "
                                              + "and \(to.iso8601) to replay"), json: json, command: command)
        }
        let zone = TimeZone.current
        let ranFolder = ranJobs ?? "Jobs"
        let base = try loadFolder(ranFolder, start: from, zone: zone)
        var same = Replay.scenario(base, runs: runs, world: world, from: from, to: to)
        if let seed { same.scenario.seed = seed }
        let replaying = Simulation(scenario: same.scenario)
        let replayed = replaying.run()
        var whatIf: (setup: Replay.Setup, report: SimulationReport, widgets: [WidgetDayCounter], activities: [ReplayComparison.ActivityStep])?
        if let other = jobs, other != ranFolder {
            var setup = Replay.scenario(try loadFolder(other, start: from, zone: zone), runs: runs, world: world, from: from, to: to,
                                        recordedFiles: base)
            setup.scenario.seed = same.scenario.seed
            let simulation = Simulation(scenario: setup.scenario)
            let report = simulation.run()
            whatIf = (setup, report, simulation.widgetCounters(from: from, to: to), simulation.activitySteps(to: to))
        }
        let ran = runs.filter { $0.started >= same.scenario.start }.map(ReplayComparison.Run.init)
        var comparison = ReplayComparison(from: same.scenario.start, to: to, ran: ran, replayed: replayed.comparedRuns,
                                          whatIf: whatIf?.report.comparedRuns, whatIfJobs: whatIf == nil ? nil : jobs, zone: zone)
        comparison.compareWidgets(ran: ranWidgets, replayed: replaying.widgetCounters(from: from, to: to), whatIf: whatIf?.widgets)
        comparison.compareActivities(ran: ranActivities, replayed: replaying.activitySteps(to: to), whatIf: whatIf?.activities)
        let violations = replayed.violations + (whatIf?.report.violations ?? [])
        if let svg {
            let paired = ReplayComparison.pairedReport(replayed: replayed, ran: runs, whatIf: whatIf?.report)
            do {
                try SimulationPicture.svg(paired).write(toFile: svg, atomically: true, encoding: .utf8)
            } catch {
                FileHandle.standardError.write(Data("refreshd: cannot write \(svg): \(error.localizedDescription)\n".utf8))
                throw ExitCode(1)
            }
        }
        if json {
            struct Output: Encodable {
                var state: String
                var jobs: String
                var whatIfJobs: String?
                var replayedJobs: [String]
                var faults: [SimulationReport.FaultRecord]
                var notes: [String]
                var comparison: ReplayComparison
                var violations: [SimulationReport.Violation]
            }
            ControlOutput.printJSON(Output(state: directory, jobs: ranFolder, whatIfJobs: comparison.whatIfJobs,
                                           replayedJobs: same.replayedJobs, faults: replayed.faults, notes: same.notes,
                                           comparison: comparison, violations: violations))
        } else {
            for note in same.notes { FileHandle.standardError.write(Data("refreshd: replay: \(note)\n".utf8)) }
            print(comparison.text)
            if !replayed.faults.isEmpty {
                print("the world then, replayed:")
                for fault in replayed.faults {
                    print("  \(fault.kind) \(fault.at?.iso8601 ?? "")\(fault.until.map { ".." + $0.iso8601 } ?? ""): \(fault.detail)")
                }
            }
            for v in violations { print("VIOLATED \(v.invariant) at \(v.time.iso8601): \(v.message)") }
        }
        if !violations.isEmpty { throw ExitCode(1) }
    }

    /// A folder's jobs as a scenario, or exits 1 with its errors.
    func loadFolder(_ folder: String, start: Instant, zone: TimeZone) throws -> Scenario {
        switch JobsFolderSimulation.scenario(jobs: folder, start: start, zone: zone) {
        case let .success(scenario): return scenario
        case let .failure(errors):
            for error in errors.errors { FileHandle.standardError.write(Data("\(error)\n".utf8)) }
            FileHandle.standardError.write(Data("refreshd: cannot replay: \(errors.errors.count) error\(errors.errors.count == 1 ? "" : "s") in \(folder)\n".utf8))
            throw ExitCode(1)
        }
    }
}
