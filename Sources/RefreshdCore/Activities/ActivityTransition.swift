/// One state change of one activity, for observers and the simulation report: when it should
/// have happened (`due`: a deadline's instant, or the event's) and when it was applied (later
/// only when refreshd was down or its timer fired late).
public struct ActivityTransition: Sendable, Hashable, Codable {
    public var id: String
    /// Nil for the request that created it.
    public var from: ActivityState?
    public var to: ActivityState
    public var due: Instant
    public var applied: Instant
    public var cause: ActivityCause

    public init(id: String, from: ActivityState?, to: ActivityState, due: Instant, applied: Instant, cause: ActivityCause) {
        self.id = id
        self.from = from
        self.to = to
        self.due = due
        self.applied = applied
        self.cause = cause
    }
}
