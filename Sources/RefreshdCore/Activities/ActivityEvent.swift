/// Everything that can happen to Live Activities. The runtime feeds these to
/// `ActivityMachine.handle(_:at:into:)` with the instant it read from its host's clock.
package enum ActivityEvent: Sendable, Hashable {
    /// Start an activity now or at `request.startAt`. Refused when disabled, over the payload
    /// limit, over the namespace's concurrency limit, with a duplicate id or non-object JSON.
    case request(ActivityRequest)
    /// New content and stale date. High priority draws on the hourly budget.
    case update(ActivityUpdate)
    /// End with optional final content and a dismissal policy. `timestamp` orders the final
    /// content against updates: final content older than the last applied update is dropped
    /// (the end itself still happens).
    case end(id: String, content: String?, policy: DismissalPolicy, timestamp: Instant)
    /// A job's run ended. When `outcome` is not `.success`, each active or stale activity it
    /// owns is ended under the default policy with the failure merged into its final content
    /// (see `ActivityJSON.mergingFailure`). Pending ones are left to start.
    case ownerFinished(owner: String, outcome: Outcome, reason: String?)
    /// The runtime's one timer fired (early, late or spuriously: every due deadline up to now is
    /// applied, stamped with the instant it was due; nothing else happens).
    case timerFired
    /// The saved records, once at start before any other event. Deadlines that passed while
    /// refreshd was down are applied in order, stamped with the instants they were due.
    case restore([Activity])
    /// The wall clock was stepped or the machine resumed. Due deadlines are applied; budget uses
    /// later than the new clock (a step back) are forgotten so the budget is not held hostage.
    case clockChanged(expected: Instant)
    /// The configuration was reloaded. Deadlines follow the new limits at once (those that the
    /// new limits put in the past are applied, stamped); the budget applies to the next update.
    case settingsChanged(ActivitySettings)
}
