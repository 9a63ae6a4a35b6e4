import HeapModule

/// The Live Activity rules as a deterministic machine: an event and the current instant in,
/// effects out (persist, publish, transition, log). It never reads a clock.
///
/// Use:
/// - `handle(_:at:into:)` for each event; a refused event returns an `ActivityError` and changes
///   nothing itself (deadlines already due by its instant are still applied, stamped).
/// - `nextDeadline` after each event: the runtime arms its one timer for the minimum over all
///   machines and sends `.timerFired` when it fires. Early, late and spurious fires are fine:
///   every deadline up to the instant given is applied, in order, stamped with its own instant.
/// - `.restore` once, first, with the saved records (`ActivityChange.save` values).
/// - `snapshot()` for `refreshd status`, `checkInvariants()` after every step in tests and the
///   simulator.
///
/// Dismissed activities are dropped (their record deleted) and kept only in a bounded history,
/// so memory follows the live activities. Deadlines sit in a min-heap with lazy deletion: an
/// entry counts only while it still equals its activity's next deadline; the heap is rebuilt
/// when stale entries outnumber live ones. Each event costs O(log n) plus its own effects.
package struct ActivityMachine: Sendable {
    /// The rules in force (`.settingsChanged` replaces them).
    package internal(set) var settings: ActivitySettings
    /// Pending, active, stale and ended activities by id.
    package internal(set) var activities: [String: Activity] = [:]
    /// The most recently dismissed activities, oldest first, at most `historyLimit`.
    package internal(set) var recentlyDismissed: [DismissedActivity] = []
    /// How many dismissed activities the history keeps.
    package static let historyLimit = 32
    /// The latest instant an event was handled at (the clock may go back; this follows it).
    package internal(set) var lastInstant: Instant?

    /// Pending, active and stale activities per namespace.
    var liveCount: [String: Int] = [:]
    var deadlines = Heap<DeadlineEntry>()
    /// Whether any event was handled (restore must come first).
    var handledAny = false
    /// The highest concurrency an invariant check accepts: the limit, or more when a reload
    /// lowered the limit below what namespaces already held (those activities are kept).
    var concurrencyCeiling: Int
    /// The last settings change: budget uses before it were counted against another budget, so
    /// the invariant check holds only later ones to the current budget.
    var settingsChangedAt: Instant?
    /// Broken rules noticed while handling events (a correct machine never records one).
    var faults: [String] = []

    package init(settings: ActivitySettings = ActivitySettings()) {
        self.settings = settings
        self.concurrencyCeiling = settings.maxConcurrentPerNamespace
    }

    /// The earliest instant something is due: a pending start, a stale date, a held update's
    /// release, an 8 h or 12 h limit, a dismissal. Nil when nothing is.
    package var nextDeadline: Instant? { deadlines.min?.at }

    /// Handles one event at `now`, appending effects. Deadlines due by `now` are applied first
    /// (a late timer), stamped with their own instants. Returns the refusal, if any: the event
    /// itself then changed nothing and appended only a `.log(.refused)`.
    @discardableResult
    package mutating func handle(_ event: ActivityEvent, at now: Instant, into effects: inout [ActivityEffect]) -> ActivityError? {
        let first = !handledAny
        handledAny = true
        lastInstant = now
        // Deadlines that came due before this event apply first, stamped, so the event meets
        // the state it would have met had the timer fired on time (an update after the 8 h
        // limit finds the activity ended). Restore loads the records first.
        if case .restore = event {} else { applyDue(at: now, into: &effects) }
        let error: ActivityError?
        switch event {
        case let .request(request):
            error = start(request, at: now, into: &effects)
        case let .update(update):
            error = self.update(update, at: now, into: &effects)
        case let .end(id, content, policy, timestamp):
            error = end(id: id, content: content, policy: policy, timestamp: timestamp, at: now, into: &effects)
        case let .ownerFinished(owner, outcome, reason):
            ownerFinished(owner, outcome: outcome, reason: reason, at: now, into: &effects)
            error = nil
        case .timerFired:
            error = nil
        case let .restore(records):
            error = first ? restore(records, at: now, into: &effects) : .restoreNotFirst
        case let .clockChanged(expected):
            clockChanged(expected: expected, at: now, into: &effects)
            error = nil
        case let .settingsChanged(newSettings):
            changeSettings(newSettings, into: &effects)
            error = nil
        }
        if let error { effects.append(.log(.refused(error))) }
        applyDue(at: now, into: &effects)
        compactDeadlines()
        return error
    }

    /// Activities live (pending, active, stale) in a namespace.
    package func liveActivities(in namespace: String) -> Int { liveCount[namespace, default: 0] }

    /// Namespaces with a live activity.
    package var liveNamespaces: Int { liveCount.values.reduce(0) { $0 + ($1 > 0 ? 1 : 0) } }

    // MARK: - Shared steps

    /// Moves `activity` to `state` with a transition stamped `due`, then saves, publishes and
    /// logs it. Keeps the namespace counts and the deadline heap in step.
    mutating func move(_ activity: inout Activity, to state: ActivityState, due: Instant, now: Instant,
                       cause: ActivityCause, into effects: inout [ActivityEffect]) {
        let from = activity.state
        guard from.canMove(to: state) else {
            recordFault("disallowed-transition [\(activity.id)]: \(from) -> \(state) (\(cause.rawValue))")
            return
        }
        if from.isLive && !state.isLive {
            liveCount[activity.namespace, default: 1] -= 1
            if liveCount[activity.namespace] == 0 { liveCount[activity.namespace] = nil }  // namespaces stay bounded
        }
        activity.state = state
        activity.stateSince = due
        let transition = ActivityTransition(id: activity.id, from: from, to: state, due: due, applied: now, cause: cause)
        if state == .dismissed {
            activities[activity.id] = nil
            remember(activity, at: due, cause: cause)
            effects.append(.persist(.delete(id: activity.id)))
        } else {
            activities[activity.id] = activity
            schedule(activity)
            effects.append(.persist(.save(activity)))
        }
        effects.append(.publish(activity))
        effects.append(.transition(transition))
        effects.append(.log(.transition(transition, activity)))
    }

    /// Saves and publishes a change that is not a transition (content, held update, counters).
    mutating func save(_ activity: Activity, publish: Bool, into effects: inout [ActivityEffect]) {
        activities[activity.id] = activity
        schedule(activity)
        effects.append(.persist(.save(activity)))
        if publish { effects.append(.publish(activity)) }
    }

    /// Ends a started activity at `at`: the policy's dismissal instant is fixed now; a held
    /// update is dropped.
    mutating func finish(_ activity: inout Activity, policy: DismissalPolicy, at: Instant, now: Instant,
                         cause: ActivityCause, into effects: inout [ActivityEffect]) {
        if let held = activity.held {
            activity.held = nil
            activity.updatesIgnored += 1
            effects.append(.log(.updateIgnored(id: activity.id, timestamp: held.timestamp, reason: .endedWhileHeld)))
        }
        activity.ended = at
        activity.endCause = cause
        activity.dismissalPolicy = policy
        activity.dismissalByPolicy = policy.dismissal(endedAt: at, delay: settings.dismissalDelay)
        move(&activity, to: .ended, due: at, now: now, cause: cause, into: &effects)
    }

    mutating func remember(_ activity: Activity, at: Instant, cause: ActivityCause) {
        if recentlyDismissed.count >= Self.historyLimit { recentlyDismissed.removeFirst(recentlyDismissed.count - Self.historyLimit + 1) }
        recentlyDismissed.append(DismissedActivity(activity, dismissed: at, cause: cause))
    }

    func isRecentlyDismissed(_ id: String) -> Bool {
        recentlyDismissed.contains { $0.id == id }
    }

    mutating func recordFault(_ text: String) {
        if faults.count < 64 { faults.append(text) }
    }
}
