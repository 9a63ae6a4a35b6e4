/// One element of a calendar field's comma-separated list: a value, a range `start..stop`,
/// or a repetition `start/repeat` (optionally bounded by `stop`).
///
/// Mirrors systemd's `CalendarComponent`: `stop == -1` means unbounded and `repeat == 0`
/// means no repetition. Seconds are stored in microseconds so fractions like `05.250` work.
struct CalendarComponent: Sendable, Hashable, Comparable {
    var start: Int
    var stop: Int = -1
    var repeatEvery: Int = 0

    static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.start, lhs.stop, lhs.repeatEvery) < (rhs.start, rhs.stop, rhs.repeatEvery)
    }

    /// systemd's chain normalization: trims `stop` to a multiple of `repeat`, turns ranges
    /// that cannot repeat into single values, then sorts and removes duplicates.
    static func normalizeChain(_ chain: [CalendarComponent]) -> [CalendarComponent] {
        let adjusted = chain.map { component -> CalendarComponent in
            var c = component
            if c.stop > c.start && c.repeatEvery > 0 {
                c.stop -= (c.stop - c.start) % c.repeatEvery
            }
            if (c.stop > c.start && c.repeatEvery > 0 && c.start + c.repeatEvery > c.stop) || c.start == c.stop {
                c.repeatEvery = 0
                c.stop = -1
            }
            return c
        }
        return Array(Set(adjusted)).sorted()
    }

    /// Whether this element is acceptable in a field whose values run `from...to`
    /// (systemd's `chain_valid`); `endOfMonth` counts days back from the month's end.
    func isValid(from: Int, to: Int, endOfMonth: Bool) -> Bool {
        let upper = endOfMonth ? to - 3 : to
        guard start >= from, start <= upper, repeatEvery <= upper - from else { return false }
        if stop >= 0 {
            return stop >= from && stop <= upper && start + repeatEvery <= stop
        }
        return endOfMonth ? start - repeatEvery >= from : start + repeatEvery <= upper
    }

    /// The earliest value `>= value` that one of the chain's elements produces, or nil
    /// (systemd's `find_matching_component`). `endOfMonth` maps "n-th last day" bounds to
    /// days of the current month (-1 when the month is too short), for `~` specs.
    static func earliestMatch(in chain: [CalendarComponent], atLeast value: Int,
                              endOfMonth: ((Int) -> Int)? = nil) -> Int? {
        var best: Int?
        for component in chain {
            var start = component.start
            var stop = component.stop
            if let endOfMonth {
                start = endOfMonth(component.start)
                stop = endOfMonth(component.stop)
                if stop > 0 { swap(&start, &stop) }
            }
            if start >= value {
                if best.map({ start < $0 }) ?? true { best = start }
            } else if component.repeatEvery > 0 {
                let steps = (value - start + component.repeatEvery - 1) / component.repeatEvery
                let candidate = start + component.repeatEvery * steps
                if (best.map { candidate < $0 } ?? true) && (stop < 0 || candidate <= stop) {
                    best = candidate
                }
            }
        }
        return best
    }

    /// systemd's textual form of a chain (`format_chain`); `width` pads with zeros and
    /// `divisor` is 1_000_000 for the seconds field (microseconds), else 1.
    static func format(_ chain: [CalendarComponent]?, width: Int, divisor: Int = 1) -> String {
        guard let chain, !chain.isEmpty else { return "*" }
        if divisor > 1, chain.contains(where: { $0.start == 0 && $0.stop < 0 && $0.repeatEvery == divisor }) {
            return "*"
        }
        return chain.map { c -> String in
            var text = pad(c.start / divisor, width)
            if c.start % divisor > 0 { text += "." + pad(c.start % divisor, 6) }
            if c.stop > 0 { text += ".." + pad(c.stop / divisor, width) }
            if c.stop > 0 && c.stop % divisor > 0 { text += "." + pad(c.stop % divisor, 6) }
            if c.repeatEvery > 0 && !(c.stop > 0 && c.repeatEvery == divisor) { text += "/\(c.repeatEvery / divisor)" }
            if c.repeatEvery % divisor > 0 { text += "." + pad(c.repeatEvery % divisor, 6) }
            return text
        }.joined(separator: ",")
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
