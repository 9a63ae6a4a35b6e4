import RefreshdCore

/// A broken-down wall-clock time, like C's `struct tm`, whose fields may be out of range.
///
/// The next-elapse search walks these fields forward the way systemd walks a `struct tm`,
/// letting them overflow (minute 60, day 32, month 13) and normalizing afterwards. The
/// arithmetic is proleptic Gregorian (`ISO8601` in the core) and time-zone free; `ZoneClock`
/// adds the zone.
struct CivilTime: Sendable, Equatable {
    var year: Int
    /// 1...12 when normalized.
    var month: Int
    /// 1...31 when normalized.
    var day: Int
    var hour: Int
    var minute: Int
    var second: Int
    /// Like `tm_isdst`: whether the reading is meant as daylight-saving time, or nil for
    /// "work it out" (-1). `mktime` honours a concrete value, which matters in DST overlaps.
    var isDST: Bool?

    static let secondsPerDay = 86_400

    /// Seconds since 1970-01-01 00:00:00 of this wall-clock reading, as if it were UTC.
    /// Out-of-range fields carry into larger units (month first, then the rest linearly).
    var naiveSeconds: Int {
        let monthIndex = month - 1
        let carryYears = monthIndex >= 0 ? monthIndex / 12 : -((-monthIndex + 11) / 12)
        let normalizedMonth = monthIndex - carryYears * 12 + 1
        let days = Int(ISO8601.days(year: Int64(year + carryYears), month: Int64(normalizedMonth), day: 1)) + (day - 1)
        return days * Self.secondsPerDay + hour * 3600 + minute * 60 + second
    }

    /// The normalized wall-clock reading for `naiveSeconds`.
    init(naiveSeconds: Int) {
        let days = Self.floorDiv(naiveSeconds, Self.secondsPerDay)
        let secondOfDay = naiveSeconds - days * Self.secondsPerDay
        let (year, month, day) = ISO8601.civil(fromDays: Int64(days))
        self.init(year: Int(year), month: Int(month), day: Int(day),
                  hour: secondOfDay / 3600, minute: secondOfDay / 60 % 60, second: secondOfDay % 60)
    }

    init(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0) {
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
    }

    /// Day of the week of the (normalized) date: 0 = Monday ... 6 = Sunday, systemd's numbering.
    var weekday: Int {
        let days = Self.floorDiv(naiveSeconds, Self.secondsPerDay)
        // 1970-01-01 was a Thursday (3 in Monday-based numbering).
        return Self.positiveModulo(days + 3, 7)
    }

    static func floorDiv(_ a: Int, _ b: Int) -> Int {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }

    static func positiveModulo(_ a: Int, _ b: Int) -> Int {
        let r = a % b
        return r < 0 ? r + b : r
    }
}
