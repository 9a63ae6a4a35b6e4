/// Caps how much of a run's output reaches the log, so that a job printing as fast as it can
/// (`yes`) cannot flood the log or keep the loop thread writing while timers and signals wait.
///
/// Per run and per one-second window: at most `maxLines` lines and `maxBytes` bytes are logged;
/// the rest is read and dropped (never buffered), counted, and reported once when the window
/// after it begins or the run ends ("… lines of output not logged"). The job is never slowed or
/// blocked: its pipe is drained at full speed, only the log is limited.
///
/// A runtime decision (`RefreshRuntime.runOutputLines`), fed by both hosts: the libuv host
/// reports what it read, the simulated host its modelled output; the window runs on the
/// runtime's clock (real or virtual).
package struct OutputRateLimiter: Sendable {
    package let maxLines: Int
    package let maxBytes: Int
    private var windowStart: UInt64 = 0
    private var started = false
    private var lines = 0
    private var bytes = 0
    package private(set) var droppedLines = 0
    package private(set) var droppedBytes = 0

    package init(maxLines: Int = 200, maxBytes: Int = 256 * 1024) {
        self.maxLines = maxLines
        self.maxBytes = maxBytes
    }

    /// The limit as the log states it.
    package var limitText: String { "\(maxLines) lines or \(maxBytes / 1024) KiB a second" }

    /// Starts a new window if `now` (milliseconds) is past the current one, or before it (the
    /// wall clock stepped back); returns the drop counts of the window that ended, if anything
    /// was dropped in it.
    package mutating func advance(to now: UInt64) -> (lines: Int, bytes: Int)? {
        guard !started || now >= windowStart + 1000 || now < windowStart else { return nil }
        started = true
        windowStart = now
        lines = 0
        bytes = 0
        return takeDropped()
    }

    /// Whether the window still has room for a line of `length` bytes; counts it either way.
    package mutating func admit(length: Int) -> Bool {
        if lines < maxLines, bytes + length <= maxBytes {
            lines += 1
            bytes += length
            return true
        }
        droppedLines += 1
        droppedBytes += length
        return false
    }

    /// Whether this window is already full, so whole chunks can be dropped without splitting.
    package var isFull: Bool { lines >= maxLines || bytes >= maxBytes }

    /// Records bytes dropped unsplit, with the number of line ends among them.
    package mutating func drop(bytes count: Int, lineEnds: Int) {
        droppedLines += lineEnds
        droppedBytes += count
    }

    /// The drop counts so far (nil when nothing was dropped), reset.
    package mutating func takeDropped() -> (lines: Int, bytes: Int)? {
        guard droppedBytes > 0 || droppedLines > 0 else { return nil }
        defer { droppedLines = 0; droppedBytes = 0 }
        return (droppedLines, droppedBytes)
    }
}
