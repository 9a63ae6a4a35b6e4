import Foundation
import RefreshdConfig
import RefreshdCore

/// One family's timeline from the staged playlists: the core `Timeline` (each entry's content is
/// `{"asset": ID, "rendition": PATH, "fallback": DATE}`, the rendition relative to the shared
/// container) and the staged day it came from when today was not staged.
package struct StagedTimeline: Sendable, Hashable {
    package var timeline: Timeline
    /// The staged day shown because today's playlist is missing; nil when it is today's.
    package var fallback: CivilDate?

    package init(timeline: Timeline, fallback: CivilDate?) {
        self.timeline = timeline
        self.fallback = fallback
    }

    /// An entry's content text: compact JSON with sorted keys; `rendition` is left out when the
    /// playlist has none for the family (staged before the family was added).
    package static func content(asset: String, rendition: String?, fallback: CivilDate?) -> String {
        var object: [String: String] = ["asset": asset]
        if let rendition { object["rendition"] = rendition }
        if let fallback { object["fallback"] = fallback.description }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// The timeline in the results vocabulary: `{"entries": [{"date": ISO8601, "content": {...}}],
    /// "policy": "atEnd" | {"after": ISO8601} | "never", "fallback": "YYYY-MM-DD"}` (no
    /// `fallback` when the day is today's). Contents are JSON objects already, so they are
    /// embedded as they are.
    package var jsonLine: String {
        let entries = timeline.entries.map { #"{"content":\#($0.content),"date":"\#($0.date.iso8601)"}"# }
        let policy = switch timeline.policy {
        case .atEnd: #""atEnd""#
        case .never: #""never""#
        case let .after(instant): #"{"after":"\#(instant.iso8601)"}"#
        }
        let fallback = fallback.map { #","fallback":"\#($0)""# } ?? ""
        return #"{"entries":[\#(entries.joined(separator: ","))]\#(fallback),"policy":\#(policy)}"#
    }
}
