/// Where the timeline machine's counter days begin: UTC midnights (the daemon's `widget-day`
/// rows and `refreshd stats reloads`), or the local midnights of a time zone given as its UTC
/// offsets over time (the simulator passes the scenario's zone, so its report's rows are the
/// days it labels; before, UTC rows filed under local labels lost whole days east and west of
/// UTC).
///
/// Plain data (no zone database is read here), so the machine stays a pure function of its
/// events: the caller lists each offset from the instant it takes effect.
package struct CountingDays: Sendable, Hashable {
    /// `(from, seconds east of UTC)`, sorted by `from`; before the first, the first's offset.
    package private(set) var offsets: [(from: Instant, seconds: Int64)]

    /// UTC days.
    package static let utc = CountingDays(offsets: [])

    package init(offsets: [(from: Instant, seconds: Int64)]) {
        self.offsets = offsets.sorted { $0.from < $1.from }
    }

    package static func == (lhs: CountingDays, rhs: CountingDays) -> Bool {
        lhs.offsets.count == rhs.offsets.count
            && zip(lhs.offsets, rhs.offsets).allSatisfy { $0.from == $1.from && $0.seconds == $1.seconds }
    }

    package func hash(into hasher: inout Hasher) {
        for o in offsets {
            hasher.combine(o.from)
            hasher.combine(o.seconds)
        }
    }

    static let dayMilliseconds: Int64 = 86_400_000

    /// The offset in force at `instant`, in milliseconds.
    func offsetMilliseconds(at instant: Instant) -> Int64 {
        guard let first = offsets.first else { return 0 }
        var low = 0, high = offsets.count
        while low < high {
            let mid = (low + high) / 2
            if offsets[mid].from <= instant { low = mid + 1 } else { high = mid }
        }
        return (low == 0 ? first.seconds : offsets[low - 1].seconds) * 1000
    }

    /// The day `instant` falls on (days since 1970-01-01 of the local calendar).
    package func day(of instant: Instant) -> Int64 {
        let local = instant.milliseconds &+ offsetMilliseconds(at: instant)
        let (q, r) = local.quotientAndRemainder(dividingBy: Self.dayMilliseconds)
        return r < 0 ? q - 1 : q
    }

    /// The first instant of `day` (its local midnight; after a change of offset that skips
    /// midnight, the first instant whose day is `day`).
    package func start(of day: Int64) -> Instant {
        let midnight = day &* Self.dayMilliseconds
        guard !offsets.isEmpty else { return Instant.clamped(midnight) }
        // The offset at the guess may differ from the one at the answer (a change near
        // midnight): refine once with the offset found, then make sure the answer is the first.
        var guess = Instant.clamped(midnight - offsetMilliseconds(at: Instant.clamped(midnight)))
        guess = Instant.clamped(midnight - offsetMilliseconds(at: guess))
        if self.day(of: guess) < day, let change = offsets.first(where: { $0.from > guess && self.day(of: $0.from) >= day }) {
            guess = change.from
        }
        return guess
    }
}
