/// One parsed field of a cron expression: its allowed values as a systemd chain (or weekday
/// bits) plus what the day-of-month / day-of-week OR rule needs to know about it.
struct CronField {
    enum Kind: CaseIterable {
        case minute, hour, dayOfMonth, month, dayOfWeek

        var range: ClosedRange<Int> {
            switch self {
            case .minute: 0...59
            case .hour: 0...23
            case .dayOfMonth: 1...31
            case .month: 1...12
            case .dayOfWeek: 0...7
            }
        }

        var noun: String {
            switch self {
            case .minute: "a minute 0-59"
            case .hour: "an hour 0-23"
            case .dayOfMonth: "a day of month 1-31"
            case .month: "a month 1-12 or jan-dec"
            case .dayOfWeek: "a day of week 0-7 or sun-sat"
            }
        }

        var names: [String] {
            switch self {
            case .month: CronParser.monthNames
            case .dayOfWeek: CronParser.dayNames
            default: []
            }
        }
    }

    let text: String
    /// nil when the field is `*` (every value).
    let chain: [CalendarComponent]?
    /// The set of values the field allows.
    let values: Set<Int>
    let kind: Kind

    var isStar: Bool { text == "*" || text == "?" }
    var coversAll: Bool {
        kind == .dayOfWeek ? Set(values.map { $0 % 7 }).count == 7 : values.count == kind.range.count
    }

    /// systemd weekday bits (Monday = bit 0) for a day-of-week field; -1 = every day.
    var weekdayBits: Int {
        if isStar { return -1 }
        return values.reduce(0) { bits, day in bits | 1 << ((day + 6) % 7) }
    }

    static func parse(_ text: String, kind: Kind, at offset: Int, in s: ExpressionScanner) throws(CalendarParseError) -> CronField {
        if text == "*" || text == "?" {
            return CronField(text: text, chain: nil, values: Set(kind.range), kind: kind)
        }
        var chain: [CalendarComponent] = []
        var values = Set<Int>()
        var position = offset
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            var component = try CronItem.parse(String(item), kind: kind, at: position, in: s)
            // A step that cannot repeat within the field's range is just its start value.
            if component.stop < 0, component.repeatEvery > 0, component.start + component.repeatEvery > kind.range.upperBound {
                component.repeatEvery = 0
            }
            let last = component.stop >= 0 ? component.stop : (component.repeatEvery > 0 ? kind.range.upperBound : component.start)
            values.formUnion(stride(from: component.start, through: last, by: max(component.repeatEvery, 1)))
            chain.append(component)
            position += item.unicodeScalars.count + 1
        }
        return CronField(text: text, chain: kind == .dayOfWeek ? nil : chain, values: values, kind: kind)
    }
}
