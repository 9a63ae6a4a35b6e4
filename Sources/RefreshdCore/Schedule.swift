/// A recurring schedule: asks for the next slot strictly after an instant.
///
/// The core stays free of time zones and calendars: `RefreshdCalendar` builds a `Schedule` from a
/// systemd or cron expression in its zone and hands the core only the function. Two schedules are
/// equal when their texts are (the text names expression and zone), which is what config reload
/// compares.
public struct Schedule: Sendable, Hashable, CustomStringConvertible {
    /// The schedule's expression and zone as written (also what equality compares).
    public let text: String
    private let nextAfter: @Sendable (Instant) -> Instant?

    /// A schedule named `text` whose next slot after an instant `next` returns (nil: no more slots).
    /// `next` must be pure: the core calls it at any time, with any instant.
    public init(_ text: String, next: @escaping @Sendable (Instant) -> Instant?) {
        self.text = text
        self.nextAfter = next
    }

    /// The first slot strictly after `instant`, or nil when the schedule has no more slots.
    public func next(after instant: Instant) -> Instant? { nextAfter(instant) }

    /// Slots in `[from, to]`, counted up to `limit` (for reporting missed slots).
    public func count(from: Instant, through to: Instant, limit: Int = 100_000) -> Int {
        var n = 0
        var t = from - .milliseconds(1)
        while n < limit, let s = next(after: t), s <= to {
            n += 1
            t = s
        }
        return n
    }

    /// The schedule's text.
    public var description: String { text }
    /// Equal when the texts are: the function cannot be compared, the text names it.
    public static func == (a: Schedule, b: Schedule) -> Bool { a.text == b.text }
    /// Hashes the text, as equality compares it.
    public func hash(into hasher: inout Hasher) { hasher.combine(text) }
}
