/// Formats and parses ISO 8601 UTC timestamps without Foundation's clock or locale machinery.
///
/// The core stays free of Foundation so that it can run unchanged in the simulator and in
/// benchmarks; civil-date arithmetic here follows Howard Hinnant's `days_from_civil`.
public enum ISO8601 {
    /// `2026-11-21T14:12:52.123Z` (milliseconds always shown).
    public static func format(_ instant: Instant) -> String {
        guard fitsFourDigitYear(instant) else { return wideFormat(instant) }
        // Written digit by digit into the string's own storage: the simulator's report formats
        // three instants per run, half a million runs a simulated year.
        return String(unsafeUninitializedCapacity: 24) { write(instant, into: $0) }
    }

    /// Appends what `format` returns, as UTF-8, without making a string (the simulator's JSON
    /// report writes three instants per run).
    public static func append(_ instant: Instant, to bytes: inout [UInt8]) {
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

    /// Parses what `format` writes: `YYYY-MM-DDTHH:MM:SS.mmmZ` (milliseconds optional). Nil for
    /// anything else; the job files' richer date syntax is parsed by the config module.
    public static func parse(_ text: String) -> Instant? {
        let b = Array(text.utf8)
        guard b.count == 20 || b.count == 24, b.last == UInt8(ascii: "Z") else { return nil }
        func number(_ from: Int, _ length: Int) -> Int64? {
            var value: Int64 = 0
            for i in from..<(from + length) {
                guard b[i] >= 48, b[i] <= 57 else { return nil }
                value = value * 10 + Int64(b[i] - 48)
            }
            return value
        }
        let separators: [(Int, Character)] = [(4, "-"), (7, "-"), (10, "T"), (13, ":"), (16, ":")]
        guard separators.allSatisfy({ b[$0.0] == UInt8(ascii: $0.1.unicodeScalars.first!) }),
              let y = number(0, 4), let mo = number(5, 2), let d = number(8, 2),
              let h = number(11, 2), let mi = number(14, 2), let s = number(17, 2),
              (1...12).contains(mo), d >= 1, d <= daysInMonth(year: y, month: mo), h < 24, mi < 60, s < 60
        else { return nil }
        var ms: Int64 = 0
        if b.count == 24 {
            guard b[19] == UInt8(ascii: "."), let fraction = number(20, 3) else { return nil }
            ms = fraction
        }
        let seconds = days(year: y, month: mo, day: d) * 86_400 + h * 3600 + mi * 60 + s
        return Instant(milliseconds: seconds * 1000 + ms)
    }

    /// The UTC calendar day of an instant as `YYYY-MM-DD` (used for per-day counters).
    public static func day(_ instant: Instant) -> String {
        String(format(instant).prefix(10))
    }

    /// Days since the epoch of a `YYYY-MM-DD` day (as `day(_:)` writes it), or nil.
    public static func dayNumber(_ text: String) -> Int64? {
        guard let instant = parse(text + "T00:00:00Z") else { return nil }
        return instant.milliseconds / 86_400_000
    }

    /// Days since the epoch for a proleptic Gregorian date.
    public static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// Days in a month of the proleptic Gregorian calendar.
    public static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// The proleptic Gregorian date (year, month, day) of a day count since the epoch.
    public static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
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
