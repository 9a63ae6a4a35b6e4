/// New content for an activity (ActivityKit's `Activity.update`): it replaces the content and the
/// stale date (nil removes it). `timestamp` is when the sender produced it; one older than the
/// last applied update is ignored, so late deliveries cannot roll the content back.
public struct ActivityUpdate: Sendable, Hashable, Codable {
    public var id: String
    /// JSON object text.
    public var content: String
    public var staleDate: Instant?
    /// Nil keeps the current relevance.
    public var relevance: Double?
    public var timestamp: Instant
    public var priority: ActivityPriority

    public init(id: String, content: String, staleDate: Instant? = nil, relevance: Double? = nil,
                timestamp: Instant, priority: ActivityPriority = .low) {
        self.id = id
        self.content = content
        self.staleDate = staleDate
        self.relevance = relevance
        self.timestamp = timestamp
        self.priority = priority
    }
}
