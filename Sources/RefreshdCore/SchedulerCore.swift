/// The deterministic heart of refreshd: a state machine from events to effects.
///
/// It never reads a clock, touches libuv, spawns a process or writes a file. Every method takes
/// the current instant and returns the effects the shell must carry out, in order: persist state,
/// arm the single wake-up timer, launch, expire or kill runs, log. The libuv shell and the
/// simulator drive the same core, so every time rule is testable without sleeping.
///
/// ```swift
/// var core = SchedulerCore(definitions: [TaskDefinition(identifier: "a.refresh")])
/// let effects = try core.submit(TaskRequest(identifier: "a.refresh"), at: now)
/// // [.persist(.savePending(...)), .log(.submitted(...)), .armTimer(at: now)]
/// ```
package struct SchedulerCore: Sendable {
    /// A run in flight (the lifecycle's type).
    typealias ActiveRun = RunLifecycle.ActiveRun

    package private(set) var configuration: SchedulerConfiguration
    /// The declared identifiers, by interned slot, equal rules stored once (`TaskDefinitions`).
    package internal(set) var definitions = TaskDefinitions()
    package internal(set) var conditions = Conditions()
    /// Templates and their instances, by the definitions' slots (`InstanceRegistry`).
    var instances = InstanceRegistry()
    package internal(set) var isStopping = false

    var queue = PendingQueue()
    /// Runs in flight: launch, expiration at the allowance, kill after the grace, end.
    var runs = RunLifecycle()
    var active: [Int64: ActiveRun] {
        _read { yield runs.active }
        _modify { yield &runs.active }
    }
    var activeByIdentifier: [String: Int64] {
        _read { yield runs.byKey }
        _modify { yield &runs.byKey }
    }
    /// Due entries whose identifier has a run in flight; they go back to the heap when it ends.
    var blockedByRun = TrackedTable<PendingQueue.Entry>()
    /// Due entries whose conditions do not hold (or have not been checked yet).
    var waitingOnConditions = TrackedTable<PendingQueue.Entry>()
    /// Due entries the admission policy holds back, with the instant they are looked at again.
    var held = TrackedTable<(entry: PendingQueue.Entry, until: Instant)>()
    /// Due entries of paused identifiers (`pause`): parked, out of the heap, until resumed.
    var parked = TrackedTable<PendingQueue.Entry>()
    /// Paused identifiers (a job, an instance or a template, whose instances are then paused),
    /// with the instant each was paused; saved as `paused` records.
    package internal(set) var paused: [String: Instant] = [:]
    /// Decides whether a due request may launch now (a reload budget, the system's discretion
    /// in simulation, a lease). Nil admits everything.
    package var admissionPolicy: (any AdmissionPolicy)?
    var failureStreaks = TrackedTable<Int>()
    /// Today's counters by identifier (UTC day `counterDay`, in days since the epoch): the core
    /// counts launches, outcomes and missed slots, the store keeps what it is told.
    var counters = TodayCounters()
    var counterDay: Int64 = Int64.min
    var nextSequence: UInt64 = 1
    package internal(set) var nextRunID: Int64 = 1
    var armedAt: Instant?
    /// The shell's timer must be re-armed (or disarmed) even if the deadline is unchanged: its
    /// delay was computed against a wall clock that has since changed.
    var rearmRequired = false
    var watchingConditions = false
    var stoppedReported = false
    /// The incremental invariant checker's memory (nil until a simulation turns it on).
    var invariantTracking: InvariantTracking?

    package init(configuration: SchedulerConfiguration = SchedulerConfiguration(),
                definitions: [TaskDefinition] = []) {
        self.configuration = configuration
        for d in definitions {
            store(d)
        }
    }

    /// Declares an identifier. Returns false if it was already declared (the old one stays).
    @discardableResult
    package mutating func declare(_ definition: TaskDefinition) -> Bool {
        guard !definitions.contains(definition.identifier) else { return false }
        store(definition)
        return true
    }

    /// Turns the per-request log effects on (a watcher wants every event whatever the log
    /// level) or off.
    package mutating func setEmitsRoutineLogs(_ on: Bool) { configuration.emitsRoutineLogs = on }

    /// Feeds one event; returns the effects to carry out in order.
    package mutating func handle(_ event: SchedulerEvent, at now: Instant) -> [SchedulerEffect] {
        var effects: [SchedulerEffect] = []
        handle(event, at: now, into: &effects)
        return effects
    }

    /// Feeds one event, appending its effects to `effects` (a buffer the shell reuses, so the hot
    /// path allocates no array per event).
    package mutating func handle(_ event: SchedulerEvent, at now: Instant, into effects: inout [SchedulerEffect]) {
        switch event {
        case let .declare(definition):
            redeclare(definition)
        case let .undeclare(identifier):
            undeclare(identifier, into: &effects)
        case let .restore(state):
            restore(state, at: now, into: &effects)
        case let .submit(request):
            do {
                try submit(request, at: now, into: &effects)
            } catch {
                effects.append(.log(.rejected(identifier: request.identifier, error)))
            }
        case let .submitFirst(identifier):
            do {
                try submitFirst(identifier, at: now, into: &effects)
            } catch {
                effects.append(.log(.rejected(identifier: identifier, error)))
            }
        case .timerFired:
            armedAt = nil
            releaseHeld(at: now)
            expireOverdue(at: now, into: &effects)
            dispatch(at: now, freshConditions: false, into: &effects)
        case let .cancel(identifier):
            cancel(identifier, into: &effects)
        case let .cancelAll(namespace):
            for p in queue.sorted() where namespace == nil || p.namespace == namespace {
                cancel(p.identifier, into: &effects)
            }
        case let .runFinished(runID, exit, results, usage):
            finish(runID: runID, exit: exit, results: results, usage: usage, at: now, into: &effects)
        case let .conditionsChanged(newConditions):
            if newConditions != conditions { effects.append(.log(.conditions(newConditions))) }
            conditions = newConditions
            for entry in waitingOnConditions.values { queue.reinsert(entry) }
            waitingOnConditions.removeAll()
            dispatch(at: now, freshConditions: true, into: &effects)
        case let .clockChanged(expected):
            effects.append(.log(.clockChanged(now, expected: expected)))
            rearmRequired = true  // the armed delay was computed against the old wall clock
            if now > expected { applyMissedPolicies(since: expected, at: now, into: &effects) }
            dispatch(at: now, freshConditions: false, into: &effects)
        case .shutdown:
            shutdown(at: now, into: &effects)
        case let .declareTemplate(definition, spec):
            declareTemplate(definition, spec)
        case let .undeclareTemplate(identifier):
            undeclareTemplate(identifier, into: &effects)
        case let .addInstance(record):
            do {
                try addInstance(record, at: now, into: &effects)
            } catch {
                effects.append(.log(.instance(.refused(error))))
            }
        case let .removeInstance(template, key):
            do {
                try removeInstance(template: template, key: key, at: now, into: &effects)
            } catch {
                effects.append(.log(.instance(.refused(error))))
            }
        case let .seedInstances(template, replacing):
            seedInstances(of: template, replacing: replacing, at: now, into: &effects)
        }
        finishEvent(into: &effects)
    }

    /// Appends a state change if anything stores them.
    @inline(__always)
    func persist(_ change: @autoclosure () -> StateChange, into effects: inout [SchedulerEffect]) {
        if configuration.emitsStateChanges { effects.append(.persist(change())) }
    }

    /// Counts something for a job on the UTC day of `now` and stores the day's row (only when
    /// something stores state: an in-memory scheduler keeps no counters).
    mutating func tally(_ identifier: String, slot hint: SlotHint = .none, at now: Instant,
                        into effects: inout [SchedulerEffect], _ body: (inout DailyCounter) -> Void) {
        guard configuration.emitsStateChanges else { return }
        let (q, r) = now.milliseconds.quotientAndRemainder(dividingBy: 86_400_000)
        let day = r < 0 ? q - 1 : q
        if day != counterDay {
            counters.removeAll()
            // A new day after a known one (a fresh state has no history to prune): forget the
            // runs that ended before this day's start minus the retention.
            if counterDay != Int64.min, let retention = configuration.runRetention {
                effects.append(.persist(.pruneRuns(endedBefore: Instant(milliseconds: day * 86_400_000) - retention)))
            }
            counterDay = day
        }
        var counter = counters.update(identifier, hint: hint,
                                      making: { DailyCounter(day: ISO8601.day(now), identifier: identifier) }, body)
        counter.slot = hint
        effects.append(.persist(.counters(counter)))
    }

    /// Appends a per-request log message if anything logs them.
    @inline(__always)
    func logRoutine(_ message: @autoclosure () -> LogMessage, into effects: inout [SchedulerEffect]) {
        if configuration.emitsRoutineLogs { effects.append(.log(message())) }
    }

    // MARK: Queries

    /// Copies of the pending requests in due order (all namespaces, or one).
    package func pendingRequests(namespace: String? = nil) -> [TaskRequest] {
        queue.sorted().filter { namespace == nil || $0.namespace == namespace }.map(\.request)
    }

    /// The pending request for an identifier, with its bookkeeping.
    package func pending(_ identifier: String) -> PendingRequest? { queue[identifier] }

    package var pendingCount: Int { queue.count }

    /// Runs in flight, by run id.
    package var activeRuns: [LaunchOrder] { active.values.map(\.order).sorted { $0.runID < $1.runID } }

    /// Whether a run is in flight.
    package func isActive(_ runID: Int64) -> Bool { active[runID] != nil }

    /// The instant the wake-up timer is armed for, if any.
    package var nextWakeUp: Instant? { armedAt }

    // MARK: Bookkeeping shared by the event handlers

    /// Re-arms the timer and reports condition watching and the end of a shutdown.
    mutating func finishEvent(into effects: inout [SchedulerEffect]) {
        let wantWatch = !waitingOnConditions.isEmpty && !isStopping
        if wantWatch != watchingConditions {
            watchingConditions = wantWatch
            effects.append(.watchConditions(wantWatch))
        }
        let next = nextDeadline()
        if next != armedAt || rearmRequired {
            rearmRequired = false
            armedAt = next
            effects.append(next.map { .armTimer(at: $0) } ?? .disarmTimer)
        }
        if isStopping, active.isEmpty, !stoppedReported {
            stoppedReported = true
            effects.append(.stopped)
        }
    }

    /// The earliest instant at which something must happen without an outside event.
    mutating func nextDeadline() -> Instant? {
        // Peeked first: passing `queue.peek()` (a mutation) as the argument of a call on self
        // made Swift copy the whole core for the call.
        let first = queue.peek()
        return deadline(firstInQueue: first)
    }

    /// The earliest instant at which something must happen, given the queue's first live entry
    /// (`nextDeadline` drops stale heap tops to find it; the invariant checker scans instead).
    func deadline(firstInQueue first: PendingQueue.Entry?) -> Instant? {
        var next = runs.nextDeadline
        if !isStopping, active.count < configuration.maxConcurrentRuns, let top = first {
            let t = Instant(milliseconds: top.due)
            if next == nil || t < next! { next = t }
        }
        if !isStopping {
            for h in held.values where next == nil || h.until < next! { next = h.until }
        }
        return next
    }
}
