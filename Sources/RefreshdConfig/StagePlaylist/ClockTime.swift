/// A time of day, `HH:MM` on a 24-hour clock: a playlist's switch time, in the playlist's zone.
package struct ClockTime: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    package var minutes: Int

    package static let midnight = ClockTime(minutes: 0)

    private init(minutes: Int) { self.minutes = minutes }

    package init?(hour: Int, minute: Int) {
        guard (0...23).contains(hour), (0...59).contains(minute) else { return nil }
        minutes = hour * 60 + minute
    }

    /// Parses `H:MM` or `HH:MM`; nil for anything else.
    package init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, (1...2).contains(parts[0].count), parts[1].count == 2,
              parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
              let h = Int(parts[0]), let m = Int(parts[1]) else { return nil }
        self.init(hour: h, minute: m)
    }

    package var hour: Int { minutes / 60 }
    package var minute: Int { minutes % 60 }

    package var description: String {
        (hour < 10 ? "0" : "") + "\(hour):" + (minute < 10 ? "0" : "") + "\(minute)"
    }

    package static func < (lhs: ClockTime, rhs: ClockTime) -> Bool { lhs.minutes < rhs.minutes }

    package init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let time = ClockTime(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                    debugDescription: "expected a time like 06:00, found \"\(text)\""))
        }
        self = time
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
