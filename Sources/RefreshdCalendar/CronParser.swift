import Foundation

/// Parses classic 5-field cron expressions (`minute hour day-of-month month day-of-week`)
/// and the `@hourly`-style aliases into one or two `CalendarSpec`s.
///
/// Fields take `*`, values, names (`jan`, `mon`), ranges `a-b`, steps `*/n`, `a-b/n`, `a/n`
/// and comma lists; day-of-week 0 and 7 are Sunday. When both day fields are restricted a day
/// matches if either matches (the standard cron rule), which is the union of two systemd specs
/// (one per day field); "restricted" follows croniter: a field is unrestricted if it is `*`,
/// or covers every value while the other day field contains `*`.
enum CronParser {
    static let aliases: [String: String] = [
        "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
        "@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *",
    ]
    static let monthNames = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    static let dayNames = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]

    /// Whether `text` has the shape of a cron expression rather than a systemd calendar event:
    /// an `@` alias, or exactly five whitespace-separated fields with no `:`, `.` or `~`.
    static func looksLikeCron(_ text: String) -> Bool {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.hasPrefix("@"), trimmed.dropFirst().first?.isLetter == true { return true }
        let fields = trimmed.split(whereSeparator: { $0 == " " || $0 == "\t" })
        return fields.count == 5 && !fields.contains { $0.contains { ":.~".contains($0) } }
    }

    static func parse(_ text: String) throws(CalendarParseError) -> [CalendarSpec] {
        var s = ExpressionScanner(text)
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.hasPrefix("@") {
            guard let expansion = aliases[trimmed.lowercased()] else {
                while s.current == " " || s.current == "\t" { s.index += 1 }
                throw s.error("a cron alias (@hourly, @daily, @weekly, @monthly, @yearly)")
            }
            return try parse(expansion)
        }
        var fields: [CronField] = []
        for (kind, text, at) in splitFields(s.scalars) {
            fields.append(try CronField.parse(text, kind: kind, at: at, in: s))
        }
        let (minute, hour, dom, month, dow) = (fields[0], fields[1], fields[2], fields[3], fields[4])
        var spec = CalendarSpec()
        spec.minute = minute.chain
        spec.hour = hour.chain
        spec.month = month.chain
        spec.second = [CalendarComponent(start: 0)]
        let domRestricted = !dom.isStar && !(dom.coversAll && dow.text.contains("*"))
        let dowRestricted = !dow.isStar && !(dow.coversAll && dom.text.contains("*"))
        if domRestricted && dowRestricted {
            var byDay = spec
            byDay.day = dom.chain
            var byWeekday = spec
            byWeekday.weekdays = dow.weekdayBits
            byDay.normalize()
            byWeekday.normalize()
            return [byDay, byWeekday]
        }
        spec.day = dom.chain
        spec.weekdays = dow.weekdayBits
        spec.normalize()
        return [spec]
    }

    /// The five fields with their text and starting scalar index.
    private static func splitFields(_ scalars: [Unicode.Scalar]) -> [(CronField.Kind, String, Int)] {
        var result: [(CronField.Kind, String, Int)] = []
        var index = 0
        while index < scalars.count {
            if scalars[index] == " " || scalars[index] == "\t" {
                index += 1
                continue
            }
            let start = index
            while index < scalars.count && scalars[index] != " " && scalars[index] != "\t" { index += 1 }
            var text = String.UnicodeScalarView()
            text.append(contentsOf: scalars[start..<index])
            result.append((CronField.Kind.allCases[result.count], String(text), start))
        }
        return result
    }
}
