/// When a widget's timeline asks to be reloaded, as WidgetKit's `TimelineReloadPolicy`.
///
/// Encoded as the provider writes it: `"atEnd"`, `"never"` or `{"after": "2026-11-23T00:00:00.000Z"}`.
package enum TimelinePolicy: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Reload once the last entry's date has come (at once for an empty timeline).
    case atEnd
    /// Reload at this instant.
    case after(Instant)
    /// Only explicit (or exempt) reloads.
    case never

    private enum CodingKeys: String, CodingKey { case after }

    package init(from decoder: any Decoder) throws {
        if let single = try? decoder.singleValueContainer(), let text = try? single.decode(String.self) {
            switch text {
            case "atEnd": self = .atEnd
            case "never": self = .never
            default:
                throw DecodingError.dataCorruptedError(
                    in: single, debugDescription: "expected a reload policy \"atEnd\", \"never\" or {\"after\": DATE}, found \"\(text)\"")
            }
            return
        }
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self = .after(try c.decode(Instant.self, forKey: .after))
    }

    package func encode(to encoder: any Encoder) throws {
        switch self {
        case .atEnd:
            var c = encoder.singleValueContainer()
            try c.encode("atEnd")
        case .never:
            var c = encoder.singleValueContainer()
            try c.encode("never")
        case let .after(date):
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(date, forKey: .after)
        }
    }

    /// `atEnd`, `after 2026-11-23T00:00:00.000Z`, `never`.
    package var description: String {
        switch self {
        case .atEnd: "atEnd"
        case let .after(date): "after \(date)"
        case .never: "never"
        }
    }
}
