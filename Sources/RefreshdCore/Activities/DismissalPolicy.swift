/// When an ended activity leaves the screen, as ActivityKit's `ActivityUIDismissalPolicy`.
///
/// Whatever the policy, an ended activity is dismissed no later than `dismissalDelay` (4 h by
/// default) after it ended, and no later than the visible limit (12 h) after it started.
///
/// Codable as `{"kind": "default"}`, `{"kind": "immediate"}` or
/// `{"kind": "after", "date": "2026-11-23T04:00:00.000Z"}`.
package enum DismissalPolicy: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Stays visible for the dismissal delay (4 h) after ending.
    case `default`
    /// Dismissed at the instant it ends.
    case immediate
    /// Dismissed at the date, or at the dismissal delay after ending, whichever comes first; a
    /// date before the end dismisses at once.
    case after(Instant)

    /// The instant an activity that ended at `ended` is dismissed under this policy with the
    /// given delay (before the 12 h visible limit is applied).
    package func dismissal(endedAt ended: Instant, delay: Duration) -> Instant {
        switch self {
        case .default: ended + delay
        case .immediate: ended
        case let .after(date): max(ended, min(date, ended + delay))
        }
    }

    private enum CodingKeys: String, CodingKey { case kind, date }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let kind = try container.decode(String.self, forKey: .kind)
        switch kind {
        case "default": self = .default
        case "immediate": self = .immediate
        case "after": self = .after(try container.decode(Instant.self, forKey: .date))
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .kind, in: container,
                debugDescription: "expected a dismissal policy kind of default, immediate or after, found \"\(kind)\"")
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .default: try container.encode("default", forKey: .kind)
        case .immediate: try container.encode("immediate", forKey: .kind)
        case let .after(date):
            try container.encode("after", forKey: .kind)
            try container.encode(date, forKey: .date)
        }
    }

    package var description: String {
        switch self {
        case .default: "default"
        case .immediate: "immediate"
        case let .after(date): "after \(date)"
        }
    }
}
