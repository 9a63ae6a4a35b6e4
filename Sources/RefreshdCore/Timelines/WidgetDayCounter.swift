/// One widget's reload figures on one day (UTC in the daemon; the scenario's zone in a simulation): what `refreshd stats reloads` and the simulation
/// report show, the counter developers had to build by hand.
///
/// Stored under table `widget-day`, key `YYYY-MM-DD kind/family`; the machine counts, the store
/// keeps the row as given. Stale time is split at the day's midnight. `firstStale` is the first
/// instant of the day the widget was stale (midnight for a span that began the day before).
package struct WidgetDayCounter: Sendable, Hashable, Codable {
    /// The day, `YYYY-MM-DD` (see `CountingDays`).
    package var day: String
    package var kind: String
    package var family: WidgetFamily
    /// Every reload request, whatever became of it.
    package var requested = 0
    /// Counted reloads performed (the provider was asked).
    package var performed = 0
    /// Requests deferred because the budget was spent or Low Power Mode was on (a new deferral; later requests coalesced
    /// into it count as `coalesced`).
    package var deferred = 0
    /// Counted reloads that waited for the minimum interval since the last one (nil in rows
    /// saved before the setting existed).
    package var spaced: Int?
    /// Requests folded into a reload already waiting or running.
    package var coalesced = 0
    /// Exempt reloads performed (not counted against the budget).
    package var exempt = 0
    package var providerCalls = 0
    package var upstreamFetches = 0
    /// Failed reloads: provider failed, expired or interrupted.
    package var failed = 0
    /// The lowest budget left seen this day; nil for an unlimited budget.
    package var budgetLow: Int?
    package var staleMilliseconds: Int64 = 0
    package var firstStale: Instant?
    package var staleReason: StaleReason?

    package init(day: String, widget: WidgetID) {
        self.day = day
        self.kind = widget.kind
        self.family = widget.family
    }

    package var widget: WidgetID { WidgetID(kind: kind, family: family) }

    /// Stale time in whole minutes, rounded to the nearest.
    package var staleMinutes: Int64 { (staleMilliseconds + 30_000) / 60_000 }

    /// `2026-11-23 photos/systemSmall`: the row's key in the store.
    package var key: String { "\(day) \(widget)" }
}
