/// Request, update, end and an owner's failure: the events a job or the API sends.
extension ActivityMachine {
    mutating func start(_ request: ActivityRequest, at now: Instant, into effects: inout [ActivityEffect]) -> ActivityError? {
        let id = request.id
        guard settings.enabled else { return .disabled(id: id) }
        if id.isEmpty { return .invalidField(id: id, field: "id", expected: "a non-empty activity id") }
        if request.typeName.isEmpty { return .invalidField(id: id, field: "type", expected: "a non-empty attributes type name") }
        if request.namespace.isEmpty { return .invalidField(id: id, field: "namespace", expected: "a non-empty namespace") }
        if let existing = activities[id] { return .duplicateID(id: id, state: existing.state) }
        if let problem = ActivityJSON.objectError(request.attributes) {
            return .invalidField(id: id, field: "attributes", expected: "a JSON object (\(problem))")
        }
        if let problem = ActivityJSON.objectError(request.content) {
            return .invalidField(id: id, field: "content", expected: "a JSON object (\(problem))")
        }
        let bytes = request.attributes.utf8.count + request.content.utf8.count
        if bytes > settings.payloadLimitBytes {
            return .payloadTooLarge(id: id, bytes: bytes, limit: settings.payloadLimitBytes)
        }
        if liveCount[request.namespace, default: 0] >= settings.maxConcurrentPerNamespace {
            return .tooManyActivities(id: id, namespace: request.namespace, limit: settings.maxConcurrentPerNamespace)
        }
        if activities.count >= settings.maxActivitiesTotal {
            return .tooManyInTotal(id: id, limit: settings.maxActivitiesTotal)
        }
        if liveCount[request.namespace, default: 0] == 0, liveNamespaces >= settings.maxNamespaces {
            return .tooManyNamespaces(id: id, namespace: request.namespace, limit: settings.maxNamespaces)
        }
        let start = max(now, request.startAt ?? now)
        let state: ActivityState
        let cause: ActivityCause
        if start > now {
            state = .pending
            cause = .scheduled
        } else {
            state = request.staleDate.map { $0 <= now } == true ? .stale : .active
            cause = .requested
        }
        let activity = Activity(
            id: id, typeName: request.typeName, owner: request.owner, namespace: request.namespace,
            attributes: request.attributes, content: request.content, staleDate: request.staleDate,
            relevance: request.relevance, frequentUpdates: request.frequentUpdates,
            state: state, stateSince: now, requested: now, start: start)
        liveCount[request.namespace, default: 0] += 1
        activities[id] = activity
        schedule(activity)
        let transition = ActivityTransition(id: id, from: nil, to: state, due: now, applied: now, cause: cause)
        effects.append(.persist(.save(activity)))
        effects.append(.publish(activity))
        effects.append(.transition(transition))
        effects.append(.log(.transition(transition, activity)))
        return nil
    }

    mutating func update(_ update: ActivityUpdate, at now: Instant, into effects: inout [ActivityEffect]) -> ActivityError? {
        let id = update.id
        guard var activity = activities[id] else {
            if isRecentlyDismissed(id) {
                effects.append(.log(.updateIgnored(id: id, timestamp: update.timestamp, reason: .notUpdatable(.dismissed))))
                return nil
            }
            return .unknownActivity(id: id, event: .update)
        }
        switch activity.state {
        case .pending:
            return .notAllowed(id: id, state: .pending, event: .update)
        case .ended, .dismissed:
            activity.updatesIgnored += 1
            save(activity, publish: false, into: &effects)
            effects.append(.log(.updateIgnored(id: id, timestamp: update.timestamp, reason: .notUpdatable(activity.state))))
            return nil
        case .active, .stale:
            break
        }
        if let problem = ActivityJSON.objectError(update.content) {
            return .invalidField(id: id, field: "content", expected: "a JSON object (\(problem))")
        }
        let bytes = activity.attributes.utf8.count + update.content.utf8.count
        if bytes > settings.payloadLimitBytes {
            return .payloadTooLarge(id: id, bytes: bytes, limit: settings.payloadLimitBytes)
        }
        if let last = activity.lastUpdateTimestamp, update.timestamp < last {
            activity.updatesIgnored += 1
            save(activity, publish: false, into: &effects)
            effects.append(.log(.updateIgnored(id: id, timestamp: update.timestamp, reason: .outOfOrder(lastApplied: last))))
            return nil
        }
        if update.priority == .high {
            if let held = activity.held, update.timestamp < held.timestamp {
                // Coalescing keeps the latest content: this one is already superseded.
                activity.updatesIgnored += 1
                save(activity, publish: false, into: &effects)
                effects.append(.log(.updateIgnored(id: id, timestamp: update.timestamp, reason: .superseded(by: held.timestamp))))
                return nil
            }
            let budget = settings.budget(frequentUpdates: activity.frequentUpdates)
            pruneUses(&activity, at: now)
            if activity.highPriorityUses.count >= budget {
                hold(update, in: &activity, budget: budget, at: now, into: &effects)
                return nil
            }
            activity.highPriorityUses.append(now)
        }
        apply(content: update.content, staleDate: update.staleDate, relevance: update.relevance,
              timestamp: update.timestamp, to: &activity, at: now, now: now, cause: .updated, into: &effects)
        return nil
    }

