/// A template's instances counted by state (issue 33, item 6): the one row or lane a template
/// is shown as, however many instances it has. Each count is of instances, by the rule of
/// `SearchState` (a search with that state finds as many), and a store counts them on its
/// indexes without reading the instances or their requests.
///
/// A timeline template's instances never run themselves: their widget providers do
/// (`TEMPLATE[KEY]#family`), so a provider's pending request, run, failure streak is its
/// instance's (`InstanceSearch.key(ofIdentifier:)`).
///
/// ```swift
/// let counts = try reader.instanceCounts(of: "feed")   // 1,000,000 instances, 12 failing...
/// ```
package struct InstanceCounts: Sendable, Hashable, Codable {
    package var count: Int
    package var pending: Int
    package var running: Int
    /// A failure streak above zero.
    package var failing: Int
    /// Paused themselves, or all of them with their template.
    package var paused: Int

    package init(count: Int = 0, pending: Int = 0, running: Int = 0, failing: Int = 0, paused: Int = 0) {
        (self.count, self.pending, self.running, self.failing, self.paused) = (count, pending, running, failing, paused)
    }

    /// Two stores' counts together (a cluster's shards hold disjoint instances).
    package static func + (a: InstanceCounts, b: InstanceCounts) -> InstanceCounts {
        InstanceCounts(count: a.count + b.count, pending: a.pending + b.pending, running: a.running + b.running,
                       failing: a.failing + b.failing, paused: a.paused + b.paused)
    }
}

/// What one identifier is doing, from the store: a list row's state columns (an instance's,
/// with its providers' folded in by `folded`).
package struct IdentifierState: Sendable, Hashable {
    /// Its pending request's earliest begin date.
    package var pending: Instant?
    /// Its run without an end.
    package var running: Int64?
    package var failureStreak: Int
    package var paused: Bool
    package var lastRun: RunRecord?

    package init(pending: Instant? = nil, running: Int64? = nil, failureStreak: Int = 0, paused: Bool = false, lastRun: RunRecord? = nil) {
        (self.pending, self.running, self.failureStreak, self.paused, self.lastRun) = (pending, running, failureStreak, paused, lastRun)
    }

    /// Several identifiers' states as one (an instance and its providers): the first pending,
    /// any run, the longest streak, the latest run.
    package static func folded(_ states: [IdentifierState]) -> IdentifierState {
        var all = IdentifierState()
        for s in states {
            if let p = s.pending, all.pending.map({ p < $0 }) ?? true { all.pending = p }
            all.running = all.running ?? s.running
            all.failureStreak = max(all.failureStreak, s.failureStreak)
            all.paused = all.paused || s.paused
            if let r = s.lastRun, all.lastRun.map({ (r.started, r.runID) > ($0.started, $0.runID) }) ?? true { all.lastRun = r }
        }
        return all
    }
}

extension InstanceSearch {
    /// The key of the template's instance whose state `identifier` is part of: the instance's
    /// own (`T[K]`) or one of its providers' (`T[K]#family`); nil for any other identifier.
    package func instanceKey(ofIdentifier identifier: String) -> String? {
        if let key = key(ofIdentifier: identifier) { return key }
        guard let hash = identifier.utf8.firstIndex(of: UInt8(ascii: "#")) else { return nil }
        return key(ofIdentifier: String(identifier[..<hash]))
    }
}
