import ArgumentParser
import Foundation
import RefreshdConfig
import RefreshdRuntime
import RefreshdSimulation
import RefreshdCore
import RefreshdStore

/// `simulate --calibrate` (issue 34): each job's model from the runs the state recorded, printed
/// as `simulate:` blocks (or JSON), or used at once with `--apply`. The derivation is
/// `Calibration`'s; this file only reads the store.
extension SimulateCommand {
    static let sinceExpectation = "a span like 7d or 12h, or an ISO 8601 date with an offset like 2026-11-23T00:00:00Z"

    func validateCalibration() throws {
        if !calibrate {
            for (set, name) in [(since != nil, "--since"), (state != nil && replay == nil, "--state"), (apply, "--apply")] where set {
                throw ValidationError("\(name) needs --calibrate")
            }
            return
        }
        if scenario != nil { throw ValidationError("--calibrate reads job files (--jobs), not --scenario") }
        if nodes != nil || exec || replay != nil { throw ValidationError("--calibrate cannot be combined with --nodes, --exec or --replay") }
        if !apply, days != nil || start != nil || seed != nil || svg != nil {
            throw ValidationError("--days, --start, --seed and --svg apply to a simulation: add --apply to run one with the calibrated models")
        }
        _ = try Self.sinceInstant(since, now: Instant(milliseconds: 0))
    }

    /// `--since`: `7d` (back from `now`) or an ISO 8601 date.
    static func sinceInstant(_ text: String?, now: Instant) throws -> Instant {
        let text = text ?? "7d"
        if let instant = ISO8601.parse(text) { return instant }
        if case let .success(span) = DurationParser.parse(text), span > .zero { return now - span }
        throw ValidationError("--since: expected \(sinceExpectation), found \(EchoText.quoted(text, limit: 80))")
    }

    /// The calibrations of the runs started since `--since`, or exits 1 with the reason (a
    /// state that cannot be read, no run in the span).
    func calibrations() -> (jobs: [Calibration.Job], since: Instant) {
        let directory = state ?? ".refreshd"
        let now = Instant(secondsSinceEpoch: Date().timeIntervalSince1970)
        let from = (try? Self.sinceInstant(since, now: now)) ?? now
        let command = "simulate --calibrate"
        var runs: [RunRecord] = []
        var newest: RunRecord?
        do {
            try StateDirectory.checkReadable(directory)
            let store = try StateStore.open(directory: directory, readOnly: true)
            defer { store.close() }
            // Newest first, a page at a time, until the pages reach runs started before the span
            // (run ids grow with launches, so nothing older is further on).
            var before: Int64?
            while true {
                let page = try store.recentRuns(limit: 10_000, before: before)
                if newest == nil { newest = page.first }
                runs += page.filter { $0.started >= from }
                guard let oldest = page.last, oldest.started >= from, page.count == 10_000 else { break }
                before = oldest.runID
            }
        } catch {
            ControlOutput.fail(ControlFailure(code: error.kind.name, message: error.description), json: json, command: command)
        }
        guard !runs.isEmpty else {
            let held = newest.map { "its newest run started \($0.started.iso8601)" } ?? "it holds no run at all"
            ControlOutput.fail(ControlFailure(code: "no-runs", message: "no run in \(directory) started since \(from.iso8601) "
                                              + "to calibrate from (\(held)); try a longer --since"), json: json, command: command)
        }
        return (Calibration.derive(runs: runs), from)
    }

    /// `--calibrate` alone: the blocks, or one JSON object.
    func printCalibration() {
        let (jobs, from) = calibrations()
        if json {
            struct Output: Encodable {
                var state: String
                var since: String
                var minimumRuns: Int
                var jobs: [Calibration.Job.JSON]
            }
            return ControlOutput.printJSON(Output(state: state ?? ".refreshd", since: from.iso8601,
                                                  minimumRuns: Calibration.minimumRuns, jobs: jobs.map(\.json)))
        }
        print("# calibrated from the runs in \(state ?? ".refreshd") started since \(from.iso8601): "
              + "paste each block into its job file (models from fewer than \(Calibration.minimumRuns) runs are marked thin)")
        for job in jobs { print("\n" + job.yaml, terminator: "") }
    }

    /// `--calibrate --apply`: the jobs folder's scenario with the calibrated models; says on
    /// stderr which jobs kept their own block.
    func applyCalibration(to setup: inout Scenario) {
        let (jobs, from) = calibrations()
        let applied = Set(setup.apply(jobs))
        let kept = setup.jobs.map(\.spec.identifier).filter { !applied.contains($0) }
        let thin = jobs.filter { $0.thin && applied.contains($0.identifier) }.map(\.identifier)
        var note = "refreshd: simulating with the models calibrated from runs since \(from.iso8601): "
            + (applied.isEmpty ? "none" : applied.sorted().joined(separator: ", "))
        if !thin.isEmpty { note += "; too thin to trust (fewer than \(Calibration.minimumRuns) runs): " + thin.joined(separator: ", ") }
        if !kept.isEmpty { note += "; no history, their own simulate: blocks: " + kept.joined(separator: ", ") }
        FileHandle.standardError.write(Data((note + "\n").utf8))
    }
}
