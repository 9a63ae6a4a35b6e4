/// What is remembered of a dismissed activity (bounded history): enough for `refreshd status`
/// to say how it ended, and for the machine to tell "dismissed" from "unknown" when a late
/// update arrives.
public struct DismissedActivity: Sendable, Hashable, Codable {
    public var id: String
    public var typeName: String
    public var owner: String?
    public var namespace: String
    public var start: Instant
    public var ended: Instant?
    public var endCause: ActivityCause?
    public var dismissed: Instant
    public var cause: ActivityCause
    /// The final content's `progress` as a percentage, if it had one.
    public var progressPercent: Double?

    public init(_ activity: Activity, dismissed: Instant, cause: ActivityCause) {
        self.id = activity.id
        self.typeName = activity.typeName
        self.owner = activity.owner
        self.namespace = activity.namespace
        self.start = activity.start
        self.ended = activity.ended
        self.endCause = activity.endCause
        self.dismissed = dismissed
        self.cause = cause
        self.progressPercent = ActivityJSON.progressPercent(in: activity.content)
    }
}
