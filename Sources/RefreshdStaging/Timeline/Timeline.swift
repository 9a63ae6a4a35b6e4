import Foundation
import RefreshdCore

/// A widget timeline as a provider returns it: entries at dates with light content (an asset
/// identifier and rendition paths, never image bytes) and a reload policy. `fallback` names the
/// staged day used when the day asked for was not staged.
public struct Timeline: Sendable, Hashable {
    public enum Policy: Sendable, Hashable {
        case atEnd
        case after(Instant)
        case never
    }

    public struct Entry: Sendable, Hashable {
        public var date: Instant
        public var asset: String
        /// Family name to the rendition's absolute path.
        public var renditions: [String: String]
    }

    public var entries: [Entry]
    public var policy: Policy
    public var fallback: CivilDate?

    /// The timeline in the results vocabulary:
    /// `{"entries": [{"date": ISO8601, "content": {...}}], "policy": ..., "fallback": "YYYY-MM-DD"}`.
    public var jsonLine: String {
        var object: [String: Any] = [
            "entries": entries.map { entry in
                ["date": entry.date.iso8601, "content": ["asset": entry.asset, "renditions": entry.renditions]] as [String: Any]
            },
        ]
        switch policy {
        case .atEnd: object["policy"] = "atEnd"
        case .never: object["policy"] = "never"
        case let .after(instant): object["policy"] = ["after": instant.iso8601]
        }
        if let fallback { object["fallback"] = fallback.description }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}
