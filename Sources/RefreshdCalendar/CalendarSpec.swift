/// One parsed systemd calendar event: per-field chains of allowed values plus a weekday set.
///
/// A `nil` chain means "any value" (`*`). Cron expressions compile into one or two of these
/// (two when cron's day-of-month OR day-of-week rule applies), so a single search algorithm
/// serves both syntaxes.
struct CalendarSpec: Sendable, Equatable {
    /// Bit n set = weekday n allowed (0 = Monday ... 6 = Sunday); -1 = every day.
    var weekdays: Int = -1
    var year: [CalendarComponent]?
    var month: [CalendarComponent]?
    var day: [CalendarComponent]?
    var hour: [CalendarComponent]?
    var minute: [CalendarComponent]?
    /// Seconds in microseconds.
    var second: [CalendarComponent]?
    /// `~` in the date: `day` counts back from the last day of the month (1 = last day).
    var endOfMonth = false
    /// Evaluate in UTC regardless of the zone passed in (`... UTC` suffix).
    var utc = false
    /// IANA zone name from the expression's suffix, overriding the zone passed in.
    var zoneName: String?

    static let allWeekdays = 0b111_1111
    static let minYear = 1970
    static let maxYear = 2199
    static let microsecondsPerSecond = 1_000_000

    /// systemd's `calendar_spec_normalize`: canonical weekday set, sorted chains, 4-digit years.
    mutating func normalize() {
        if zoneName == "UTC" {
            utc = true
            zoneName = nil
        }
        if weekdays <= 0 || weekdays >= Self.allWeekdays { weekdays = -1 }
        if endOfMonth && day == nil { endOfMonth = false }
        year = year.map { chain in
            chain.map { c in
                var c = c
                c.start = Self.expandYear(c.start)
                c.stop = Self.expandYear(c.stop)
                return c
            }
        }
        year = year.map(CalendarComponent.normalizeChain)
        month = month.map(CalendarComponent.normalizeChain)
        day = day.map(CalendarComponent.normalizeChain)
        hour = hour.map(CalendarComponent.normalizeChain)
        minute = minute.map(CalendarComponent.normalizeChain)
        second = second.map(CalendarComponent.normalizeChain)
    }

    /// Two-digit years: 0-69 → 2000-2069, 70-99 → 1970-1999.
    static func expandYear(_ value: Int) -> Int {
        switch value {
        case 0..<70: return value + 2000
        case 70..<100: return value + 1900
        default: return value
        }
    }

    /// The form `systemd-analyze calendar` prints as "Normalized form:".
    var normalizedString: String {
        var text = ""
        if weekdays > 0 && weekdays < Self.allWeekdays {
            text += Self.formatWeekdays(weekdays) + " "
        }
        text += CalendarComponent.format(year, width: 4) + "-"
        text += CalendarComponent.format(month, width: 2) + (endOfMonth ? "~" : "-")
        text += CalendarComponent.format(day, width: 2) + " "
        text += CalendarComponent.format(hour, width: 2) + ":"
        text += CalendarComponent.format(minute, width: 2) + ":"
        text += CalendarComponent.format(second, width: 2, divisor: Self.microsecondsPerSecond)
        if utc {
            text += " UTC"
        } else if let zoneName {
            text += " " + zoneName
        }
        return text
    }

    static let weekdayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]

    /// Runs of three or more days print as `A..B`, pairs as `A,B` (systemd's `format_weekdays`).
    static func formatWeekdays(_ bits: Int) -> String {
        var parts: [String] = []
        var day = 0
        while day < 7 {
            guard bits & (1 << day) != 0 else {
                day += 1
                continue
            }
            var end = day
            while end + 1 < 7 && bits & (1 << (end + 1)) != 0 { end += 1 }
            switch end - day {
            case 0: parts.append(weekdayNames[day])
            case 1: parts.append(weekdayNames[day] + "," + weekdayNames[end])
            default: parts.append(weekdayNames[day] + ".." + weekdayNames[end])
            }
            day = end + 1
        }
        return parts.joined(separator: ",")
    }
}
