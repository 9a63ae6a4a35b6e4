/// Finds the first instant a `CalendarSpec` matches after a base instant.
///
/// This follows systemd's `find_next` (src/shared/calendarspec.c) step for step so results
/// agree with `systemd-analyze calendar`, DST quirks included: fields are matched from year
/// down to seconds on a wall-clock reading; whenever a field had to move, the reading is
/// re-normalized through `ZoneClock` and a reading that normalized to something else (a day
/// past the month's end, an hour inside a DST gap) restarts the walk from the normalized value.
/// The walk is bounded by the year 2199 and by a fixed number of steps, like systemd's.
///
/// systemd (via `mktime`) re-reads a normalized reading with the DST flag it had *before* a
/// smaller unit was reset. Near DST changes that can skip matches (a midnight read as winter
/// time) or loop until the step limit (systemd then reports "Infinite loop in calendar
/// calculation"). `honoursDSTFlag = false` drops that flag, giving the plain wall-clock answer.
struct NextElapseSearch {
    let spec: CalendarSpec
    var clock: ZoneClock
    var honoursDSTFlag = true
    /// Set when the last search hit the step limit rather than running out of years.
    private(set) var gaveUp = false
    static let maxIterations = 1000

    private enum Bounds { case good, normalized, invalid }

    /// The first matching instant strictly after `base`, both in microseconds since the epoch.
    mutating func next(afterMicroseconds base: Int) -> Int? {
        let start = base + 1
        let usecPerSec = CalendarSpec.microsecondsPerSecond
        let startSecond = CivilTime.floorDiv(start, usecPerSec)
        var c = clock.civil(at: startSecond)
        var usec = start - startSecond * usecPerSec
        for _ in 0..<Self.maxIterations {
            c = clock.normalize(c)
            c.isDST = nil

            var value = c.year
            guard let year = match(spec.year, &value, c) else { return nil }
            c.year = value
            if year { c = CivilTime(year: c.year, month: 1, day: 1); usec = 0 }
            guard check(&c) == .good else { return nil }

            value = c.month
            let month = match(spec.month, &value, c)
            c.month = value
            if month == true { c = CivilTime(year: c.year, month: c.month, day: 1); usec = 0 }
            switch month == nil ? .invalid : check(&c) {
            case .invalid: c = CivilTime(year: c.year + 1, month: 1, day: 1); usec = 0; continue
            case .normalized: continue
            case .good: break
            }

            value = c.day
            let day = match(spec.day, &value, c, endOfMonth: spec.endOfMonth)
            c.day = value
            if day == true { c.hour = 0; c.minute = 0; c.second = 0; usec = 0 }
            switch day == nil ? .invalid : check(&c) {
            case .invalid: c = CivilTime(year: c.year, month: c.month + 1, day: 1); usec = 0; continue
            case .normalized: continue
            case .good: break
            }

            if spec.weekdays >= 0 && spec.weekdays & (1 << clock.normalize(c).weekday) == 0 {
                c = CivilTime(year: c.year, month: c.month, day: c.day + 1); usec = 0
                continue
            }

            value = c.hour
            let hour = match(spec.hour, &value, c)
            c.hour = value
            if hour == true { c.minute = 0; c.second = 0; usec = 0 }
            switch hour == nil ? .invalid : check(&c) {
            case .invalid: c = CivilTime(year: c.year, month: c.month, day: c.day + 1); usec = 0; continue
            case .normalized: continue
            case .good: break
            }

            value = c.minute
            let minute = match(spec.minute, &value, c)
            c.minute = value
            if minute == true { c.second = 0; usec = 0 }
            switch minute == nil ? .invalid : check(&c) {
            case .invalid:
                c = CivilTime(year: c.year, month: c.month, day: c.day, hour: c.hour + 1); usec = 0; continue
            case .normalized: continue
            case .good: break
            }

            value = c.second * usecPerSec + usec
            let second = match(spec.second, &value, c)
            usec = CivilTime.positiveModulo(value, usecPerSec)
            c.second = CivilTime.floorDiv(value, usecPerSec)
            switch second == nil ? .invalid : check(&c) {
            case .invalid:
                c = CivilTime(year: c.year, month: c.month, day: c.day, hour: c.hour, minute: c.minute + 1)
                usec = 0
                continue
            case .normalized: continue
            case .good: break
            }
            return clock.instant(of: c) * usecPerSec + usec
        }
        gaveUp = true
        return nil
    }

    /// Moves `value` to the chain's earliest match at or after it. Returns whether it changed,
    /// or nil when nothing in the chain is left (the caller then carries into the larger unit).
    private mutating func match(_ chain: [CalendarComponent]?, _ value: inout Int, _ c: CivilTime,
                                endOfMonth: Bool = false) -> Bool? {
        guard let chain else { return false }
        var resolve: ((Int) -> Int)?
        if endOfMonth {
            // systemd's find_end_of_month normalizes "day 1-n of next month" through mktime,
            // which also moves mktime's remembered offset; keep that side effect.
            var clock = self.clock
            var days: [Int: Int] = [:]
            for component in chain {
                for n in [component.start, component.stop] {
                    var t = c
                    t.month += 1
                    t.day = 1 - n
                    let normalized = clock.normalize(t)
                    days[n] = normalized.month == c.month && normalized.year == c.year ? normalized.day : -1
                }
            }
            self.clock = clock
            resolve = { days[$0] ?? -1 }
        }
        guard let found = CalendarComponent.earliestMatch(in: chain, atLeast: value, endOfMonth: resolve) else {
            return nil
        }
        defer { value = found }
        return found != value
    }

    /// systemd's `tm_within_bounds`: normalizes `c`; if that changed it, keeps the normalized
    /// reading with the next smaller unit reset, and refuses readings that moved backwards.
    private mutating func check(_ c: inout CivilTime) -> Bounds {
        if c.year > CalendarSpec.maxYear { return .invalid }
        var t = clock.normalize(c)
        let pairs = [(t.year, c.year), (t.month, c.month), (t.day, c.day),
                     (t.hour, c.hour), (t.minute, c.minute), (t.second, c.second)]
        guard let index = pairs.firstIndex(where: { $0.0 != $0.1 }) else { return .good }
        if pairs[index].0 < pairs[index].1 { return .invalid }
        switch index {
        case 0: t.month = 1
        case 1: t.day = 1
        case 2: t.hour = 0
        case 3: t.minute = 0
        case 4: t.second = 0
        default: break
        }
        if !honoursDSTFlag { t.isDST = nil }
        c = t
        return .normalized
    }
}
