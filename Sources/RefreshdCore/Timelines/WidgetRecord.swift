/// Everything the timeline machine knows about one widget (kind and family), as one durable
/// record: the machine's state is exactly what it stores, so a restart loses nothing.
///
/// The runtime stores it as JSON under table `widget`, key `kind/family`, whenever it changes
/// (at most once per event), and hands the records back in `TimelineMachine.RestoredState`.
package struct WidgetRecord: Sendable, Hashable, Codable {
    package var widget: WidgetID
    /// The last good timeline a provider returned, and when.
    package var timeline: Timeline?
    package var timelineReceived: Instant?
    package var shown: ShownEntry?
    /// Counted (non-exempt) reloads within the budget's window, oldest first. At most the
    /// budget's size; unlimited budgets keep none.
    package var ledger: [Instant] = []
    /// The largest budget in force while the ledger's reloads were counted (a config reload may
    /// shrink the budget under reloads already made): the invariant's bound.
    package var ledgerCeiling: Int = 0
    /// When the policy next asks for a reload (nil: it does not), and as what.
    package var policyDue: Instant?
    package var policyReason: ReloadReason?
    /// The provider call in flight, and since when.
    package var inFlight: ReloadAsk?
    package var inFlightSince: Instant?
    /// A reload waiting: for the call in flight to end (when `inFlight` is set), or for the
    /// budget (then `release` is when the window frees a slot; nil with a budget of 0).
    package var queued: ReloadAsk?
    package var release: Instant?
    /// The open stale span, if stale, and up to when its time is in the day counters.
    package var stale: StaleSpan?
    package var staleAccountedUntil: Instant?
    /// The most recent closed stale spans, oldest first (at most `recentSpanLimit`).
    package var recentSpans: [StaleSpan] = []
    /// When the provider was last asked (counted or exempt): the next counted reload waits
    /// for `WidgetDefinition.minReloadInterval` after it.
    package var lastReload: Instant?
    package var lastSuccess: Instant?
    package var lastFailure: String?

    /// Closed spans kept per widget; the day counters keep the totals.
    package static let recentSpanLimit = 16

    package init(widget: WidgetID) {
        self.widget = widget
    }
}