    /// Holds a high-priority update over budget, coalescing with one already held.
    private mutating func hold(_ update: ActivityUpdate, in activity: inout Activity, budget: Int, at now: Instant,
                               into effects: inout [ActivityEffect]) {
        let release = Self.release(of: activity, budget: budget, at: now)
        var coalesced = 1
        var since = now
        if let held = activity.held {
            coalesced = held.coalesced + 1
            since = held.heldSince
            activity.updatesIgnored += 1
            effects.append(.log(.updateIgnored(id: activity.id, timestamp: held.timestamp, reason: .superseded(by: update.timestamp))))
        }
        activity.held = HeldActivityUpdate(
            content: update.content, staleDate: update.staleDate, relevance: update.relevance,
            timestamp: update.timestamp, heldSince: since, coalesced: coalesced, release: release)
        save(activity, publish: false, into: &effects)
        effects.append(.log(.updateHeld(id: activity.id, timestamp: update.timestamp, release: release,
                                        coalesced: coalesced, budget: budget)))
    }

    /// The instant enough budget uses leave the rolling hour for one more (uses pruned at `now`).
    static func release(of activity: Activity, budget: Int, at now: Instant) -> Instant {
        let uses = activity.highPriorityUses
        guard uses.count >= budget else { return now }
        return uses[uses.count - budget] + ActivitySettings.budgetWindow
    }

    /// Forgets budget uses that left the rolling hour ending at `now`.
    func pruneUses(_ activity: inout Activity, at now: Instant) {
        let cutoff = now - ActivitySettings.budgetWindow
        if let first = activity.highPriorityUses.first, first <= cutoff {
            activity.highPriorityUses.removeAll { $0 <= cutoff }
        }
    }

    /// Applies new content at `at` (the event's instant, or a held update's release): a stale
    /// date not after `at` leaves or makes it stale, otherwise it is active. A held update no
    /// newer than this one is dropped.
    mutating func apply(content: String, staleDate: Instant?, relevance: Double?, timestamp: Instant,
                        to activity: inout Activity, at: Instant, now: Instant, cause: ActivityCause,
                        into effects: inout [ActivityEffect]) {
        if let last = activity.lastUpdateTimestamp, timestamp < last {
            recordFault("update-out-of-order [\(activity.id)]: applied \(timestamp) after \(last)")
        }
        activity.content = content
        activity.staleDate = staleDate
        if let relevance { activity.relevance = relevance }
        activity.lastUpdateTimestamp = timestamp
        activity.updatesApplied += 1
        if let held = activity.held, held.timestamp <= timestamp {
            activity.held = nil
            if cause != .heldUpdateReleased {
                activity.updatesIgnored += 1
                effects.append(.log(.updateIgnored(id: activity.id, timestamp: held.timestamp, reason: .superseded(by: timestamp))))
            }
        }
        let target: ActivityState = staleDate.map { $0 <= at } == true ? .stale : .active
        if target != activity.state {
            move(&activity, to: target, due: at, now: now, cause: target == .stale ? .staleDatePassed : cause, into: &effects)
        } else {
            save(activity, publish: true, into: &effects)
            effects.append(.log(.updated(activity)))
        }
    }

    mutating func end(id: String, content: String?, policy: DismissalPolicy, timestamp: Instant, at now: Instant,
                      into effects: inout [ActivityEffect]) -> ActivityError? {
        guard var activity = activities[id] else {
            return isRecentlyDismissed(id)
                ? .notAllowed(id: id, state: .dismissed, event: .end)
                : .unknownActivity(id: id, event: .end)
        }
        switch activity.state {
        case .pending:
            move(&activity, to: .dismissed, due: now, now: now, cause: .cancelledBeforeStart, into: &effects)
            return nil
        case .ended, .dismissed:
            return .notAllowed(id: id, state: activity.state, event: .end)
        case .active, .stale:
            break
        }
        if let content {
            if let problem = ActivityJSON.objectError(content) {
                return .invalidField(id: id, field: "content", expected: "a JSON object (\(problem))")
            }
            let bytes = activity.attributes.utf8.count + content.utf8.count
            if bytes > settings.payloadLimitBytes {
                return .payloadTooLarge(id: id, bytes: bytes, limit: settings.payloadLimitBytes)
            }
            if let last = activity.lastUpdateTimestamp, timestamp < last {
                effects.append(.log(.endContentDropped(id: id, timestamp: timestamp, lastApplied: last)))
            } else {
                activity.content = content
                activity.lastUpdateTimestamp = timestamp
            }
        }
        finish(&activity, policy: policy, at: now, now: now, cause: .endedByRequest, into: &effects)
        return nil
    }

    /// A job's run ended: on a failure, its active and stale activities end with the failure in
    /// their content (in id order, so effects repeat).
    mutating func ownerFinished(_ owner: String, outcome: Outcome, reason: String?, at now: Instant,
                                into effects: inout [ActivityEffect]) {
        guard outcome.isFailure else { return }
        let owned = activities.values.filter { $0.owner == owner && ($0.state == .active || $0.state == .stale) }
        for var activity in owned.sorted(by: { $0.id < $1.id }) {
            activity.content = ActivityJSON.mergingFailure(into: activity.content, outcome: outcome, reason: reason)
            finish(&activity, policy: .default, at: now, now: now, cause: .ownerFailed, into: &effects)
        }
    }
}
