import Foundation
import RefreshdSimulation

/// Progress while simulations run: one line on standard error, rewritten in place (`ran 340 of
/// 1000 plans, 0 failing` for `refreshd test`, `simulated 120 of 365 days` for `simulate`), only
/// when standard error is a terminal and the output is not JSON. A thousand explored plans, or a
/// year of real commands with `--exec`, take minutes; without it the command is silent until
/// the end. Nothing of it reaches a pipe, a file or a script.
enum ProgressLine {
    static var enabled: Bool { isatty(STDERR_FILENO) == 1 }

    /// The callback for `ParallelRuns.run(progress:)`, or nil when no line should be drawn.
    static func reports(unless json: Bool, total: Int, noun: String) -> (@Sendable (Int, SimulationReport) -> Void)? {
        guard let line = onTerminal(unless: json, total: total, noun: noun) else { return nil }
        return { @Sendable done, report in line(done, report) }
    }

    /// The callback for `Simulation.run(progress:)`, or nil when no line should be drawn.
    static func days(unless json: Bool, total: Int) -> ((Int) -> Void)? {
        guard let line = onTerminal(unless: json, total: total, noun: "days", verb: "simulated") else { return nil }
        return { days in line(days, nil) }
    }

    /// A report with each call (its failures counted), or none (days of one simulation).
    private static func onTerminal(unless json: Bool, total: Int, noun: String,
                           verb: String = "ran") -> (@Sendable (Int, SimulationReport?) -> Void)? {
        guard !json, enabled else { return nil }
        let failing = FailingCount()
        return { done, report in
            // Called one call at a time (ParallelRuns holds its lock): the count needs none.
            var text = "\r\u{1B}[K\(verb) \(done) of \(total) \(noun)"
            if let report {
                if !report.violations.isEmpty || report.expectations.contains(where: { !$0.passed }) { failing.value += 1 }
                text += ", \(failing.value) failing"
            }
            FileHandle.standardError.write(Data(text.utf8))
        }
    }

    /// Erases the line, so the results print from the start of a clean line.
    static func clear(unless json: Bool) {
        guard !json, enabled else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }

    private final class FailingCount: @unchecked Sendable {
        var value = 0
    }
}
