/// One comma-separated item of a cron field: `*`, `*/n`, `a`, `a-b`, `a-b/n` or `a/n`
/// (the last means `a` up to the field's maximum, every `n`, as croniter reads it).
enum CronItem {
    /// Parses an item starting at scalar index `at` of the whole expression into a systemd
    /// chain element (`stop == -1` when unbounded).
    static func parse(_ text: String, kind: CronField.Kind, at: Int,
                      in s: ExpressionScanner) throws(CalendarParseError) -> CalendarComponent {
        let scalars = Array(text.unicodeScalars)
        var index = 0
        var component: CalendarComponent
        func fail(_ expected: String, _ from: Int, _ to: Int? = nil) -> CalendarParseError {
            let end = to ?? (from < scalars.count ? scalars.count : from)
            return s.error(expected, at: at + from, found: from < scalars.count ? s.text(at + from..<at + end) : nil)
        }
        if scalars.first == "*" {
            index = 1
            component = CalendarComponent(start: kind == .dayOfWeek ? 0 : kind.range.lowerBound)
            if index == scalars.count { component.stop = kind.range.upperBound; component.repeatEvery = 1 }
        } else {
            let startAt = index
            let start = try value(scalars, &index, kind: kind, fail)
            component = CalendarComponent(start: start)
            if index < scalars.count && scalars[index] == "-" {
                index += 1
                let stop = try value(scalars, &index, kind: kind, fail)
                guard stop >= start else { throw fail("a range whose end is not before its start", startAt, index) }
                component.stop = stop
                component.repeatEvery = 1
            }
        }
        if index < scalars.count && scalars[index] == "/" {
            index += 1
            let stepAt = index
            let digits = scalars[index...].prefix { ("0"..."9").contains($0) }
            index += digits.count
            guard let step = Int(String(String.UnicodeScalarView(digits))), step > 0,
                  step <= kind.range.count else {
                throw fail("a step 1-\(kind.range.count)", stepAt, index)
            }
            component.repeatEvery = step
            if scalars.first == "*" { component.stop = -1 }
        }
        guard index == scalars.count else {
            throw fail("\(kind.noun), \"*\", a range \"a-b\", a step \"/n\" or \",\"", index)
        }
        return component
    }

    /// A number or (for months and days of the week) a three-letter English name.
    private static func value(_ scalars: [Unicode.Scalar], _ index: inout Int, kind: CronField.Kind,
                              _ fail: (String, Int, Int?) -> CalendarParseError) throws(CalendarParseError) -> Int {
        let start = index
        let digits = scalars[index...].prefix { ("0"..."9").contains($0) }
        if !digits.isEmpty {
            index += digits.count
            guard let number = Int(String(String.UnicodeScalarView(digits))), kind.range.contains(number) else {
                throw fail(kind.noun, start, index)
            }
            return number
        }
        let letters = scalars[index...].prefix { ("a"..."z").contains($0) || ("A"..."Z").contains($0) }
        index += letters.count
        let name = String(String.UnicodeScalarView(letters)).lowercased()
        guard let found = kind.names.firstIndex(of: name) else { throw fail(kind.noun, start, max(index, start + 1)) }
        return kind == .month ? found + 1 : found
    }
}
