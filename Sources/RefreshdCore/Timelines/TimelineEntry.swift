/// One entry of a widget timeline: what the widget shows from `date` until the next entry.
///
/// `content` is the entry's light content as the provider gave it, compact JSON text (an asset
/// identifier, a title): refreshd never interprets it, it publishes it. `relevance` and
/// `duration` rank widgets in a stack, as WidgetKit's `TimelineEntryRelevance` does.
package struct TimelineEntry: Sendable, Hashable, Codable {
    package var date: Instant
    package var content: String
    package var relevance: Double?
    package var duration: Duration?

    package init(date: Instant, content: String, relevance: Double? = nil, duration: Duration? = nil) {
        self.date = date
        self.content = content
        self.relevance = relevance
        self.duration = duration
    }

    private enum CodingKeys: String, CodingKey {
        case date, content, relevance, durationMilliseconds
    }

    /// The duration is stored as whole milliseconds (`durationMilliseconds`), not as Swift's
    /// two-integer `Duration` encoding.
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        date = try c.decode(Instant.self, forKey: .date)
        content = try c.decode(String.self, forKey: .content)
        relevance = try c.decodeIfPresent(Double.self, forKey: .relevance)
        duration = try c.decodeIfPresent(Int64.self, forKey: .durationMilliseconds).map { .milliseconds($0) }
    }

    package func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(date, forKey: .date)
        try c.encode(content, forKey: .content)
        try c.encodeIfPresent(relevance, forKey: .relevance)
        try c.encodeIfPresent(duration?.wholeMilliseconds, forKey: .durationMilliseconds)
    }
}
