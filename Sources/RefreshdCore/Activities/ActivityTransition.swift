/// One state change of one activity, for observers and the simulation report: when it should
/// have happened (`due`: a deadline's instant, or the event's) and when it was applied (later
/// only when refreshd was down or its timer fired late).
package struct ActivityTransition: Sendable, Hashable, Codable {
    package var id: String
    /// Nil for the request that created it.
    package var from: ActivityState?
    package var to: ActivityState
    package var due: Instant
    package var applied: Instant
    package var cause: ActivityCause

    package init(id: String, from: ActivityState?, to: ActivityState, due: Instant, applied: Instant, cause: ActivityCause) {
        self.id = id
        self.from = from
        self.to = to
        self.due = due
        self.applied = applied
        self.cause = cause
    }
}
