/// A wall-clock instant, in whole milliseconds since the Unix epoch (UTC).
///
/// The core never reads a clock: every event carries the instant at which it happened, given by
/// the shell (real wall clock) or the simulator (virtual clock). Milliseconds match libuv's timer
/// resolution and keep pending requests small (8 bytes per date).
public struct Instant: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public var milliseconds: Int64

    public init(milliseconds: Int64) { self.milliseconds = milliseconds }

    /// An instant from seconds since the epoch (fractions kept to the millisecond).
    public init(secondsSinceEpoch seconds: Double) {
        self.milliseconds = Int64((seconds * 1000).rounded(.down))
    }

    public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.milliseconds < rhs.milliseconds }

    public static func + (lhs: Instant, rhs: Duration) -> Instant {
        Instant(milliseconds: lhs.milliseconds &+ rhs.wholeMilliseconds)
    }

    public static func - (lhs: Instant, rhs: Duration) -> Instant {
        Instant(milliseconds: lhs.milliseconds &- rhs.wholeMilliseconds)
    }

    /// The time from `other` to `self` (negative when `other` is later).
    public func duration(since other: Instant) -> Duration {
        .milliseconds(milliseconds - other.milliseconds)
    }

    /// ISO 8601 in UTC with milliseconds, e.g. `2026-11-21T14:12:52.123Z`.
    public var iso8601: String { ISO8601.format(self) }

    public var description: String { iso8601 }
}

extension Duration {
    /// The duration rounded toward zero to whole milliseconds.
    public var wholeMilliseconds: Int64 {
        let parts = components
        return parts.seconds &* 1000 &+ parts.attoseconds / 1_000_000_000_000_000
    }
}
