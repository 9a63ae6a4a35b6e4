/// Everything that can happen to the widget timelines; the runtime feeds these to
/// `TimelineMachine.handle` with the instant they happened.
package enum TimelineEvent: Sendable, Hashable {
    /// Declares a widget kind, or replaces its definition (config reload): families still on
    /// screen keep their state, families no longer listed are withdrawn, new ones ask for their
    /// first timeline (once the machine is restored).
    case declare(WidgetDefinition)
    /// Withdraws every family of a kind: published entries are withdrawn, records deleted.
    case undeclare(kind: String)
    /// Loads saved state, once at start after the first declares (even with nothing saved).
    /// Until then the machine only records definitions.
    case restore(TimelineMachine.RestoredState)
    /// Asks every family of a kind (nil: of every kind) for a reload.
    case reload(kind: String?, reason: ReloadReason)
    /// A provider call the machine asked for (`.runProvider`) ended.
    case providerFinished(WidgetID, ProviderResult)
    /// The runtime's wake-up came (at `nextDeadline`, or early, late or spuriously: the machine
    /// acts on whatever is due at the event's instant and on nothing else).
    case timerFired
    /// The wall clock was stepped or the machine resumed: re-evaluate everything at the new
    /// instant (a step forward may pass entries and due reloads).
    case clockChanged
    /// Low Power Mode turned on or off ("getTimeline may not fire at all"): while it is on,
    /// counted reloads are held (stale if they demanded freshness) and released when it ends;
    /// exempt reloads still happen. Device state: the host sends it again after a restart.
    case lowPower(Bool)
    /// Stop: no new provider calls; state is flushed. Results of calls in flight are still kept.
    case shutdown
}
