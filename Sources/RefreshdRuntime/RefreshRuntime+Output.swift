import RefreshdCore

/// The job-output rate limit, decided here for both hosts: a host reports what a run printed
/// (its lines, or for a chunk it did not split, its bytes and line ends); the runtime decides
/// what is logged and what is dropped (`OutputRateLimiter`, on the runtime's clock), and logs
/// the drops once per window and at the run's end.
extension RefreshRuntime {
    /// Whether the run's current window is full (any thread): a host may then count a chunk
    /// with `runOutputSkipped` instead of splitting it into lines, so a flood costs little.
    public func runOutputIsOverLimit(_ order: LaunchOrder) -> Bool {
        lock.withLock {
            var limiter = outputLimits[order.runID] ?? OutputRateLimiter()
            advanceOutputWindow(order, &limiter)
            outputLimits[order.runID] = limiter
            return limiter.isFull
        }
    }

    /// Complete lines a run printed on `stream` (any thread): each that fits the window is
    /// logged, the rest counted as dropped.
    public func runOutputLines(_ order: LaunchOrder, stream: String, lines: [String]) {
        guard !lines.isEmpty else { return }
        lock.withLock {
            var limiter = outputLimits[order.runID] ?? OutputRateLimiter()
            advanceOutputWindow(order, &limiter)
            for line in lines where limiter.admit(length: line.utf8.count) {
                runOutput(order, stream: stream, line: line)
            }
            outputLimits[order.runID] = limiter
        }
    }

    /// Output a host read and dropped unsplit because the window was full (any thread).
    public func runOutputSkipped(_ order: LaunchOrder, bytes: Int, lineEnds: Int) {
        lock.withLock {
            var limiter = outputLimits[order.runID] ?? OutputRateLimiter()
            limiter.drop(bytes: bytes, lineEnds: lineEnds)
            outputLimits[order.runID] = limiter
        }
    }

    /// Under `lock`: a new window if the last one is over, reporting what it dropped.
    func advanceOutputWindow(_ order: LaunchOrder, _ limiter: inout OutputRateLimiter) {
        let now = clock().milliseconds
        if let dropped = limiter.advance(to: UInt64(max(0, now))) {
            runOutputDropped(order, lines: dropped.lines, bytes: dropped.bytes, limit: limiter.limitText)
        }
    }

    /// Under `lock`: the run ended; what its last window dropped is reported.
    func endOutputLimit(_ runID: Int64) {
        guard var limiter = outputLimits.removeValue(forKey: runID), let dropped = limiter.takeDropped() else { return }
        let identifier = machines.scheduler.activeRuns.first { $0.runID == runID }?.identifier ?? "?"
        let text = "\(identifier)[\(runID)] \(dropped.lines) line\(dropped.lines == 1 ? "" : "s") (\(dropped.bytes) bytes) of output not logged: over \(limiter.limitText)"
        report(RuntimeObservation(time: clock(), kind: .outputDropped, identifier: identifier, runID: runID,
                                  count: dropped.lines, message: text))
    }
}
