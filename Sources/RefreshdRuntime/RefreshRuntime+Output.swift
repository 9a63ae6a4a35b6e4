import RefreshdCore

/// The job-output rate limit, decided by the machine for both hosts (`RuntimeMachine`,
/// `OutputRateLimiter`, on the runtime's clock): a host reports what a run printed (its lines,
/// or for a chunk it did not split, its bytes and line ends); the runtime logs what the machine
/// admits and the drops it reports, once per window and at the run's end.
extension RefreshRuntime {
    /// Whether the run's current window is full (any thread): a host may then count a chunk
    /// with `runOutputSkipped` instead of splitting it into lines, so a flood costs little.
    package func runOutputIsOverLimit(_ order: LaunchOrder) -> Bool {
        guard case let .outputWindow(full, dropped) = perform(.outputWindow(order)).reply else { return false }
        if let dropped { report(observation(dropped)) }
        return full
    }

    /// Complete lines a run printed on `stream` (any thread): each that fits the window is
    /// logged, the rest counted as dropped.
    package func runOutputLines(_ order: LaunchOrder, stream: String, lines: [String]) {
        guard !lines.isEmpty, case let .output(action) = perform(.output(order, lines: lines)).reply else { return }
        // Decided under the lock, logged outside it (observers never run with it held here).
        for log in action.logs(order, stream: stream) { report(RuntimeObservation(log, at: clock())) }
    }

    /// Output a host read and dropped unsplit because the window was full (any thread).
    package func runOutputSkipped(_ order: LaunchOrder, bytes: Int, lineEnds: Int) {
        perform(.outputSkipped(order, bytes: bytes, lineEnds: lineEnds))
    }

    /// The log line of what a window dropped.
    func observation(_ drop: RuntimeMachine.OutputDrop) -> RuntimeObservation {
        RuntimeObservation(drop.log, at: clock())
    }
}
