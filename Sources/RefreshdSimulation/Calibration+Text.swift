import RefreshdConfig

extension Calibration.Job {
    /// The job's `simulate:` block to paste into its job file, after comments saying from how
    /// many runs over what period, what was counted, and whether it is too thin to trust; only
    /// the comments when no run can be counted.
    package var yaml: String {
        let who = instances.map { "template \(identifier) (\($0) instance\($0 == 1 ? "" : "s"))" } ?? identifier
        var lines: [String] = []
        var leftOut: [String] = []
        if interrupted > 0 { leftOut.append("\(interrupted) interrupted") }
        if unfinished > 0 { leftOut.append("\(unfinished) in flight") }
        let leftOutText = leftOut.isEmpty ? "" : "; left out: " + leftOut.joined(separator: ", ")
        guard runs > 0 else {
            return "# \(who): no finished run to calibrate from\(leftOutText)\n"
        }
        // The period to the second (to the millisecond under one): "over 1m14s", not "1m14s72ms".
        let span = last.duration(since: first)
        let period = span < .seconds(1) ? span : .seconds(span.wholeMilliseconds / 1000)
        lines.append("# \(who): calibrated from \(runs) run\(runs == 1 ? "" : "s") over \(period.compactText), "
                     + "started \(first.iso8601) to \(last.iso8601)")
        if thin {
            lines.append("# too thin to trust: fewer than \(Calibration.minimumRuns) runs")
        }
        let statuses = exitStatuses.keys.sorted().map { "exit \($0): \(exitStatuses[$0]!)" }
        let signalText = signals.keys.sorted().map { "signal \($0): \(signals[$0]!)" }
        lines.append("# \(successes) success, \(failures) failure\(statuses.isEmpty ? "" : " (\(statuses.joined(separator: ", ")))"), "
                     + "\(expired) expired\(killedAfterGrace > 0 ? " (\(killedAfterGrace) killed after the grace)" : ""), "
                     + "\(crashed) crashed\(signalText.isEmpty ? "" : " (\(signalText.joined(separator: ", ")))"); "
                     + "\(retries) retr\(retries == 1 ? "y" : "ies")\(retries > 0 ? " (\(retriesSucceeded) succeeded)" : "")\(leftOutText)")
        lines.append("simulate:")
        let model = self.model
        switch model.duration {
        case let .fixed(value):
            lines.append("  duration: \(value.compactText)")
        case let .quantiles(values):
            lines.append("  duration:")
            let texts = values.map(\.compactText)
            var row = "    quantiles: ["
            let indent = String(repeating: " ", count: row.count)
            for (index, text) in texts.enumerated() {
                let piece = text + (index == texts.count - 1 ? "]" : ",")
                if row.count + piece.count + 1 > 100, !row.hasSuffix("[") {
                    lines.append(row)
                    row = indent + piece
                } else {
                    row += (row.hasSuffix("[") ? "" : " ") + piece
                }
            }
            lines.append(row)
        default:
            break
        }
        if let weights = model.retryOutcomes {
            if successes + failures + crashed > retriesSucceeded + retryFailures + retryCrashes {
                lines.append("  outcomes: \(Self.weights(model.outcomes))   # first attempts")
            }
            lines.append("  retry-outcomes: \(Self.weights(weights))   # retries")
        } else if successes + failures + crashed > 0 {
            lines.append("  outcomes: \(Self.weights(model.outcomes))")
        }
        if model.ignoresTerminate { lines.append("  ignores-sigterm: true") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `{success: 45, failure: 3, crash: 1}`: the counts, which are whole numbers.
    static func weights(_ w: JobModel.OutcomeWeights) -> String {
        "{success: \(Int(w.success)), failure: \(Int(w.failure)), crash: \(Int(w.crash))}"
    }

    /// The calibration as `--json` prints it.
    package var json: JSON {
        JSON(identifier: identifier, instances: instances, runs: runs, thin: thin,
             first: runs > 0 ? first.iso8601 : nil, last: runs > 0 ? last.iso8601 : nil,
             outcomes: ["success": successes, "failure": failures, "expired": expired, "crashed": crashed],
             exitStatuses: Dictionary(uniqueKeysWithValues: exitStatuses.map { (String($0.key), $0.value) }),
             signals: Dictionary(uniqueKeysWithValues: signals.map { (String($0.key), $0.value) }),
             killedAfterGrace: killedAfterGrace, retries: retries, retriesSucceeded: retriesSucceeded,
             interrupted: interrupted, unfinished: unfinished,
             durationQuantilesMs: quantiles.map(\.wholeMilliseconds), simulate: runs > 0 ? yaml : nil)
    }

    /// One job in `simulate --calibrate --json`; `simulate` is the block (with its comments)
    /// the text output prints.
    package struct JSON: Encodable, Sendable {
        var identifier: String
        var instances: Int?
        var runs: Int
        var thin: Bool
        var first: String?
        var last: String?
        var outcomes: [String: Int]
        var exitStatuses: [String: Int]
        var signals: [String: Int]
        var killedAfterGrace: Int
        var retries: Int
        var retriesSucceeded: Int
        var interrupted: Int
        var unfinished: Int
        var durationQuantilesMs: [Int64]
        var simulate: String?
    }
}
