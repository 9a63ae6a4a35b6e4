/// What `refreshd status` shows of the widget timelines, as a plain Codable value: per widget
/// the entry shown and since when, the next entry switch, the policy, the next reload and why,
/// the budget used and left in the window, and staleness with its spans.
///
/// Widgets are sorted by kind then family, so equal states give equal snapshots.
package struct TimelineSnapshot: Sendable, Hashable, Codable {
    /// One widget's status.
    package struct Widget: Sendable, Hashable, Codable {
        /// Why the next reload will happen.
        package enum NextReload: String, Sendable, Hashable, Codable {
            /// The policy (`atEnd` or `after`) asks at `nextReload`.
            case policy
            /// The policy asks again after a failed reload.
            case retry
            /// A reload deferred for the budget is released at `nextReload` (nil: budget 0).
            case deferred
            /// A reload held by the minimum interval since the last one (`min-reload-interval`),
            /// released at `nextReload`, when it ends: the budget has a slot before then.
            case spaced
            /// A reload held while Low Power Mode is on (released when it ends).
            case lowPower
            /// A reload waits for the provider call in flight to end.
            case afterProviderRun
            /// Nothing asks: only explicit or exempt reloads (`never`, or no timeline yet).
            case onRequest
        }

        package var kind: String
        package var family: WidgetFamily
        package var job: String
        package var shown: TimelineEntry?
        package var shownSince: Instant?
        package var nextEntrySwitch: Instant?
        package var entries: Int
        package var policy: TimelinePolicy?
        package var nextReload: Instant?
        package var nextReloadWhy: NextReload
        package var providerRunningSince: Instant?
        /// `nil` when unlimited.
        package var budgetLimit: Int?
        package var budgetUsed: Int?
        package var budgetLeft: Int?
        package var windowSeconds: Int64
        package var staleSince: Instant?
        package var staleReason: StaleReason?
        /// Recent closed spans then the open one, oldest first.
        package var staleSpans: [StaleSpan]
        package var lastSuccess: Instant?
        package var lastFailure: String?
    }

    /// The instant the snapshot describes.
    package var at: Instant
    package var widgets: [Widget]
    package var nextDeadline: Instant?
}

extension TimelineMachine {
    /// The status of every widget at the last event's instant (or `now`, if given, for a
    /// status read between events: budget use and the entry switch are evaluated then).
    package func snapshot(at now: Instant? = nil) -> TimelineSnapshot {
        let at = now ?? lastEventAt ?? Instant(milliseconds: 0)
        let statuses = order.compactMap { id -> TimelineSnapshot.Widget? in
            guard let w = widgets[id], let definition = definitions[id.kind] else { return nil }
            let limit = definition.budget.limit
            let used = limit.map { _ in self.used(id, w, definition, at: at) }
            let next: Instant?, why: TimelineSnapshot.Widget.NextReload
            if w.inFlight != nil {
                (next, why) = (nil, w.queued != nil ? .afterProviderRun : .onRequest)
            } else if w.queued != nil {
                (next, why) = (w.release, heldBy(w, definition, at: at))
            } else if let due = w.policyDue {
                (next, why) = (due, w.policyReason == .retry ? .retry : .policy)
            } else {
                (next, why) = (nil, .onRequest)
            }
            return TimelineSnapshot.Widget(
                kind: id.kind, family: id.family, job: definition.job,
                shown: w.shown?.entry, shownSince: w.shown?.since,
                nextEntrySwitch: Self.nextSwitch(w, at: at),
                entries: w.timeline?.entries.count ?? 0, policy: w.timeline?.policy,
                nextReload: next, nextReloadWhy: why, providerRunningSince: w.inFlightSince,
                budgetLimit: limit, budgetUsed: used,
                budgetLeft: limit.map { max($0 - (used ?? 0), 0) },
                windowSeconds: definition.window.wholeMilliseconds / 1000,
                staleSince: w.stale?.start, staleReason: w.stale?.reason,
                staleSpans: w.recentSpans + (w.stale.map { [$0] } ?? []),
                lastSuccess: w.lastSuccess, lastFailure: w.lastFailure)
        }
        return TimelineSnapshot(at: at, widgets: statuses, nextDeadline: nextDeadline)
    }

    /// What holds a queued reload, as `admit` decided it: Low Power Mode; the minimum interval
    /// since the last reload when it ends after the budget frees a slot (or the budget has one);
    /// otherwise the budget.
    func heldBy(_ w: WidgetRecord, _ definition: WidgetDefinition, at now: Instant) -> TimelineSnapshot.Widget.NextReload {
        if isLowPower { return .lowPower }
        guard let spacing = spacingRelease(w, definition, at: now) else { return .deferred }
        var record = w
        switch budgetRelease(&record, definition, at: now) {
        case .none: return .spaced
        case .some(.none): return .deferred
        case let .some(.some(slot)): return spacing > slot ? .spaced : .deferred
        }
    }
}
