/// Why an activity changed state: recorded with every transition, in the end record and in the
/// simulation report. Raw values are stable ids.
package enum ActivityCause: String, Sendable, Hashable, Codable, CaseIterable {
    /// Requested to start now.
    case requested
    /// Requested to start later (→ pending).
    case scheduled
    /// A pending activity's start date came.
    case startDateReached = "start-date-reached"
    /// Its stale date passed with no newer update.
    case staleDatePassed = "stale-date-passed"
    /// An update was applied.
    case updated
    /// A held high-priority update was applied when the budget returned.
    case heldUpdateReleased = "held-update-released"
    /// Its owner (or the API) ended it.
    case endedByRequest = "ended-by-request"
    /// A pending activity was ended before it started (never shown).
    case cancelledBeforeStart = "cancelled-before-start"
    /// Its owning job failed, expired, crashed or was interrupted without ending it.
    case ownerFailed = "owner-failed"
    /// The 8 h active limit.
    case activeLimit = "active-limit"
    /// The 12 h visible limit.
    case visibleLimit = "visible-limit"
    /// Its dismissal policy's instant came.
    case dismissalPolicy = "dismissal-policy"
}
