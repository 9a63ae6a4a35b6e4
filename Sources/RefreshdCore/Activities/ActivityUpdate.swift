/// New content for an activity (ActivityKit's `Activity.update`): it replaces the content and the
/// stale date (nil removes it). `timestamp` is when the sender produced it; one older than the
/// last applied update is ignored, so late deliveries cannot roll the content back.
package struct ActivityUpdate: Sendable, Hashable, Codable {
    package var id: String
    /// JSON object text.
    package var content: String
    package var staleDate: Instant?
    /// Nil keeps the current relevance.
    package var relevance: Double?
    package var timestamp: Instant
    package var priority: ActivityPriority

    package init(id: String, content: String, staleDate: Instant? = nil, relevance: Double? = nil,
                timestamp: Instant, priority: ActivityPriority = .low) {
        self.id = id
        self.content = content
        self.staleDate = staleDate
        self.relevance = relevance
        self.timestamp = timestamp
        self.priority = priority
    }
}
