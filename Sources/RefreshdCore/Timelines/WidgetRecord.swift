/// Everything the timeline machine knows about one widget (kind and family), as one durable
/// record: the machine's state is exactly what it stores, so a restart loses nothing.
///
/// The runtime stores it as JSON under table `widget`, key `kind/family`, whenever it changes
/// (at most once per event), and hands the records back in `TimelineMachine.RestoredState`.
public struct WidgetRecord: Sendable, Hashable, Codable {
    public var widget: WidgetID
    /// The last good timeline a provider returned, and when.
    public var timeline: Timeline?
    public var timelineReceived: Instant?
    public var shown: ShownEntry?
    /// Counted (non-exempt) reloads within the budget's window, oldest first. At most the
    /// budget's size; unlimited budgets keep none.
    public var ledger: [Instant] = []
    /// The largest budget in force while the ledger's reloads were counted (a config reload may
    /// shrink the budget under reloads already made): the invariant's bound.
    public var ledgerCeiling: Int = 0
    /// When the policy next asks for a reload (nil: it does not), and as what.
    public var policyDue: Instant?
    public var policyReason: ReloadReason?
    /// The provider call in flight, and since when.
    public var inFlight: ReloadAsk?
    public var inFlightSince: Instant?
    /// A reload waiting: for the call in flight to end (when `inFlight` is set), or for the
    /// budget (then `release` is when the window frees a slot; nil with a budget of 0).
    public var queued: ReloadAsk?
    public var release: Instant?
    /// The open stale span, if stale, and up to when its time is in the day counters.
    public var stale: StaleSpan?
    public var staleAccountedUntil: Instant?
    /// The most recent closed stale spans, oldest first (at most `recentSpanLimit`).
    public var recentSpans: [StaleSpan] = []
    /// When the provider was last asked (counted or exempt): the next counted reload waits
    /// for `WidgetDefinition.minReloadInterval` after it.
    public var lastReload: Instant?
    public var lastSuccess: Instant?
    public var lastFailure: String?

    /// Closed spans kept per widget; the day counters keep the totals.
    public static let recentSpanLimit = 16

    public init(widget: WidgetID) {
        self.widget = widget
    }
}
