/// The date (`[YEAR-]MONTH-DAY`, `~` for days counted from the month's end) and time
/// (`HOUR:MINUTE[:SECOND[.FRACTION]]`) parts of a systemd calendar event.
extension SystemdParser {
    /// Parses a date if one is present; when the text turns out to be a time, the scanner is
    /// left where it started.
    static func parseDate(_ s: inout ExpressionScanner, into spec: inout CalendarSpec) throws(CalendarParseError) {
        if s.atEnd { return }
        let start = s.index
        let first = try CalendarField.leading.parseChain(&s)
        if s.atEnd || s.current == ":" {
            s.index = start
            return
        }
        try separator(&s, into: &spec, "\"-\", \"~\" or \":\"")
        let second = try CalendarField.month.parseChain(&s)
        if s.atEnd || s.current == " " {
            // Two parts: MONTH-DAY.
            try assign(first, .month, to: \.month, in: &spec, s)
            try assign(second, .day, to: \.day, in: &spec, s)
            s.skipSpaces()
            return
        }
        if spec.endOfMonth { throw s.error("a space after the day") }
        try separator(&s, into: &spec, "\"-\" or \"~\"")
        let third = try CalendarField.day.parseChain(&s)
        if !(s.atEnd || s.current == " ") { throw s.error("a space after the date") }
        try assign(first.map(expandingYears), .year, to: \.year, in: &spec, s)
        try assign(second, .month, to: \.month, in: &spec, s)
        try assign(third, .day, to: \.day, in: &spec, s)
        s.skipSpaces()
    }

    private static func separator(_ s: inout ExpressionScanner, into spec: inout CalendarSpec,
                                  _ expected: String) throws(CalendarParseError) {
        switch s.current {
        case "~": spec.endOfMonth = true
        case "-": break
        default: throw s.error(expected)
        }
        s.index += 1
    }

    private static func expandingYears(_ elements: [CalendarField.Element]) -> [CalendarField.Element] {
        elements.map { element in
            var element = element
            element.component.start = CalendarSpec.expandYear(element.component.start)
            element.component.stop = CalendarSpec.expandYear(element.component.stop)
            return element
        }
    }

    private static func assign(_ elements: [CalendarField.Element]?, _ field: CalendarField,
                               to path: WritableKeyPath<CalendarSpec, [CalendarComponent]?>,
                               in spec: inout CalendarSpec, _ s: ExpressionScanner) throws(CalendarParseError) {
        guard let elements else { return }
        try field.validate(elements, endOfMonth: field.noun == CalendarField.day.noun && spec.endOfMonth, in: s)
        spec[keyPath: path] = elements.map(\.component)
    }

    /// Parses `HOUR:MINUTE[:SECOND]`, or nothing (midnight). Must reach the end of the text.
    static func parseTime(_ s: inout ExpressionScanner, into spec: inout CalendarSpec) throws(CalendarParseError) {
        let midnight = [CalendarComponent(start: 0)]
        if s.atEnd {
            spec.hour = midnight
            spec.minute = midnight
            spec.second = midnight
            return
        }
        let hour = try CalendarField.hour.parseChain(&s)
        guard s.current == ":" else { throw s.error("\":\" after the hour") }
        s.index += 1
        let minute = try CalendarField.minute.parseChain(&s)
        var second: [CalendarField.Element]?
        if s.atEnd {
            spec.second = midnight
        } else {
            guard s.current == ":" else { throw s.error("\":\" after the minute") }
            s.index += 1
            second = try CalendarField.second.parseChain(&s)
            if !s.atEnd { throw s.error("end of expression or a time zone") }
            spec.second = nil
        }
        try assign(hour, .hour, to: \.hour, in: &spec, s)
        try assign(minute, .minute, to: \.minute, in: &spec, s)
        try assign(second, .second, to: \.second, in: &spec, s)
    }
}
