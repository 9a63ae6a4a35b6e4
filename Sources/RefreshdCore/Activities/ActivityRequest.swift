/// A request to start a Live Activity (ActivityKit's `Activity.request`), from a job's result
/// line or the library API.
package struct ActivityRequest: Sendable, Hashable, Codable {
    package var id: String
    package var typeName: String
    package var owner: String?
    package var namespace: String
    /// JSON object text: static attributes.
    package var attributes: String
    /// JSON object text: the first content state.
    package var content: String
    package var staleDate: Instant?
    package var relevance: Double?
    /// Asks for the larger high-priority budget (`NSSupportsLiveActivitiesFrequentUpdates`).
    package var frequentUpdates: Bool
    /// Start at this date (pending until then); nil, or a date not after the request, starts now.
    package var startAt: Instant?

    package init(id: String, typeName: String, owner: String? = nil, namespace: String,
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
