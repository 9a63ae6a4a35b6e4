import Foundation
import RefreshdCalendar
import RefreshdCore

/// When a job's first request may begin, as written in its `earliest:` setting.
///
/// `+DURATION` is relative to the moment the configuration is loaded (so a restart pushes it
/// back), an ISO 8601 date with an offset is a fixed instant, and a calendar expression is its
/// next elapse after the load. The loader keeps the spec rather than an instant because it has
/// no clock: the shell resolves it with `instant(loadedAt:)`.
package enum EarliestSpec: Sendable, Hashable, CustomStringConvertible {
    /// `+10s`: this long after the configuration is loaded.
    case relative(Duration)
    /// `2026-11-22T04:00:00+01:00`: this instant.
    case absolute(Instant)
    /// `Mon..Fri 06:00`: the schedule's next slot after the configuration is loaded.
    case calendar(Schedule)

    /// Canonical text: `+10s`, the instant in UTC with milliseconds (`2026-11-22T03:00:00.000Z`),
    /// or the expression with its zone (`Mon..Fri 06:00 [Europe/Paris]`).
    package var text: String {
        switch self {
        case .relative(let duration): "+" + DurationParser.format(duration)
        case .absolute(let instant): ISO8601.format(instant)
        case .calendar(let schedule): schedule.text
        }
    }

    package var description: String { text }

    /// The instant the first request may begin, given when the configuration was loaded.
    ///
    /// A calendar expression gives its first elapse strictly after `loadedAt`. The loader refuses
    /// expressions that never elapse after the load, so `loadedAt` itself comes back only if the
    /// last elapse fell between validating and seeding: then the job is due at once, as a missed
    /// slot would be.
    package func instant(loadedAt: Instant) -> Instant {
        switch self {
        case .relative(let duration): loadedAt + duration
        case .absolute(let instant): instant
        case .calendar(let schedule): schedule.next(after: loadedAt) ?? loadedAt
        }
    }

    /// The calendar schedule, if the spec is one.
    package var schedule: Schedule? {
        if case .calendar(let schedule) = self { schedule } else { nil }
    }

    static let expectation = "+DURATION (like +10s), an ISO 8601 date with offset (like 2026-11-22T04:00:00Z) "
        + "or a calendar expression (like Mon..Fri 06:00)"

    /// Parses `earliest:`'s text, or says what is wrong with it (with the 1-based column within
    /// `text` for a calendar expression's error).
    ///
    /// Disambiguation: a leading `+` is a duration; text starting `YYYY-MM-DDT` is ISO 8601
    /// (which requires an offset); other text that parses as ISO 8601 with an offset (the space
    /// form `2026-11-22 04:00:00+01:00`) is an instant; anything else is a calendar expression,
    /// evaluated in `zone` unless it names its own.
    static func parse(_ text: String, zone: TimeZone) -> Result<EarliestSpec, Problem> {
        let expected = "expected +DURATION (like +10s) or an ISO 8601 date with offset (like 2026-11-22T04:00:00Z)"
        if text.hasPrefix("+") {
            switch DurationParser.parse(String(text.dropFirst())) {
            case .success(let duration): return .success(.relative(duration))
            case .failure(let error):
                let detail = error.detail.map { " (\($0))" } ?? ""
                return .failure("\(expected), found \(EchoText.quoted(text))\(detail)")
            }
        }
        let iso = ISODateParser.parse(text)
        switch iso {
        case .success(let instant): return .success(.absolute(instant))
        case .failure(let detail) where looksLikeISODateTime(text):
            return .failure("\(expected), found \(EchoText.quoted(text)) (\(detail))")
        case .failure:
            break
        }
        do {
            return .success(.calendar(try CalendarScheduleBuilder.schedule(text, zone: zone)))
        } catch {
            return .failure(calendarProblem(error, in: text))
        }
    }

    /// `expected an hour 0-23, found "25"` at the error's column. An error at the very first
    /// column means the text is not recognisable as anything, so the message lists all three forms.
    static func calendarProblem(_ error: CalendarParseError, in text: String) -> Problem {
        let found = error.found.map { EchoText.quoted($0) } ?? "end of expression"
        if error.column == 1 {
            return Problem("expected \(expectation), found \(EchoText.quoted(text)) (as a calendar expression: expected \(error.expected))"
                + error.hintSuffix, column: 1)
        }
        return Problem("expected \(error.expected), found \(found)\(error.hintSuffix)", column: error.column)
    }

    /// `YYYY-MM-DDT...`: written as ISO 8601, so held to its rules (an offset is required).
    static func looksLikeISODateTime(_ text: String) -> Bool {
        let c = Array(text.utf8)
        guard c.count > 10 else { return false }
        let isDigit = { (i: Int) in c[i] >= 48 && c[i] <= 57 }
        return (0..<4).allSatisfy(isDigit) && c[4] == UInt8(ascii: "-") && isDigit(5) && isDigit(6)
            && c[7] == UInt8(ascii: "-") && isDigit(8) && isDigit(9)
            && (c[10] == UInt8(ascii: "T") || c[10] == UInt8(ascii: "t"))
    }
}

/// Reads `YYYY-MM-DDTHH:MM:SS[.fff]` followed by `Z` or `±HH:MM`, without Foundation's locale machinery.
enum ISODateParser {
    static func parse(_ text: String) -> Result<Instant, Problem> {
        let c = Array(text.utf8)
        func digits(_ start: Int, _ count: Int) -> Int64? { ISO8601.digits(c, start, count) }
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
        guard (1970...9999).contains(year) else {
            return .failure("the year must be from 1970 to 9999")
        }
        guard (1...12).contains(month), day >= 1, day <= ISO8601.daysInMonth(year: year, month: month),
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
}
