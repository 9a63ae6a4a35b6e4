import Foundation

/// The runtime's state machines, composed: events in, one effect list out, one earliest deadline
/// for the single wake-up timer.
///
/// Three machines, each pure: `SchedulerCore` (requests and runs), `TimelineMachine` (widget
/// timelines, reload budgets, stale spans) and `ActivityMachine` (live activities). Composition
/// is the only place they meet:
/// - **One timer.** The machines' own timer effects are replaced by one `armTimer` for the
///   earliest of their deadlines (and of the conditions re-read, `ConditionsReread`);
///   `timerFired`, clock changes and the shutdown reach every machine.
/// - **Provider calls are runs.** A widget reload asks the scheduler for a run of the family's
///   provider identifier (`<job>#<family>`) now, so it has an allowance, an expiration, a results
///   channel and a history like any run; its end comes back as the provider's result.
/// - **Results drive the other machines.** A run's results lines (`ResultLine`) carry timelines,
///   explicit reloads and activity events; a failed or expired run ends the activities it owns.
/// - **Records.** The side machines' durable changes become `putRecord`/`deleteRecord` changes
///   (JSON text), committed with the event's other changes before anything is acted on.
package struct Machines: Sendable {
    package var scheduler: SchedulerCore
    package var timelines = TimelineMachine()
    package var activities = ActivityMachine()
    /// Each process run's results channel and leader's exit (`ResultsChannels`).
    package var results = ResultsChannels()
    /// Failure and recovery notifications: which runs notify, retries on the one timer.
    package var notifications = NotificationMachine()
    /// Exit facts of runs ending in the event being settled (for their notification).
    private var endExits: [Int64: (exitStatus: Int32?, signal: Int32?)] = [:]
    /// Provider identifier -> the widget (kind and family) whose timelines it provides.
    package var providers: [String: WidgetID] = [:]
    /// Timeline templates (issue 23) by identifier: their definition and spec (its widget's kind
    /// a pattern); each instance's widget is declared here (`Machines+InstanceWidgets`).
    package var widgetTemplates: [String: (definition: TaskDefinition, spec: TemplateSpec)] = [:]
    /// Instance identifier -> the kind of its widget, for the instances of timeline templates.
    package var instanceWidgets: [String: String] = [:]
    /// Staging templates whose `stage-playlist.widget` is a kind pattern (issue 23), by
    /// identifier: an instance whose kind another instance of the template already reloads is
    /// refused at its add (`Machines+StagedKinds`).
    package var stagingTemplates: [String: TemplateSpec] = [:]
    /// "template NUL kind" -> the instance whose runs reload that kind; nil until first needed
    /// after a restore or a staging template's (re)declaration (rebuilt from the instances).
    var stagedKinds: [String: String]?
    /// The periodic re-read of conditions while the scheduler watches them: one of the deadlines.
    package var conditionsReread: ConditionsReread
    /// The instant the one timer is armed for.
    package private(set) var armed: Instant?
    /// Counts the events handed to the timeline and activity machines: their state (and so
    /// every invariant of theirs) can only have changed when it moved.
    package internal(set) var sideRevision: UInt64 = 0
    var timelineEffects: [TimelineEffect] = []
    var activityEffects: [ActivityEffect] = []
    private var ended: [(runID: Int64, identifier: String, outcome: Outcome, results: [String])] = []
    /// The restore event is being settled: the runs its scheduler ends as interrupted were in
    /// flight before it, and a provider's was already failed by the timeline machine's restore.
    private var settlingRestore = false
    /// Set up once, never changed.
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
    static let decoder = JSONDecoder()
    var encoder: JSONEncoder { Self.encoder }
    var decoder: JSONDecoder { Self.decoder }

    package init(scheduler: SchedulerCore, conditionsReread interval: Duration = ConditionsReread.defaultInterval) {
        self.scheduler = scheduler
        conditionsReread = ConditionsReread(interval: interval)
    }

    var stores: Bool { scheduler.configuration.emitsStateChanges }
    private var hasWidgets: Bool { !timelines.definitions.isEmpty }

    // MARK: Events

    /// Routes a scheduler event to the machines it concerns; appends the effects in order.
    package mutating func handle(_ event: SchedulerEvent, at now: Instant, into effects: inout [SchedulerEffect]) {
        let start = effects.count
        var rearm = false
        if stores { recordWorld(event, at: now, into: &effects) }
        switch event {
        case let .restore(state):
            // Instances' widgets are declared before their saved records are handed back.
            if !widgetTemplates.isEmpty { declareRestoredInstanceWidgets(state.instances, at: now, into: &effects) }
            stagedKinds = nil
            // The side machines first: the scheduler's restore ends interrupted runs, and an
            // interrupted provider run is a failed reload of a widget that must already be known.
            // A provider call whose run never started (its request is still pending: a shard
            // handed over while it was held, or refreshd stopped before the launch) is not
            // interrupted: its request launches and delivers (issue 32).
            let waiting = Set(state.pending.compactMap { providers[$0.identifier] })
            restoreSideMachines(state.records, providersWaiting: waiting, at: now, into: &effects)
            settlingRestore = true
        case let .addInstance(record) where widgetTemplates[record.template] != nil || stagingTemplates[record.template] != nil:
            do throws(InstanceError) {
                try addingInstance(record, at: now, into: &effects)
            } catch {
                effects.append(.log(.instance(.refused(error))))
            }
            settle(from: start, at: now, rearm: rearm, into: &effects)
            return
        default:
            break
        }
        scheduler.handle(event, at: now, into: &effects)
        switch event {
        case .timerFired:
            armed = nil  // the one timer fired: nothing is armed until the next deadline is
            // Only a machine with a deadline due can act on a wake-up.
            if let due = timelines.nextDeadline, due <= now { feed(.timerFired, at: now, into: &effects) }
            if let due = activities.nextDeadline, due <= now { feed(activity: .timerFired, at: now, into: &effects) }
            if conditionsReread.timerFired(at: now) { effects.append(.readConditions) }
            if let due = results.nextDeadline, due <= now { results.timerFired(at: now, into: &effects) }
            if let due = notifications.nextDeadline, due <= now { notifications.timerFired(at: now, into: &effects) }
        case let .clockChanged(expected):
            rearm = true
            conditionsReread.clockChanged(at: now)
            if hasWidgets { feed(.clockChanged, at: now, into: &effects) }
            if !activities.activities.isEmpty { feed(activity: .clockChanged(expected: expected), at: now, into: &effects) }
        case .shutdown:
            if hasWidgets { feed(.shutdown, at: now, into: &effects) }
        case let .removeInstance(template, key):
            endActivities(ofRemoved: InstanceName.identifier(template: template, key: key), at: now, into: &effects)
            if !instanceWidgets.isEmpty { withdrawRemovedInstanceWidget(InstanceName.identifier(template: template, key: key), at: now, into: &effects) }
        case let .declareTemplate(definition, spec):
            if spec.widget != nil || widgetTemplates[definition.identifier] != nil {
                templateDeclared(definition, spec, at: now, into: &effects)
            }
            if spec.stagedKind != nil || stagingTemplates[definition.identifier] != nil {
                stagingTemplates[definition.identifier] = spec.stagedKind != nil ? spec : nil
                stagedKinds = nil
            }
        case let .undeclareTemplate(identifier):
            if widgetTemplates[identifier] != nil { templateWithdrawn(identifier, at: now, into: &effects) }
            if stagingTemplates.removeValue(forKey: identifier) != nil { stagedKinds = nil }
        default:
            break
        }
        settle(from: start, at: now, rearm: rearm, into: &effects)
        settlingRestore = false
    }

    /// A call that can be refused (a submit through the API, an operator's launch-now): the
    /// scheduler's own effects, then the composition's bookkeeping.
    package mutating func withScheduler<E: Error>(
        at now: Instant, into effects: inout [SchedulerEffect],
        _ body: (inout SchedulerCore, inout [SchedulerEffect]) throws(E) -> Void
    ) throws(E) {
        let start = effects.count
        try body(&scheduler, &effects)
        settle(from: start, at: now, rearm: false, into: &effects)
    }

    /// A timeline event (declarations, explicit reloads from the API).
    package mutating func handle(timeline event: TimelineEvent, at now: Instant, into effects: inout [SchedulerEffect]) {
        let start = effects.count
        // A reload asked from outside (the operator's `ctl reload`, the dashboard, an intent):
        // an order the replay gives back (`OperatorOrder`).
        if case let .reload(kind, reason) = event, hasWidgets { effects += worldRecord(.order(.reloadWidgets(kind: kind, reason: reason)), at: now) }
        feed(event, at: now, into: &effects)
        settle(from: start, at: now, rearm: false, into: &effects)
    }

    /// An activity event (the API, a live result line); a refusal is returned and logged.
    @discardableResult
    package mutating func handle(activity event: ActivityEvent, at now: Instant, into effects: inout [SchedulerEffect]) -> ActivityError? {
        let start = effects.count
        let error = feed(activity: event, at: now, into: &effects)
        settle(from: start, at: now, rearm: false, into: &effects)
        return error
    }

    /// A results-channel event (`ResultsChannels`): its decisions are effects like any other;
    /// a grace that begins re-arms the one timer.
    package mutating func handle(results body: (inout ResultsChannels, Instant, inout [SchedulerEffect]) -> Void,
                         at now: Instant, into effects: inout [SchedulerEffect]) {
        let before = results.nextDeadline
        body(&results, now, &effects)
        // Only the one timer can change (the body adds no other effect): most events move no
        // grace, or one that is not the earliest deadline.
        guard results.nextDeadline != before else { return }
        settle(from: effects.count, at: now, rearm: false, into: &effects)
    }

    /// The host's report of one notification's delivery attempt: deleted once delivered,
    /// retried or given up (`NotificationMachine`). A report after the stop is not recorded:
    /// refreshd is ending (its store closes); the record stays and the next start sends it again.
    package mutating func handle(notification id: String, _ outcome: NotificationOutcome, at now: Instant,
                                 into effects: inout [SchedulerEffect]) {
        guard !scheduler.stoppedReported else { return }
        let start = effects.count
        notifications.finished(id, outcome, at: now, stores: stores, into: &effects)
        settle(from: start, at: now, rearm: false, into: &effects)
    }

    /// A line a run of `writer` wrote while it runs: applied now when it is a live line (an
    /// activity event, an explicit reload). False for other lines: they are kept for the run's end.
    package mutating func handleLive(_ line: ResultLine, from writer: String, at now: Instant,
                                     into effects: inout [SchedulerEffect]) -> Bool {
        guard line.isLive else { return false }
        let start = effects.count
        apply(line, from: writer, at: now, into: &effects)
        settle(from: start, at: now, rearm: false, into: &effects)
        return true
    }

    /// The scheduler's invariants. Mutating only so that the call borrows the scheduler in
    /// place: read through the runtime's stored property, the core (a large struct) was copied
    /// for every check, after every simulated step.
    package mutating func checkSchedulerInvariants() -> [InvariantViolation] { scheduler.checkInvariants() }
    /// The scheduler's invariants at the cost of what changed (`checkInvariantsIncrementally`).
    package mutating func checkSchedulerInvariantsIncrementally() -> [InvariantViolation] {
        scheduler.checkInvariantsIncrementally()
    }

    /// The earliest instant at which any machine must act without an outside event.
    package var nextDeadline: Instant? {
        Self.earlier(Self.earlier(Self.earlier(scheduler.nextWakeUp, conditionsReread.due), results.nextDeadline),
                     Self.earlier(Self.earlier(timelines.nextDeadline, activities.nextDeadline), notifications.nextDeadline))
    }

    private static func earlier(_ a: Instant?, _ b: Instant?) -> Instant? {
        guard let a else { return b }
        guard let b else { return a }
        return a < b ? a : b
    }

    // MARK: Composition

    /// After an event: hands run ends to the side machines (which may ask for provider runs,
    /// which may end at once), drops the machines' own timer effects and arms the one timer.
    mutating func settle(from start: Int, at now: Instant, rearm: Bool, into effects: inout [SchedulerEffect]) {
        var index = start
        while true {
            var kept = index
            for i in index..<effects.count {
                switch effects[i] {
                case let .ended(runID, identifier, outcome, results):
                    ended.append((runID, identifier, outcome, results))
                case let .launch(order) where !notifications.notifiers.isEmpty:
                    notifications.launched(order)
                    effects.swapAt(kept, i)
                    kept += 1
                case let .persist(.runEnded(runID, _, _, _, exitStatus, signal, _, _, _)) where !notifications.notifiers.isEmpty:
                    endExits[runID] = (exitStatus, signal)
                    effects.swapAt(kept, i)
                    kept += 1
                case let .log(.finished(runID, _, _, exit, _, _, _)) where !notifications.notifiers.isEmpty:
                    if endExits[runID] == nil { endExits[runID] = Self.exitFacts(exit) }
                    effects.swapAt(kept, i)
                    kept += 1
                case .armTimer, .disarmTimer:
                    break
                case let .watchConditions(on):
                    conditionsReread.watching(on, at: now)
                    effects.swapAt(kept, i)
                    kept += 1
                default:
                    effects.swapAt(kept, i)
                    kept += 1
                }
            }
            effects.removeSubrange(kept...)
            index = kept
            guard !ended.isEmpty else { break }
            // Swapped out and back (nothing appends to `ended` while the batch runs): the list
            // keeps its capacity instead of an allocation for every run's end.
            var batch: [(runID: Int64, identifier: String, outcome: Outcome, results: [String])] = []
            swap(&batch, &ended)
            for end in batch { runEnded(end, at: now, into: &effects) }
            batch.removeAll(keepingCapacity: true)
            swap(&batch, &ended)
        }
        let next = nextDeadline
        if next != armed || rearm {
            armed = next
            effects.append(next.map { .armTimer(at: $0) } ?? .disarmTimer)
        }
    }

    /// A run ended: a provider's reload, or a job whose results and outcome concern the others.
    private mutating func runEnded(_ end: (runID: Int64, identifier: String, outcome: Outcome, results: [String]),
                                   at now: Instant, into effects: inout [SchedulerEffect]) {
        if !notifications.notifiers.isEmpty {
            let exit = endExits.removeValue(forKey: end.runID)
            notifications.runEnded(runID: end.runID, job: end.identifier, outcome: end.outcome,
                                   exitStatus: exit?.exitStatus ?? nil, signal: exit?.signal ?? nil,
                                   at: now, stores: stores, into: &effects)
        }
        var timeline: (Timeline, Bool)?
        var problem: String?
        var waiting: String?
        var instanceLines: [InstanceLines] = []
        let namespace = end.results.isEmpty ? "" : scheduler.definitions[end.identifier]?.namespace ?? "default"
        for text in end.results {
            let line = ResultLine.fastParse(text, owner: end.identifier, namespace: namespace, now: now)
                ?? ResultLine.parse(text, owner: end.identifier, namespace: namespace, now: now)
            switch line {
            case let .instances(lines):
                if end.outcome == .success {
                    instanceLines.append(lines)
                } else {
                    effects.append(.log(.instance(.ignoredLine(owner: end.identifier, reason: "its run \(end.runID) ended \(end.outcome.rawValue)"))))
                }
            case let .badInstances(reason):
                effects.append(.log(.instance(.ignoredLine(owner: end.identifier, reason: reason))))
            case let .timeline(t, fetched):
                if timeline == nil, problem == nil { timeline = (t, fetched) }
            case let .badTimeline(reason):
                if timeline == nil, problem == nil { problem = reason }
            case let .waiting(reason):
                if waiting == nil { waiting = reason }
            default:
                apply(line, from: end.identifier, at: now, into: &effects)
            }
        }
        if !instanceLines.isEmpty { applyInstances(instanceLines, sentAs: "instances-of-run-\(end.runID)", at: now, into: &effects) }
        if !providers.isEmpty, let widget = providers[end.identifier] {
            // A provider run the restore ends as interrupted is the call the timeline machine's
            // own restore already failed and asked again (the widget's record said it was in
            // flight). Its end is not that new call's: delivered, it failed the new call too, and
            // a reload due meanwhile was asked beside it, so two reloads were counted for one
            // provider run (found by the cluster fault loop at a takeover, issue 32).
            if settlingRestore, end.outcome == .interrupted { return }
            let result: ProviderResult
            switch (end.outcome, timeline, problem) {
            case (.success, let (t, fetched)?, _):
                switch TimelineLimits().check(t) {
                case let .success(checked): result = .timeline(checked, upstreamFetch: fetched)
                case let .failure(error): result = .failed(reason: "timeline refused: \(error)", expired: false)
                }
            case (.success, nil, let problem?):
                result = .failed(reason: "malformed timeline: \(problem)", expired: false)
            case (.success, nil, nil) where waiting != nil:
                result = .waiting(reason: waiting ?? "")
            case (.success, nil, nil):
                result = .failed(reason: "no timeline on the results channel", expired: false)
            case (.expired, _, _):
                result = .failed(reason: "provider expired (allowance used up)", expired: true)
            default:
                result = .failed(reason: "provider \(end.outcome.rawValue)", expired: false)
            }
            feed(.providerFinished(widget, result), at: now, into: &effects)
        } else if end.outcome != .success, end.outcome != .interrupted, !activities.activities.isEmpty,
                  end.identifier != ActivityRequest.operatorOwner {
            // A job that failed or expired ends its activities. An interrupted run was refreshd's
            // doing (a stop, a crash): the job is retried and may take its activity up again;
            // until then it goes stale by its stale date, as on a phone whose app was killed.
            feed(activity: .ownerFinished(owner: end.identifier, outcome: end.outcome,
                                          reason: "run \(end.runID) \(end.outcome.rawValue)"),
                 at: now, into: &effects)
        }
    }

    /// A results line of a run of `writer` that drives a machine (not a timeline: those belong
    /// to their run's end).
    private mutating func apply(_ line: ResultLine, from writer: String, at now: Instant, into effects: inout [SchedulerEffect]) {
        switch line {
        case let .reloadTimelines(kind):
            feed(.reload(kind: kind, reason: .explicitJob), at: now, into: &effects)
        case .reloadAllTimelines:
            feed(.reload(kind: nil, reason: .explicitJob), at: now, into: &effects)
        case let .activity(event):
            if let refusal = ownership(of: event, by: writer) {
                effects.append(.log(.activity(.refused(refusal))))
                return
            }
            feed(activity: event, at: now, into: &effects)
        case let .badActivity(reason):
            effects.append(.log(.activity(.refused(.invalidField(id: "?", field: "results line", expected: reason)))))
        case .timeline, .badTimeline, .waiting, .other, .instances, .badInstances:
            break  // instance lines are applied at the run's end (`applyInstances`)
        }
    }

    /// Issue 23: an activity an instance's run started is that instance's. An update or end of
    /// it in a line of any other run (another instance of the template, another job) is refused,
    /// nothing changed; the library's and the operator's calls are not lines and stay allowed.
    /// A job's activities stay open to other jobs' lines, as before templates. Checked before
    /// the activity machine, which knows owners but not who wrote a line.
    func ownership(of event: ActivityEvent, by writer: String) -> ActivityError? {
        let id: String
        switch event {
        case let .update(update): id = update.id
        case let .end(activityID, _, _, _): id = activityID
        default: return nil
        }
        guard let owner = activities.activities[id]?.owner, owner != writer, InstanceName.split(owner) != nil else { return nil }
        return .notOwned(id: id, event: event.kind, owner: owner, writer: writer)
    }
}

