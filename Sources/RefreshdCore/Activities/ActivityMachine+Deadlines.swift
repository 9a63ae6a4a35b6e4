/// Deadlines: what is due when, applying what came due, restore, clock and settings changes.
extension ActivityMachine {
    /// An activity's next deadline under `settings`, nil when none (dismissed).
    package static func nextDeadline(of a: Activity, settings: ActivitySettings) -> (at: Instant, kind: ActivityDeadline)? {
        var best: (at: Instant, kind: ActivityDeadline)?
        func consider(_ at: Instant?, _ kind: ActivityDeadline) {
            guard let at else { return }
            if let b = best, (b.at, b.kind.rawValue) <= (at, kind.rawValue) { return }
            best = (at, kind)
        }
        switch a.state {
        case .pending:
            consider(a.start, .start)
        case .active, .stale:
            consider(a.held?.release, .release)
            if a.state == .active { consider(a.staleDate, .stale) }
            consider(a.start + settings.activeLimit, .activeLimit)
            consider(a.start + settings.visibleLimit, .visibleLimit)
        case .ended:
            consider(a.dismissalByPolicy, .dismissal)
            consider(a.start + settings.visibleLimit, .visibleLimit)
        case .dismissed:
            break
        }
        return best
    }

    /// Files the activity's next deadline in the heap (older entries become stale).
    mutating func schedule(_ activity: Activity) {
        guard let next = Self.nextDeadline(of: activity, settings: settings) else { return }
        deadlines.insert(DeadlineEntry(at: next.at, kind: next.kind, id: activity.id))
    }

    func isCurrent(_ entry: DeadlineEntry) -> Bool {
        guard let activity = activities[entry.id], let next = Self.nextDeadline(of: activity, settings: settings) else { return false }
        return next.at == entry.at && next.kind == entry.kind
    }

    /// Applies every deadline up to `now`, earliest first, each stamped with its own instant.
    mutating func applyDue(at now: Instant, into effects: inout [ActivityEffect]) {
        while let top = deadlines.min, top.at <= now {
            deadlines.removeMin()
            guard isCurrent(top), var activity = activities[top.id] else { continue }
            apply(top.kind, to: &activity, due: top.at, now: now, into: &effects)
        }
    }

    private mutating func apply(_ kind: ActivityDeadline, to activity: inout Activity, due: Instant, now: Instant,
                                into effects: inout [ActivityEffect]) {
        switch kind {
        case .start:
            let stale = activity.staleDate.map { $0 <= due } == true
            move(&activity, to: stale ? .stale : .active, due: due, now: now, cause: .startDateReached, into: &effects)
        case .release:
            guard let held = activity.held else { return }
            activity.held = nil
            pruneUses(&activity, at: due)
            activity.highPriorityUses.append(due)
            apply(content: held.content, staleDate: held.staleDate, relevance: held.relevance, timestamp: held.timestamp,
                  to: &activity, at: due, now: now, cause: .heldUpdateReleased, into: &effects)
        case .stale:
            move(&activity, to: .stale, due: due, now: now, cause: .staleDatePassed, into: &effects)
        case .activeLimit:
            finish(&activity, policy: .default, at: due, now: now, cause: .activeLimit, into: &effects)
        case .dismissal:
            move(&activity, to: .dismissed, due: due, now: now, cause: .dismissalPolicy, into: &effects)
        case .visibleLimit:
            if activity.state != .ended {
                finish(&activity, policy: .default, at: due, now: now, cause: .visibleLimit, into: &effects)
            }
            if var ended = activities[activity.id], ended.state == .ended {
                move(&ended, to: .dismissed, due: due, now: now, cause: .visibleLimit, into: &effects)
            }
        }
    }

    /// Drops stale entries from the top (so `nextDeadline` is exact) and rebuilds the heap when
    /// stale entries outnumber live ones.
    mutating func compactDeadlines() {
        while let top = deadlines.min, !isCurrent(top) { deadlines.removeMin() }
        if deadlines.count > 2 * activities.count + 32 { rebuildDeadlines() }
    }

    mutating func rebuildDeadlines() {
        var entries: [DeadlineEntry] = []
        entries.reserveCapacity(activities.count)
        for activity in activities.values {
            if let next = Self.nextDeadline(of: activity, settings: settings) {
                entries.append(DeadlineEntry(at: next.at, kind: next.kind, id: activity.id))
            }
        }
        deadlines = .init(entries)
    }

    mutating func restore(_ records: [Activity], at now: Instant, into effects: inout [ActivityEffect]) -> ActivityError? {
        for record in records where record.state != .dismissed {
            if let previous = activities[record.id], previous.state.isLive {
                liveCount[previous.namespace, default: 1] -= 1
            }
            activities[record.id] = record
            if record.state.isLive { liveCount[record.namespace, default: 0] += 1 }
        }
        concurrencyCeiling = max(settings.maxConcurrentPerNamespace, liveCount.values.max() ?? 0)
        rebuildDeadlines()
        effects.append(.log(.restored(count: activities.count)))
        return nil
    }

    mutating func clockChanged(expected: Instant, at now: Instant, into effects: inout [ActivityEffect]) {
        var forgotten = 0
        for id in activities.keys.sorted() {
            guard var activity = activities[id], activity.highPriorityUses.last.map({ $0 > now }) == true else { continue }
            let before = activity.highPriorityUses.count
            activity.highPriorityUses.removeAll { $0 > now }
            forgotten += before - activity.highPriorityUses.count
            if var held = activity.held {
                let budget = settings.budget(frequentUpdates: activity.frequentUpdates)
                held.release = Self.release(of: activity, budget: budget, at: now)
                activity.held = held
            }
            save(activity, publish: false, into: &effects)
        }
        effects.append(.log(.clockChanged(now: now, expected: expected, forgottenUses: forgotten)))
    }

    /// New settings: deadlines follow the new limits at once (rebuild); held updates' releases
    /// follow the new budget; activities over a lowered concurrency limit are kept.
    mutating func changeSettings(_ newSettings: ActivitySettings, into effects: inout [ActivityEffect]) {
        settings = newSettings
        settingsChangedAt = lastInstant
        for id in activities.keys.sorted() {
            guard var activity = activities[id], var held = activity.held else { continue }
            let budget = settings.budget(frequentUpdates: activity.frequentUpdates)
            held.release = Self.release(of: activity, budget: budget, at: held.heldSince)
            guard held.release != activity.held?.release else { continue }
            activity.held = held
            activities[id] = activity
            effects.append(.persist(.save(activity)))
        }
        concurrencyCeiling = max(newSettings.maxConcurrentPerNamespace, liveCount.values.max() ?? 0)
        rebuildDeadlines()
    }
}
