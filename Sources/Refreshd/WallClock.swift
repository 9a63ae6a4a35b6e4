import Glibc
import RefreshdCore

/// The real wall clock, read only by the shell (the core takes instants as arguments).
package enum WallClock {
    package static func now() -> Instant {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Instant(milliseconds: Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000)
    }
}

/// Where the shell reads the wall clock. Real by default; tests shift it to stand in for a
/// clock step (setting the real clock needs root and disturbs the machine).
public struct WallClockSource: Sendable {
    /// Reads the current instant (from any thread).
    public let now: @Sendable () -> Instant

    /// A clock that reads `now`.
    public init(now: @escaping @Sendable () -> Instant) { self.now = now }

    /// The real wall clock (`CLOCK_REALTIME`).
    public static let system = WallClockSource { WallClock.now() }
}
