import RefreshdCore

/// When a job's first request may begin, as written in its `earliest:` setting.
///
/// `+DURATION` is relative to the moment the configuration is loaded (so a restart pushes it
/// back), an ISO 8601 date with an offset is a fixed instant. The loader keeps the spec rather
/// than an instant because it has no clock: the shell resolves it with `instant(loadedAt:)`.
public enum EarliestSpec: Sendable, Hashable, CustomStringConvertible {
    /// `+10s`: this long after the configuration is loaded.
    case relative(Duration)
    /// `2026-11-22T04:00:00+01:00`: this instant.
    case absolute(Instant)

    /// Canonical text: `+10s`, or the instant in UTC with milliseconds (`2026-11-22T03:00:00.000Z`).
    public var text: String {
        switch self {
        case .relative(let duration): "+" + DurationParser.format(duration)
        case .absolute(let instant): ISO8601.format(instant)
        }
    }

    public var description: String { text }

    /// The instant the first request may begin, given when the configuration was loaded.
    public func instant(loadedAt: Instant) -> Instant {
        switch self {
        case .relative(let duration): loadedAt + duration
        case .absolute(let instant): instant
        }
    }

    /// Parses `+DURATION` or an ISO 8601 date-time with `Z` or `±HH:MM`, or returns what is wrong.
    static func parse(_ text: String) -> Result<EarliestSpec, Problem> {
        let expected = "expected +DURATION (like +10s) or an ISO 8601 date with offset (like 2026-11-22T04:00:00Z)"
        if text.hasPrefix("+") {
            switch DurationParser.parse(String(text.dropFirst())) {
            case .success(let duration): return .success(.relative(duration))
            case .failure(let error):
                let detail = error.detail.map { " (\($0))" } ?? ""
                return .failure("\(expected), found \"\(text)\"\(detail)")
            }
        }
        switch ISODateParser.parse(text) {
        case .success(let instant): return .success(.absolute(instant))
        case .failure(let detail): return .failure("\(expected), found \"\(text)\" (\(detail))")
        }
    }
}

/// Reads `YYYY-MM-DDTHH:MM:SS[.fff]` followed by `Z` or `±HH:MM`, without Foundation's locale machinery.
enum ISODateParser {
    static func parse(_ text: String) -> Result<Instant, Problem> {
        let c = Array(text.utf8)
        func digits(_ start: Int, _ count: Int) -> Int64? {
            guard start + count <= c.count else { return nil }
            var value: Int64 = 0
            for byte in c[start..<start + count] {
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int64(byte - 48)
            }
            return value
        }
        func at(_ i: Int, _ char: Character) -> Bool { i < c.count && c[i] == char.asciiValue! }
        guard let year = digits(0, 4), at(4, "-"), let month = digits(5, 2), at(7, "-"),
              let day = digits(8, 2) else {
            return .failure("the date must be YYYY-MM-DD")
        }
        guard at(10, "T") || at(10, "t") || at(10, " ") else {
            return .failure(c.count == 10 ? "a time and an offset are required" : "expected T between date and time")
        }
        guard let hour = digits(11, 2), at(13, ":"), let minute = digits(14, 2), at(16, ":"),
              let second = digits(17, 2) else {
            return .failure("the time must be HH:MM:SS")
        }
        var i = 19
        var millis: Int64 = 0
        if at(i, ".") {
            i += 1
            var scale: Int64 = 100
            let start = i
            while i < c.count, c[i] >= 48, c[i] <= 57 {
                millis += Int64(c[i] - 48) * scale
                scale /= 10
                i += 1
            }
            if i == start { return .failure("expected digits after the decimal point") }
        }
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
              hour <= 23, minute <= 59, second <= 59 else {
            return .failure("there is no such date or time")
        }
        var offsetMinutes: Int64 = 0
        if at(i, "Z") || at(i, "z") {
            i += 1
        } else if at(i, "+") || at(i, "-") {
            guard let oh = digits(i + 1, 2), at(i + 3, ":"), let om = digits(i + 4, 2), oh <= 23, om <= 59 else {
                return .failure("the offset must be Z or ±HH:MM")
            }
            offsetMinutes = (oh * 60 + om) * (at(i, "-") ? -1 : 1)
            i += 6
        } else {
            return .failure(i == c.count ? "the offset is missing: add Z for UTC or ±HH:MM" : "the offset must be Z or ±HH:MM")
        }
        guard i == c.count else { return .failure("unexpected text after the offset") }
        let days = ISO8601.days(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetMinutes * 60
        return .success(Instant(milliseconds: seconds * 1000 + millis))
    }

    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
