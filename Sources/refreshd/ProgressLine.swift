import Foundation
import RefreshdSimulation

/// `refreshd test`'s progress while simulations run: one line on standard error, rewritten in
/// place (`ran 340 of 1000 plans, 0 failing`), only when standard error is a terminal and the
/// output is not JSON. A thousand explored plans take minutes; without it the command is silent
/// until the end. Nothing of it reaches a pipe, a file or a script.
enum ProgressLine {
    static var enabled: Bool { isatty(STDERR_FILENO) == 1 }

    /// The callback for `ParallelRuns.run(progress:)`, or nil when no line should be drawn.
    static func onTerminal(unless json: Bool, total: Int,
                           noun: String) -> (@Sendable (Int, SimulationReport) -> Void)? {
        guard !json, enabled else { return nil }
        let failing = FailingCount()
        return { ended, report in
            // ParallelRuns calls this one call at a time: the count needs no lock of its own.
            if !report.violations.isEmpty || report.expectations.contains(where: { !$0.passed }) { failing.value += 1 }
            let text = "\r\u{1B}[Kran \(ended) of \(total) \(noun), \(failing.value) failing"
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
