/// Formats and parses ISO 8601 UTC timestamps without Foundation's clock or locale machinery.
///
/// The core stays free of Foundation so that it can run unchanged in the simulator and in
/// benchmarks; civil-date arithmetic here follows Howard Hinnant's `days_from_civil`.
package enum ISO8601 {
    /// `2026-11-21T14:12:52.123Z` (milliseconds always shown).
    package static func format(_ instant: Instant) -> String {
        guard fitsFourDigitYear(instant) else { return wideFormat(instant) }
        // Written digit by digit into the string's own storage: the simulator's report formats
        // three instants per run, half a million runs a simulated year.
        return String(unsafeUninitializedCapacity: 24) { write(instant, into: $0) }
    }

    /// Appends what `format` returns, as UTF-8, without making a string (the simulator's JSON
    /// report writes three instants per run).
    package static func append(_ instant: Instant, to bytes: inout [UInt8]) {
        guard fitsFourDigitYear(instant) else { return bytes.append(contentsOf: wideFormat(instant).utf8) }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { b in
            bytes.append(contentsOf: b[..<write(instant, into: b)])
        }
    }

    /// Years 0...9999: what `write` handles.
    private static func fitsFourDigitYear(_ instant: Instant) -> Bool {
        // 0000-01-01T00:00:00Z and 10000-01-01T00:00:00Z in milliseconds since the epoch.
        instant.milliseconds >= -62_167_219_200_000 && instant.milliseconds < 253_402_300_800_000
    }

    /// An instant of years 0...9999 into 24 bytes of `b`; returns 24.
    private static func write(_ instant: Instant, into b: UnsafeMutableBufferPointer<UInt8>) -> Int {
        let (y, m, d, h, mi, s, f) = fields(instant)
        func put(_ value: Int64, _ width: Int, at start: Int) {
            var v = value
            for i in stride(from: start + width - 1, through: start, by: -1) {
                b[i] = UInt8(truncatingIfNeeded: 48 + v % 10)
                v /= 10
            }
        }
        put(y, 4, at: 0); b[4] = 45  // -
        put(m, 2, at: 5); b[7] = 45
        put(d, 2, at: 8); b[10] = 84  // T
        put(h, 2, at: 11); b[13] = 58  // :
        put(mi, 2, at: 14); b[16] = 58
        put(s, 2, at: 17); b[19] = 46  // .
        put(f, 3, at: 20); b[23] = 90  // Z
        return 24
    }

    /// Any other year (arithmetic saturates within 1...9999, but an `Instant` can hold more).
    private static func wideFormat(_ instant: Instant) -> String {
        let (y, m, d, h, mi, s, f) = fields(instant)
        return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(h, 2)):\(pad(mi, 2)):\(pad(s, 2)).\(pad(f, 3))Z"
    }

    /// Year, month, day, hour, minute, second and millisecond of an instant, in UTC.
    private static func fields(_ instant: Instant) -> (Int64, Int64, Int64, Int64, Int64, Int64, Int64) {
        let ms = instant.milliseconds
        var days = ms / 86_400_000
        var rem = ms % 86_400_000
        if rem < 0 { rem += 86_400_000; days -= 1 }
        let (y, m, d) = civil(fromDays: days)
        return (y, m, d, rem / 3_600_000, (rem / 60_000) % 60, (rem / 1000) % 60, rem % 1000)
    }

    /// Parses what `format` writes (`YYYY-MM-DDTHH:MM:SS.mmmZ`) and every other ISO 8601 date
    /// and time with a zone that `parseStrict` accepts; nil for anything else. The job files'
    /// richer date syntax (`+1h`, calendars) is parsed by the config module.
    package static func parse(_ text: String) -> Instant? {
        if case let .success(instant) = parseStrict(text) { return instant }
        return nil
    }

    /// Why a date was refused, naming the part that is wrong (`day 30: 2026-02 has 28 days`).
    package struct Refusal: Error, Sendable, Hashable, CustomStringConvertible {
        package var description: String
        package init(description: String) { self.description = description }
    }

    /// The one parser for every date that comes in (results channel, control requests, state):
    /// an ISO 8601 calendar date and time of day with a zone, in the extended format,
    ///
    ///     YYYY-MM-DD T hh:mm [:ss [.fraction]] zone      zone: Z | ±hh:mm | ±hhmm | ±hh
    ///
    /// (`t` and `z` in lowercase too, `,` as the decimal sign too). Strict where lenient parsers
    /// roll over: a real calendar date (no February 30), years 0001 to 9999 (before and after
    /// the offset is applied, so every accepted instant formats back to four digits and parses
    /// again), hours 00-23, minutes and seconds 00-59 (no leap second, no 24:00), offsets up
    /// to ±23:59. Fractions beyond milliseconds are cut (refreshd's resolution). A refusal says
    /// which field is wrong and what was expected.
    package static func parseStrict(_ text: String) -> Result<Instant, Refusal> {
        let b = Array(text.utf8)
        func shape() -> Result<Instant, Refusal> {
            refuse("expected an ISO 8601 date with a zone (Z or an offset like +01:00), like 2026-11-22T06:00:00Z; "
                   + "found " + EchoText.quoted(text, limit: 40))
        }
        guard b.count >= 17, let y = digits(b, 0, 4), isByte(b, 4, "-"), let mo = digits(b, 5, 2), isByte(b, 7, "-"),
              let d = digits(b, 8, 2), isByte(b, 10, "Tt"), let h = digits(b, 11, 2), isByte(b, 13, ":"), let mi = digits(b, 14, 2)
        else { return shape() }
        var i = 16
        var s: Int64 = 0
        var ms: Int64 = 0
        if isByte(b, i, ":") {
            guard let seconds = digits(b, i + 1, 2) else { return shape() }
            s = seconds
            i += 3
            if isByte(b, i, ".,") {
                i += 1
                let first = i
                var scale: Int64 = 100
                while i < b.count, b[i] >= 48, b[i] <= 57 {
                    ms += Int64(b[i] - 48) * scale
                    scale /= 10
                    i += 1
                }
                guard i > first, i - first <= 9 else { return shape() }
            }
        }
        let offsetMinutes: Int64
        switch zoneOffset(b, at: &i) {
        case let .success(minutes): offsetMinutes = minutes
        case let .failure(refusal): return .failure(refusal)
        }
        guard i == b.count else {
            return refuse("expected nothing after the zone, found " + EchoText.quoted(String(decoding: b[i...], as: UTF8.self), limit: 20))
        }
        return instant(year: y, month: mo, day: d, hour: h, minute: mi, second: s, milliseconds: ms, offsetMinutes: offsetMinutes)
    }

    /// The zone at `i` in minutes east of UTC (`Z`, `±hh:mm`, `±hhmm` or `±hh`, hours 00 to 23
    /// and minutes 00 to 59), `i` moved past it; a refusal naming what is wrong otherwise.
    private static func zoneOffset(_ b: [UInt8], at i: inout Int) -> Result<Int64, Refusal> {
        guard i < b.count else {
            return refuse("zone: expected Z or an offset like +01:00 after the time; a date without a zone is ambiguous")
        }
        switch b[i] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            i += 1
            return .success(0)
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let sign: Int64 = b[i] == UInt8(ascii: "-") ? -1 : 1
            guard let oh = digits(b, i + 1, 2) else { return refuse("zone: expected an offset like +01:00, +0100 or +01") }
            i += 3
            var om: Int64 = 0
            if isByte(b, i, ":") {
                guard let m = digits(b, i + 1, 2) else { return refuse("zone: expected an offset like +01:00, +0100 or +01") }
                om = m
                i += 3
            } else if let m = digits(b, i, 2) {
                om = m
                i += 2
            }
            guard oh <= 23, om <= 59 else {
                return refuse("zone: offset \(sign < 0 ? "-" : "+")\(pad(oh, 2)):\(pad(om, 2)): expected hours 00 to 23 "
                              + "and minutes 00 to 59")
            }
            return .success(sign * (oh * 60 + om))
        default:
            return refuse("zone: expected Z or an offset like +01:00, +0100 or +01, found " + EchoText.quoted(String(decoding: b[i...], as: UTF8.self), limit: 20))
        }
    }

    /// The instant of the fields read, once each is in its range (a real calendar date, no
    /// leap second) and the result is within years 0001 to 9999 in UTC too.
    private static func instant(year y: Int64, month mo: Int64, day d: Int64, hour h: Int64, minute mi: Int64, second s: Int64,
                                milliseconds ms: Int64, offsetMinutes: Int64) -> Result<Instant, Refusal> {
        guard y >= 1 else { return refuse("year 0000: expected 0001 to 9999") }
        guard (1...12).contains(mo) else { return refuse("month \(pad(mo, 2)): expected 01 to 12") }
        let monthDays = daysInMonth(year: y, month: mo)
        guard d >= 1, d <= monthDays else {
            return refuse("day \(pad(d, 2)): \(pad(y, 4))-\(pad(mo, 2)) has \(monthDays) days")
        }
        guard h <= 23 else { return refuse("hour \(pad(h, 2)): expected 00 to 23") }
        guard mi <= 59 else { return refuse("minute \(pad(mi, 2)): expected 00 to 59") }
        guard s <= 59 else { return refuse("second \(pad(s, 2)): expected 00 to 59 (leap seconds are not kept)") }
        let seconds = days(year: y, month: mo, day: d) * 86_400 + h * 3600 + mi * 60 + s - offsetMinutes * 60
        let instant = Instant(milliseconds: seconds * 1000 + ms)
        // 0001-01-01T00:00:00Z ..< 10000-01-01T00:00:00Z: four-digit years in UTC too.
        guard instant.milliseconds >= -62_135_596_800_000, instant.milliseconds < 253_402_300_800_000 else {
            return refuse("the offset takes the date outside years 0001 to 9999 in UTC")
        }
        return .success(instant)
    }

    private static func refuse<T>(_ reason: String) -> Result<T, Refusal> { .failure(Refusal(description: reason)) }

    /// The number written in `count` ASCII digits at `from`, or nil (the config's dates read
    /// their fields with it too).
    package static func digits(_ b: [UInt8], _ from: Int, _ count: Int) -> Int64? {
        guard from + count <= b.count else { return nil }
        var value: Int64 = 0
        for i in from..<(from + count) {
            guard b[i] >= 48, b[i] <= 57 else { return nil }
            value = value * 10 + Int64(b[i] - 48)
        }
        return value
    }

    private static func isByte(_ b: [UInt8], _ i: Int, _ characters: String) -> Bool { i < b.count && characters.utf8.contains(b[i]) }

    /// The UTC calendar day of an instant as `YYYY-MM-DD` (used for per-day counters).
    package static func day(_ instant: Instant) -> String {
        String(format(instant).prefix(10))
    }

    /// Days since the epoch of a `YYYY-MM-DD` day (as `day(_:)` writes it), or nil.
    package static func dayNumber(_ text: String) -> Int64? {
        guard let instant = parse(text + "T00:00:00Z") else { return nil }
        return instant.milliseconds / 86_400_000
    }

    /// Days since the epoch for a proleptic Gregorian date.
    package static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// Days in a month of the proleptic Gregorian calendar.
    package static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// The proleptic Gregorian date (year, month, day) of a day count since the epoch.
    package static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let s = String(value)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }
}
