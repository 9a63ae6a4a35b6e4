/// A broken-down wall-clock time, like C's `struct tm`, whose fields may be out of range.
///
/// The next-elapse search walks these fields forward the way systemd walks a `struct tm`,
/// letting them overflow (minute 60, day 32, month 13) and normalizing afterwards. The
/// arithmetic here is proleptic Gregorian and time-zone free; `ZoneClock` adds the zone.
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
        let days = Self.daysFromCivil(year: year + carryYears, month: normalizedMonth, day: 1) + (day - 1)
        return days * Self.secondsPerDay + hour * 3600 + minute * 60 + second
    }

    /// The normalized wall-clock reading for `naiveSeconds`.
    init(naiveSeconds: Int) {
        let days = Self.floorDiv(naiveSeconds, Self.secondsPerDay)
        let secondOfDay = naiveSeconds - days * Self.secondsPerDay
        let date = Self.civilFromDays(days)
        self.init(year: date.year, month: date.month, day: date.day,
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

    static func isLeapYear(_ year: Int) -> Bool {
        (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    }

    static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = floorDiv(y, 400)
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func civilFromDays(_ days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = floorDiv(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
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
