/// A wall-clock instant, in whole milliseconds since the Unix epoch (UTC).
///
/// The core never reads a clock: every event carries the instant at which it happened, given by
/// the shell (real wall clock) or the simulator (virtual clock). Milliseconds match libuv's timer
/// resolution and keep pending requests small (8 bytes per date).
public struct Instant: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public var milliseconds: Int64

    /// The instant `milliseconds` after (or before, if negative) the Unix epoch.
    public init(milliseconds: Int64) { self.milliseconds = milliseconds }

    /// An instant from seconds since the epoch (fractions kept to the millisecond).
    public init(secondsSinceEpoch seconds: Double) {
        self.milliseconds = Int64((seconds * 1000).rounded(.down))
    }

    /// Earlier instants order first.
    public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.milliseconds < rhs.milliseconds }

    /// 0001-01-01T00:00:00.000Z, the earliest instant arithmetic produces.
    package static let earliest = Instant(milliseconds: -62_135_596_800_000)
    /// 9999-12-31T23:59:59.999Z, the latest instant arithmetic produces.
    package static let latest = Instant(milliseconds: 253_402_300_799_999)

    /// The instant at `milliseconds`, held within [`earliest`, `latest`].
    package static func clamped(_ milliseconds: Int64) -> Instant {
        Instant(milliseconds: min(max(milliseconds, earliest.milliseconds), latest.milliseconds))
    }

    /// Saturates at `latest` and `earliest`: adding a huge duration gives "never" rather than a
    /// trap or a date that wrapped into the past. Every instant the core computes stays within
    /// years 1...9999, so calendars, formatting and the shell's timer never see one outside.
    public static func + (lhs: Instant, rhs: Duration) -> Instant {
        let (sum, overflow) = lhs.milliseconds.addingReportingOverflow(rhs.wholeMilliseconds)
        if overflow { return rhs > .zero ? latest : earliest }
        return clamped(sum)
    }

    /// Saturates like `+`.
    public static func - (lhs: Instant, rhs: Duration) -> Instant {
        let (difference, overflow) = lhs.milliseconds.subtractingReportingOverflow(rhs.wholeMilliseconds)
        if overflow { return rhs > .zero ? earliest : latest }
        return clamped(difference)
    }

    /// The time from `other` to `self` (negative when `other` is later), saturating.
    public func duration(since other: Instant) -> Duration {
        let (difference, overflow) = milliseconds.subtractingReportingOverflow(other.milliseconds)
        if overflow { return .milliseconds(other.milliseconds > milliseconds ? Int64.min : Int64.max) }
        return .milliseconds(difference)
    }

    /// ISO 8601 in UTC with milliseconds, e.g. `2026-11-21T14:12:52.123Z`.
    public var iso8601: String { ISO8601.format(self) }

    /// The ISO 8601 UTC form, as in logs and JSON.
    public var description: String { iso8601 }
}

extension Duration {
    /// The duration rounded toward zero to whole milliseconds, saturating at Int64's bounds.
    package var wholeMilliseconds: Int64 {
        // One 128-bit division (half the time of splitting into `components` first): every
        // deadline and re-submission the core computes goes through here.
        let ms = attoseconds / 1_000_000_000_000_000
        return Int64(exactly: ms) ?? (ms > 0 ? Int64.max : Int64.min)
    }
}

extension Duration {
    /// The job files' duration syntax, largest units first and zero parts left out: `1h30m`,
    /// `1d12h`, `2m30s500ms`, `0s`. Sub-millisecond parts are dropped. One formatter for `check`,
    /// messages and the seed specs the runtime stores.
    package var compactText: String {
        var ms = wholeMilliseconds
        if ms == 0 { return "0s" }
        var text = ""
        if ms < 0 {
            text = "-"
            ms = ms == Int64.min ? Int64.max : -ms
        }
        for (name, size) in [("d", Int64(86_400_000)), ("h", 3_600_000), ("m", 60_000), ("s", 1000), ("ms", 1)] {
            let count = ms / size
            if count > 0 {
                text += "\(count)\(name)"
                ms -= count * size
            }
        }
        return text
    }
}