extension Machines {
    /// What the world did, for `simulate --replay` (`WorldEvent`): a start (the restore), the
    /// start of a stop, a clock step, conditions that changed. Before the scheduler sees the
    /// event, so a change of conditions is one against what it knew.
    mutating func recordWorld(_ event: SchedulerEvent, at now: Instant, into effects: inout [SchedulerEffect]) {
        let what: WorldEvent.What
        switch event {
        case .restore: what = .started
        case .shutdown where !scheduler.isStopping: what = .stopping
        case let .clockChanged(expected): what = .clockStep(expected: expected)
        case let .conditionsChanged(new) where new != scheduler.conditions: what = .conditions(new)
        // Cancels come from outside only (an operator, an embedding app): orders, when they
        // cancel something.
        case let .cancel(identifier) where scheduler.pending(identifier) != nil: what = .order(.cancel(identifier))
        case let .cancelAll(namespace) where scheduler.pendingCount > 0: what = .order(.cancelAll(namespace: namespace))
        default: return
        }
        effects.append(.persist(.putRecord(WorldEvent(at: now, what: what).record)))
    }

    /// The record of `what` at `now` (none when the machines keep no state): for an event the
    /// engine applies in steps, like a reload of the job files, in the same transaction.
    /// A reload that changed no job is not recorded.
    package func worldRecord(_ what: WorldEvent.What, at now: Instant) -> [SchedulerEffect] {
        if case let .reload(changed) = what, changed.isEmpty { return [] }
        return stores ? [.persist(.putRecord(WorldEvent(at: now, what: what).record))] : []
    }
}
