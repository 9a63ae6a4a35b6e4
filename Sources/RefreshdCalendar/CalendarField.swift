/// A field of a calendar expression (year ... second) with its allowed values, used to parse
/// and validate chains like `01,15..20/2` and to word error messages.
struct CalendarField: Sendable {
    let lower: Int
    let upper: Int
    let noun: String
    /// Values are seconds with an optional fraction, stored in microseconds.
    var isSeconds = false

    static let year = CalendarField(lower: CalendarSpec.minYear, upper: CalendarSpec.maxYear, noun: "a year")
    static let month = CalendarField(lower: 1, upper: 12, noun: "a month")
    static let day = CalendarField(lower: 1, upper: 31, noun: "a day")
    static let hour = CalendarField(lower: 0, upper: 23, noun: "an hour")
    static let minute = CalendarField(lower: 0, upper: 59, noun: "a minute")
    static let second = CalendarField(lower: 0, upper: 59, noun: "a second", isSeconds: true)
    /// The first part of a date or time, before it is known which field it is.
    static let leading = CalendarField(lower: 0, upper: -1, noun: "a date or time")

    /// What a value of this field looks like, for error messages.
    var valueDescription: String { upper < lower ? noun : "\(noun) \(lower)-\(upper)" }

    /// One parsed element with the scalar ranges of its parts, for error columns.
    struct Element {
        var component: CalendarComponent
        var startRange: Range<Int>
        var stopRange: Range<Int>?
        var repeatRange: Range<Int>?
    }

    var scale: Int { isSeconds ? CalendarSpec.microsecondsPerSecond : 1 }

    /// Parses `*` (nil, or "every second" for seconds) or a comma-separated list of elements.
    func parseChain(_ s: inout ExpressionScanner) throws(CalendarParseError) -> [Element]? {
        if s.current == "*" {
            let star = s.index
            s.index += 1
            return isSeconds ? [Element(component: CalendarComponent(start: 0, repeatEvery: scale),
                                        startRange: star..<star + 1)] : nil
        }
        var elements: [Element] = []
        while true {
            let startRange = s.index
            var element = Element(component: CalendarComponent(start: try number(&s)), startRange: startRange..<s.index)
            if s.current == ".", s.peek(1) == "." {
                s.index += 2
                let stopStart = s.index
                element.component.stop = try number(&s)
                element.component.repeatEvery = scale
                element.stopRange = stopStart..<s.index
            }
            if s.current == "/" {
                s.index += 1
                let repeatStart = s.index
                element.component.repeatEvery = try number(&s)
                element.repeatRange = repeatStart..<s.index
                if element.component.repeatEvery == 0 {
                    throw s.error("a repetition greater than 0", at: repeatStart, found: s.text(repeatStart..<s.index))
                }
            }
            // Without an explicit repetition a seconds range steps by whole seconds, so systemd
            // refuses one shorter than a second (`05..05`, `01.5..02`).
            if isSeconds, element.repeatRange == nil, let stopRange = element.stopRange,
               element.component.start + scale > element.component.stop {
                throw s.error("a seconds range at least one second long", at: startRange,
                              found: s.text(startRange..<stopRange.upperBound))
            }
            if let c = s.current, !" ,-~:".unicodeScalars.contains(c) {
                throw s.error("\(valueDescription), a range \"..\", a repetition \"/\" or a separator")
            }
            elements.append(element)
            guard s.current == "," else { return elements }
            s.index += 1
        }
    }

    /// A decimal number; for seconds an optional fraction (at most 6 digits are significant).
    private func number(_ s: inout ExpressionScanner) throws(CalendarParseError) -> Int {
        let (whole, range) = s.digits()
        guard let whole, whole <= Int(Int32.max) / scale else {
            throw s.error(range.isEmpty ? valueDescription : "a smaller number", at: range.lowerBound)
        }
        var value = whole * scale
        if isSeconds, s.current == ".", s.peek(1) != "." {
            s.index += 1
            let (_, fraction) = s.digits()
            let digits = Array(s.text(fraction).prefix(6))
            let padded = String(digits) + String(repeating: "0", count: 6 - digits.count)
            value += Int(padded) ?? 0
        }
        return value
    }

    /// systemd's per-element validity rules (`chain_valid`), after the element's own
    /// normalization; `endOfMonth` days count back from the end of the month (1...28).
    func validate(_ elements: [Element], endOfMonth: Bool, in s: ExpressionScanner) throws(CalendarParseError) {
        let upper = (endOfMonth ? self.upper - 3 : self.upper) * scale + (isSeconds ? scale - 1 : 0)
        let from = lower * scale
        let range = endOfMonth ? "\(noun) \(lower)-\(self.upper - 3) counted back from the month's end"
            : "\(noun) \(lower)-\(self.upper)"
        for element in elements {
            let c = CalendarComponent.normalizeChain([element.component])[0]
            let repeatRange = element.repeatRange ?? element.startRange
            func fail(_ what: String, _ r: Range<Int>) -> CalendarParseError {
                s.error(what, at: r.lowerBound, found: s.text(r))
            }
            guard c.start >= from, c.start <= upper else { throw fail(range, element.startRange) }
            guard c.repeatEvery <= upper - from else {
                throw fail("a repetition of at most \((upper - from) / scale)", repeatRange)
            }
            if c.stop >= 0, let stopRange = element.stopRange {
                guard c.stop >= from, c.stop <= upper else { throw fail(range, stopRange) }
                guard c.start + c.repeatEvery <= c.stop else {
                    throw fail("a range end not before its start", element.startRange.lowerBound..<stopRange.upperBound)
                }
            } else if endOfMonth ? c.start - c.repeatEvery < from : c.start + c.repeatEvery > upper {
                throw fail("a repetition that fits within \(range)", repeatRange)
            }
        }
    }
}
