import Foundation

/// Parses systemd calendar events (systemd.time(7), "CALENDAR EVENTS") into a `CalendarSpec`.
///
/// Grammar: `[WEEKDAYS] [[YEAR-]MONTH-DAY] [HOUR:MINUTE[:SECOND]] [ZONE]`, a shorthand such as
/// `daily`, or `@UNIXTIME`. Accepts what systemd 252 accepts, with the same defaults (missing
/// time = 00:00:00, missing seconds = 00) and validity rules, but reports the column of the
/// first offending character. Local zone abbreviations (`EST`, `CEST`) are only accepted if
/// they are zone names in their own right, since their meaning depends on the machine's zone.
enum SystemdParser {
    static let shorthands: [String: String] = [
        "minutely": "*-*-* *:*:00", "hourly": "*-*-* *:00:00", "daily": "*-*-* 00:00:00",
        "monthly": "*-*-01 00:00:00", "weekly": "Mon *-*-* 00:00:00",
        "yearly": "*-01-01 00:00:00", "annually": "*-01-01 00:00:00", "anually": "*-01-01 00:00:00",
        "quarterly": "*-01,04,07,10-01 00:00:00",
        "semiannually": "*-01,07-01 00:00:00", "semi-annually": "*-01,07-01 00:00:00",
        "biannually": "*-01,07-01 00:00:00", "bi-annually": "*-01,07-01 00:00:00",
    ]

    static func parse(_ text: String) throws(CalendarParseError) -> CalendarSpec {
        var s = ExpressionScanner(text)
        s.skipSpaces()
        while s.end > s.index && s.scalars[s.end - 1] == " " { s.end -= 1 }
        guard !s.atEnd else { throw s.error("a calendar expression") }
        var spec = CalendarSpec()
        try parseZoneSuffix(&s, into: &spec)
        let body = s.text(s.index..<s.end).lowercased()
        if let expansion = shorthands[body] {
            var expanded = try parse(expansion)
            expanded.utc = spec.utc
            expanded.zoneName = spec.zoneName
            return expanded
        }
        if s.current == "@" {
            try parseTimestamp(&s, into: &spec)
        } else {
            try parseWeekdays(&s, into: &spec)
            try parseDate(&s, into: &spec)
            try parseTime(&s, into: &spec)
        }
        if !s.atEnd { throw s.error("end of expression or a time zone") }
        spec.normalize()
        return spec
    }

    /// A trailing ` UTC` or IANA zone name; any last word starting with a letter must be one.
    private static func parseZoneSuffix(_ s: inout ExpressionScanner, into spec: inout CalendarSpec) throws(CalendarParseError) {
        guard let space = s.scalars[s.index..<s.end].lastIndex(of: " ") else { return }
        let word = s.text(space + 1..<s.end)
        guard let first = word.unicodeScalars.first, CharacterSet.letters.contains(first) else { return }
        if word.lowercased() == "utc" {
            spec.utc = true
        } else if TimeZone(identifier: word) != nil, word.allSatisfy({ $0.isASCII && !$0.isWhitespace }) {
            spec.zoneName = word
        } else {
            throw s.error("a time zone (UTC or an IANA name such as Europe/Paris)", at: space + 1, found: word,
                          hint: PlainWords.zoneHint(for: word))
        }
        s.end = space
        while s.end > s.index && s.scalars[s.end - 1] == " " { s.end -= 1 }
    }

    private static func parseTimestamp(_ s: inout ExpressionScanner, into spec: inout CalendarSpec) throws(CalendarParseError) {
        s.index += 1
        let (value, range) = s.digits()
        guard let value, value <= 253_402_300_799 else {
            throw s.error("seconds since the epoch", at: range.lowerBound)
        }
        let t = CivilTime(naiveSeconds: value)
        func fixed(_ v: Int) -> [CalendarComponent] { [CalendarComponent(start: v)] }
        spec.year = fixed(t.year)
        spec.month = fixed(t.month)
        spec.day = fixed(t.day)
        spec.hour = fixed(t.hour)
        spec.minute = fixed(t.minute)
        spec.second = fixed(t.second * CalendarSpec.microsecondsPerSecond)
        spec.utc = true
        spec.zoneName = nil
    }

    static let weekdayNames: [(name: String, day: Int)] = [
        ("monday", 0), ("mon", 0), ("tuesday", 1), ("tue", 1), ("wednesday", 2), ("wed", 2),
        ("thursday", 3), ("thu", 3), ("friday", 4), ("fri", 4), ("saturday", 5), ("sat", 5),
        ("sunday", 6), ("sun", 6),
    ]

    /// `Mon,Wed..Fri` (also `Mon-Fri`); absent weekdays leave the spec matching every day.
    private static func parseWeekdays(_ s: inout ExpressionScanner, into spec: inout CalendarSpec) throws(CalendarParseError) {
        var rangeStart: (day: Int, at: Int)?
        var first = true
        spec.weekdays = 0
        while true {
            let at = s.index
            guard let match = weekdayNames.first(where: { s.consume(caseInsensitive: $0.name) }) else {
                if first { return }
                throw s.error("a weekday name (Mon..Sun)")
            }
            if let c = s.current, !"-., ".unicodeScalars.contains(c) {
                throw s.error("a weekday name (Mon..Sun)", at: at)
            }
            spec.weekdays |= 1 << match.day
            if let open = rangeStart {
                guard open.day <= match.day else {
                    throw s.error("a weekday range in Monday-to-Sunday order", at: open.at,
                                  found: s.text(open.at..<s.index))
                }
                for day in open.day...match.day { spec.weekdays |= 1 << day }
            }
            if s.atEnd { return }
            if s.current == " " { s.skipSpaces(); return }
            if (s.current == "." || s.current == "-"), let open = rangeStart {
                throw s.error("\",\" after the weekday range", found: s.text(open.at..<s.index + 1))
            }
            if s.current == "." {
                guard s.peek(1) == "." else { throw s.error("\"..\" between weekdays") }
                s.index += 2
                rangeStart = (match.day, at)
            } else if s.current == "-" {
                s.index += 1
                rangeStart = (match.day, at)
            } else if s.current == "," {
                s.index += 1
                rangeStart = nil
            }
            if s.atEnd || s.current == " " {
                if rangeStart != nil { throw s.error("a weekday name to end the range") }
                s.skipSpaces()
                return
            }
            first = false
        }
    }
}
