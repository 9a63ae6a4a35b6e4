/// Parses and formats the compact durations used in job files: `500ms`, `30s`, `10m`, `1h30m`, `1d12h`.
///
/// A duration is one or more `NUMBER UNIT` pairs with units `d`, `h`, `m`, `s`, `ms` (a day is
/// always 24 hours), each unit at most once and in that descending order, with non-negative
/// integer numbers and no spaces. The grammar is strict so that a typo such as `30` (no unit) or
/// `1m1h` (wrong order) is reported instead of being guessed at.
package enum DurationParser {
    /// The longest duration a job file may give: 100 years (36500d). Anything longer is refused
    /// in every duration setting, so the scheduler's instant arithmetic (milliseconds in an
    /// `Int64`, about 292 million years) keeps a vast margin even when durations are added up.
    package static let maximum: Duration = .milliseconds(maximumMilliseconds)

    /// `maximum` in milliseconds.
    static let maximumMilliseconds: Int64 = 36_500 * 86_400_000

    /// How `maximum` is written in messages.
    package static let maximumText = "36500d (100 years)"


    /// The units, largest first, with their length in milliseconds.
    static let units: [(name: String, milliseconds: Int64)] = [
        ("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000), ("ms", 1),
    ]

    /// Parses `text` (e.g. `1h30m`) into a duration of at most `maximum`, or says what is wrong with it.
    package static func parse(_ text: String) -> Result<Duration, DurationParseError> {
        func fail(_ detail: String?) -> Result<Duration, DurationParseError> {
            .failure(DurationParseError(text: text, detail: detail))
        }
        if text.isEmpty { return fail("it is empty") }
        if text.hasPrefix("-") { return fail("durations cannot be negative") }
        if text.contains(where: { $0 == " " || $0 == "\t" }) { return fail("spaces are not allowed") }
        let chars = Array(text.unicodeScalars)
        var index = 0
        var total: Int64 = 0
        var previousUnit = -1
        while index < chars.count {
            let numberStart = index
            while index < chars.count, ("0"..."9").contains(chars[index]) { index += 1 }
            let number = String(String.UnicodeScalarView(chars[numberStart..<index]))
            if number.isEmpty {
                if numberStart == 0 { return fail(nil) }
                return fail("expected a number at \(EchoText.quoted(String(String.UnicodeScalarView(chars[index...]))))")
            }
            let unitStart = index
            while index < chars.count, !("0"..."9").contains(chars[index]) { index += 1 }
            let unit = String(String.UnicodeScalarView(chars[unitStart..<index]))
            if unit.isEmpty {
                return fail("the unit is missing after \(number): write \(number)s, \(number)m, \(number)h, ...")
            }
            if unit == "." || unit.hasPrefix(".") { return fail("only whole numbers are allowed") }
            guard let position = units.firstIndex(where: { $0.name == unit }) else {
                return fail("unknown unit \(EchoText.quoted(unit)) (units are d, h, m, s, ms)")
            }
            if position == previousUnit { return fail("the unit \(unit) appears twice") }
            if position < previousUnit {
                return fail("units must go from largest to smallest (d, h, m, s, ms); \(unit) comes after \(units[previousUnit].name)")
            }
            previousUnit = position
            let tooLong = "longer than the maximum, \(maximumText)"
            guard let value = Int64(number) else { return fail(tooLong) }
            let (scaled, overflow1) = value.multipliedReportingOverflow(by: units[position].milliseconds)
            let (sum, overflow2) = total.addingReportingOverflow(scaled)
            if overflow1 || overflow2 || sum > maximumMilliseconds { return fail(tooLong) }
            total = sum
        }
        return .success(.milliseconds(total))
    }

    /// Parses `text`, throwing a `DurationParseError` when it is not a duration.
    package static func duration(_ text: String) throws(DurationParseError) -> Duration {
        try parse(text).get()
    }

    /// The canonical text of a duration, largest units first and zero parts left out:
    /// `1h30m`, `1d12h`, `2m30s500ms`, `0s`. Sub-millisecond parts are dropped.
    package static func format(_ duration: Duration) -> String { duration.compactText }
}

/// Why a text is not a duration: what was found, what was expected, and a hint.
package struct DurationParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The text that was given.
    package var text: String
    /// What exactly is wrong, e.g. `the unit is missing after 30: write 30s, 30m, 30h, ...`.
    package var detail: String?

    package init(text: String, detail: String?) {
        self.text = text
        self.detail = detail
    }

    /// `expected a duration like 30s, 10m or 1h30m, found "thirty"` plus the detail, if any.
    package var description: String {
        let base = "expected a duration like 30s, 10m or 1h30m, found \(EchoText.quoted(text))"
        return detail.map { "\(base) (\($0))" } ?? base
    }
}
