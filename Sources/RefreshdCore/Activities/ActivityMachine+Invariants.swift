/// The machine's rules checked on its state: the simulator and the tests call this after every
/// step. Each line starts with a stable rule id, then the activity, then what is wrong.
extension ActivityMachine {
    package func checkInvariants() -> [String] {
        var problems = faults
        var counts: [String: Int] = [:]
        var expectedHeap = 0
        for (id, a) in activities {
            if a.id != id { problems.append("id-mismatch [\(id)]: filed under another id than its own (\(a.id))") }
            if a.state == .dismissed { problems.append("dismissed-kept [\(id)]: a dismissed activity is still in memory") }
            if a.state.isLive { counts[a.namespace, default: 0] += 1 }
            if let now = lastInstant {
                if a.state.isVisible && a.start + settings.visibleLimit <= now {
                    problems.append("visible-past-limit [\(id)]: \(a.state) at \(now), started \(a.start)")
                }
                if (a.state == .active || a.state == .stale) && a.start + settings.activeLimit <= now {
                    problems.append("active-past-limit [\(id)]: \(a.state) at \(now), started \(a.start)")
                }
                if a.state == .active, let stale = a.staleDate, stale <= now {
                    problems.append("active-past-stale-date [\(id)]: active at \(now), stale date \(stale)")
                }
                if a.state == .pending && a.start <= now {
                    problems.append("pending-past-start [\(id)]: pending at \(now), start \(a.start)")
                }
                if a.state == .ended, let dismissal = a.dismissalByPolicy, dismissal <= now {
                    problems.append("ended-past-dismissal [\(id)]: ended at \(now), dismissal \(dismissal)")
                }
                if let held = a.held, held.release <= now {
                    problems.append("held-past-release [\(id)]: held update of \(held.timestamp) not applied at \(now), release \(held.release)")
                }
            }
            if a.state == .ended && (a.ended == nil || a.dismissalByPolicy == nil) {
                problems.append("ended-without-dismissal [\(id)]: ended but no end or dismissal instant")
            }
            if let held = a.held {
                if a.state != .active && a.state != .stale {
                    problems.append("held-while-\(a.state) [\(id)]: a held update on an activity that takes none")
                }
                if let last = a.lastUpdateTimestamp, held.timestamp < last {
                    problems.append("held-out-of-order [\(id)]: held update of \(held.timestamp) older than the last applied \(last)")
                }
            }
            let budget = settings.budget(frequentUpdates: a.frequentUpdates)
            let allUses = a.highPriorityUses
            let uses = settingsChangedAt.map { since in allUses.filter { $0 >= since } } ?? allUses
            for i in allUses.indices.dropFirst() where allUses[i] < allUses[i - 1] {
                problems.append("budget-uses-unordered [\(id)]: \(allUses[i]) after \(allUses[i - 1])")
                break
            }
            if uses.count > budget, let i = (budget..<uses.count).first(where: { uses[$0] < uses[$0 - budget] + ActivitySettings.budgetWindow }) {
                problems.append("budget-exceeded [\(id)]: \(budget + 1) high-priority updates within an hour ending \(uses[i])")
            }
            if let next = Self.nextDeadline(of: a, settings: settings) {
                expectedHeap += 1
                let entry = DeadlineEntry(at: next.at, kind: next.kind, id: id)
                if !deadlines.unordered.contains(entry) {
                    problems.append("deadline-unfiled [\(id)]: \(next.kind) at \(next.at) is not in the deadline heap")
                }
            }
        }
        for (namespace, count) in counts {
            if count > concurrencyCeiling {
                problems.append("concurrency-exceeded [\(namespace)]: \(count) live activities, limit \(settings.maxConcurrentPerNamespace)")
            }
        }
        for (namespace, count) in liveCount where count != counts[namespace, default: 0] {
            problems.append("live-count-mismatch [\(namespace)]: counted \(count), actually \(counts[namespace, default: 0])")
        }
        if let top = deadlines.min, !isCurrent(top) {
            problems.append("deadline-top-stale: the heap's first entry (\(top.id) \(top.kind) at \(top.at)) is not current")
        }
        if recentlyDismissed.count > Self.historyLimit {
            problems.append("history-unbounded: \(recentlyDismissed.count) dismissed kept, limit \(Self.historyLimit)")
        }
        return problems.sorted()
    }
}
