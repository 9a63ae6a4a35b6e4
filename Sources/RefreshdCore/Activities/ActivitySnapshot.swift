/// The activities as `refreshd status` shows them (Codable for `--json` and the control socket):
/// each one's state and since when, a content summary, its deadlines and any held update, and
/// the recently dismissed ones.
package struct ActivitySnapshot: Sendable, Hashable, Codable {
    package struct Entry: Sendable, Hashable, Codable {
        package var id: String
        package var type: String
        package var owner: String?
        package var namespace: String
        package var state: ActivityState
        package var since: Instant
        package var start: Instant
        /// The content's `progress` (a fraction 0...1) as a percentage, when it has one.
        package var progressPercent: Double?
        package var staleDate: Instant?
        /// When the system ends it (8 h after start), while pending, active or stale.
        package var endsBy: Instant?
        /// When it leaves the screen: its policy's instant capped by the 12 h limit once ended,
        /// otherwise the 12 h limit.
        package var dismissal: Instant?
        /// High-priority updates applied in the hour before the snapshot, and the budget.
        package var budgetUsed: Int
        package var budget: Int
        /// The held (throttled) update, if any.
        package var held: HeldActivityUpdate?
        package var updatesApplied: Int
        package var updatesIgnored: Int
        /// The next deadline of this activity and its kind.
        package var nextDeadline: Instant?
        package var nextDeadlineKind: String?
    }

    /// Live and ended activities, by id.
    package var activities: [Entry]
    /// The most recently dismissed, oldest first.
    package var recentlyDismissed: [DismissedActivity]
    /// When the snapshot's figures were taken (the machine's last event).
    package var at: Instant?
}

extension ActivityMachine {
    /// The activities now (as of the last event handled), sorted by id.
    package func snapshot() -> ActivitySnapshot {
        snapshot(of: activities.values.sorted { $0.id < $1.id }, dismissed: recentlyDismissed)
    }

    /// One activity now, or its dismissal if it was dismissed (what an event on it changed).
    package func snapshot(of id: String) -> ActivitySnapshot {
        snapshot(of: activities[id].map { [$0] } ?? [], dismissed: recentlyDismissed.filter { $0.id == id })
    }

    private func snapshot(of list: [Activity], dismissed: [DismissedActivity]) -> ActivitySnapshot {
        let now = lastInstant
        let entries = list.map { a -> ActivitySnapshot.Entry in
            let next = Self.nextDeadline(of: a, settings: settings)
            let used = now.map { n in a.highPriorityUses.filter { $0 > n - ActivitySettings.budgetWindow && $0 <= n }.count }
                ?? a.highPriorityUses.count
            return ActivitySnapshot.Entry(
                id: a.id, type: a.typeName, owner: a.owner, namespace: a.namespace, state: a.state,
                since: a.stateSince, start: a.start,
                progressPercent: ActivityJSON.progressPercent(in: a.content), staleDate: a.staleDate,
                endsBy: a.state.isLive ? a.start + settings.activeLimit : nil,
                dismissal: a.dismissal(visibleLimit: settings.visibleLimit) ?? a.start + settings.visibleLimit,
                budgetUsed: used, budget: settings.budget(frequentUpdates: a.frequentUpdates), held: a.held,
                updatesApplied: a.updatesApplied, updatesIgnored: a.updatesIgnored,
                nextDeadline: next?.at, nextDeadlineKind: next.map { "\($0.kind)" })
        }
        return ActivitySnapshot(activities: entries, recentlyDismissed: dismissed, at: now)
    }
}
