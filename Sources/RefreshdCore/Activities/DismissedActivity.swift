/// What is remembered of a dismissed activity (bounded history): enough for `refreshd status`
/// to say how it ended, and for the machine to tell "dismissed" from "unknown" when a late
/// update arrives.
package struct DismissedActivity: Sendable, Hashable, Codable {
    package var id: String
    package var typeName: String
    package var owner: String?
    package var namespace: String
    package var start: Instant
    package var ended: Instant?
    package var endCause: ActivityCause?
    package var dismissed: Instant
    package var cause: ActivityCause
    /// The final content's `progress` as a percentage, if it had one.
    package var progressPercent: Double?

    package init(_ activity: Activity, dismissed: Instant, cause: ActivityCause) {
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
