import RefreshdCore

/// A calendar day (proleptic Gregorian), written `YYYY-MM-DD`: the name of a staged playlist.
package struct CivilDate: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// Days since 1970-01-01.
    package var dayNumber: Int64

    package init(dayNumber: Int64) { self.dayNumber = dayNumber }

    package init?(year: Int, month: Int, day: Int) {
        guard (1...9999).contains(year), (1...12).contains(month),
              (1...Int(ISO8601.daysInMonth(year: Int64(year), month: Int64(month)))).contains(day) else { return nil }
        dayNumber = ISO8601.days(year: Int64(year), month: Int64(month), day: Int64(day))
    }

    /// Parses `YYYY-MM-DD`; nil for anything else.
    package init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard text.utf8.count == 10, parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]) else { return nil }
        self.init(year: y, month: m, day: d)
    }

    package func adding(days: Int) -> CivilDate { CivilDate(dayNumber: dayNumber + Int64(days)) }

    package var description: String {
        let (y, m, d) = ISO8601.civil(fromDays: dayNumber)
        func pad(_ v: Int64, _ width: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))"
    }

    package static func < (lhs: CivilDate, rhs: CivilDate) -> Bool { lhs.dayNumber < rhs.dayNumber }

    package init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let date = CivilDate(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                    debugDescription: "expected a date like 2026-11-24, found \"\(text)\""))
        }
        self = date
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
