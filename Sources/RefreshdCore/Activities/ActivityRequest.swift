/// A request to start a Live Activity (ActivityKit's `Activity.request`), from a job's result
/// line or the library API.
public struct ActivityRequest: Sendable, Hashable, Codable {
    public var id: String
    public var typeName: String
    public var owner: String?
    public var namespace: String
    /// JSON object text: static attributes.
    public var attributes: String
    /// JSON object text: the first content state.
    public var content: String
    public var staleDate: Instant?
    public var relevance: Double?
    /// Asks for the larger high-priority budget (`NSSupportsLiveActivitiesFrequentUpdates`).
    public var frequentUpdates: Bool
    /// Start at this date (pending until then); nil, or a date not after the request, starts now.
    public var startAt: Instant?

    public init(id: String, typeName: String, owner: String? = nil, namespace: String,
                attributes: String = "{}", content: String = "{}", staleDate: Instant? = nil,
                relevance: Double? = nil, frequentUpdates: Bool = false, startAt: Instant? = nil) {
        self.id = id
        self.typeName = typeName
        self.owner = owner
        self.namespace = namespace
        self.attributes = attributes
        self.content = content
        self.staleDate = staleDate
        self.relevance = relevance
        self.frequentUpdates = frequentUpdates
        self.startAt = startAt
    }
}
