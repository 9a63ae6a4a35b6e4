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

    /// `FROM..TO` (TO empty: now); each side a date or a span back from `now` (`Replay.period`).
    static func period(_ text: String, now: Instant) throws -> (Instant, Instant) {
        switch Replay.period(text, now: now) {
        case let .success(period): return period
        case let .failure(error): throw ValidationError("--replay: \(error.message)")
        }
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
        var recorded = Replay.Recorded()
        do {
            try StateDirectory.checkReadable(directory)
            let store = try StateStore.open(directory: directory, readOnly: true)
            defer { store.close() }
            recorded = try Replay.read(store, from: from, to: to)
        } catch let error as StoreError {
            ControlOutput.fail(ControlFailure(code: error.kind.name, message: error.description), json: json, command: command)
        } catch {
            ControlOutput.fail(ControlFailure(code: "store", message: "\(error)"), json: json, command: command)
        }
        if recorded.isEmpty(from: from, to: to) {
            ControlOutput.fail(ControlFailure(code: "no-history", message: "nothing recorded in \(directory) between \(from.iso8601) "
                                              + "and \(to.iso8601) to replay"), json: json, command: command)
        }
        let zone = TimeZone.current
        let ranFolder = ranJobs ?? "Jobs"
        let base = try loadFolder(ranFolder, start: from, zone: zone)
        var whatIf: (jobs: String, scenario: Scenario)?
        if let other = jobs, other != ranFolder { whatIf = (other, try loadFolder(other, start: from, zone: zone)) }
        let outcome = Replay.compare(recorded, ran: base, whatIf: whatIf, from: from, to: to, seed: seed, zone: zone)
        let comparison = outcome.comparison, violations = outcome.violations
        if let svg {
            do {
                try SimulationPicture.svg(outcome.paired).write(toFile: svg, atomically: true, encoding: .utf8)
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
                                           replayedJobs: outcome.setup.replayedJobs, faults: outcome.replayed.faults,
                                           notes: outcome.setup.notes, comparison: comparison, violations: violations))
        } else {
            for note in outcome.setup.notes { FileHandle.standardError.write(Data("refreshd: replay: \(note)\n".utf8)) }
            print(comparison.text)
            if !outcome.replayed.faults.isEmpty {
                print("the world then, replayed:")
                for fault in outcome.replayed.faults {
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
