import RefreshdCore

/// The job-output rate limit, decided here for both hosts: a host reports what a run printed
/// (its lines, or for a chunk it did not split, its bytes and line ends); the runtime decides
/// what is logged and what is dropped (`OutputRateLimiter`, on the runtime's clock), and logs
/// the drops once per window and at the run's end.
extension RefreshRuntime {
    /// Whether the run's current window is full (any thread): a host may then count a chunk
    /// with `runOutputSkipped` instead of splitting it into lines, so a flood costs little.
    public func runOutputIsOverLimit(_ order: LaunchOrder) -> Bool {
        let (full, dropped) = lock.withLock { () -> (Bool, (lines: Int, bytes: Int)?) in
            var limiter = outputLimits[order.runID] ?? OutputRateLimiter()
            let dropped = limiter.advance(to: outputClock())
            outputLimits[order.runID] = limiter
            return (limiter.isFull, dropped)
        }
        if let dropped { runOutputDropped(order, lines: dropped.lines, bytes: dropped.bytes, limit: limitText) }
        return full
    }

    /// Complete lines a run printed on `stream` (any thread): each that fits the window is
    /// logged, the rest counted as dropped.
    public func runOutputLines(_ order: LaunchOrder, stream: String, lines: [String]) {
        guard !lines.isEmpty else { return }
        // Decided under the lock, logged outside it (observers never run with it held here).
        let (admitted, dropped) = lock.withLock { () -> ([String], (lines: Int, bytes: Int)?) in
            var limiter = outputLimits[order.runID] ?? OutputRateLimiter()
            let dropped = limiter.advance(to: outputClock())
            let admitted = lines.filter { limiter.admit(length: $0.utf8.count) }
            outputLimits[order.runID] = limiter
            return (admitted, dropped)
        }
        if let dropped { runOutputDropped(order, lines: dropped.lines, bytes: dropped.bytes, limit: limitText) }
        for line in admitted { runOutput(order, stream: stream, line: line) }
    }

    /// Output a host read and dropped unsplit because the window was full (any thread).
    public func runOutputSkipped(_ order: LaunchOrder, bytes: Int, lineEnds: Int) {
        lock.withLock {
            var limiter = outputLimits[order.runID] ?? OutputRateLimiter()
            limiter.drop(bytes: bytes, lineEnds: lineEnds)
            outputLimits[order.runID] = limiter
        }
    }

    /// The limit as the log states it.
    var limitText: String { OutputRateLimiter().limitText }

    /// The runtime's clock, for the windows (the host's clock: real or virtual).
    func outputClock() -> UInt64 { UInt64(max(0, clock().milliseconds)) }

    /// Under `lock`: the run ended; what its last window dropped, to report (outside the lock).
    func endOutputLimit(_ runID: Int64) -> RuntimeObservation? {
        guard var limiter = outputLimits.removeValue(forKey: runID), let dropped = limiter.takeDropped() else { return nil }
        let identifier = machines.scheduler.activeRuns.first { $0.runID == runID }?.identifier ?? "?"
        let text = "\(identifier)[\(runID)] \(dropped.lines) line\(dropped.lines == 1 ? "" : "s") (\(dropped.bytes) bytes) of output not logged: over \(limiter.limitText)"
        return RuntimeObservation(time: clock(), kind: .outputDropped, identifier: identifier, runID: runID,
                                  count: dropped.lines, message: text)
    }
}
