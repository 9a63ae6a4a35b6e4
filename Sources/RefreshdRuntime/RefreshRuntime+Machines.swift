import RefreshdCore

extension RefreshRuntime {
    // MARK: Widgets

    /// Declares a timeline job's widget: one provider identifier per family (its own namespace,
    /// `widget.<kind>`, so the families' reloads never count against other jobs' pending limits),
    /// then the widget itself. Before the saved state is restored this only records them.
    func declareWidget(_ spec: JobSpec, _ widget: WidgetSpec) {
        let definition = spec.definition
        var families: Set<WidgetFamily> = []
        for name in widget.families {
            guard let family = WidgetFamily(rawValue: name) else { continue }
            families.insert(family)
            let provider = widget.providerDefinition(of: definition, family: name)
            let identifier = provider.identifier
            let handler: TaskHandler
            switch widget.provider {
            case .command:
                handler = .command(widget.providerCommand(spec.command, family: name, sharedContainer: options.sharedContainer))
            case let .action(action):
                handler = .action(options.actions.action(for: action))
            }
            if !register(provider, handler: handler) { redeclare(provider, handler: handler) }
            lock.withLock { machines.providers[identifier] = WidgetID(kind: widget.kind, family: family) }
        }
        feedTimeline(.declare(widget.definition(job: definition, families: families)))
    }

    /// Withdraws a timeline job's widget and its provider identifiers.
    func withdrawWidget(_ spec: JobSpec, _ widget: WidgetSpec, keeping families: Set<String> = []) {
        for name in widget.families where !families.contains(name) {
            let identifier = WidgetSpec.providerIdentifier(job: spec.identifier, family: name)
            withdraw(identifier)
            lock.withLock { machines.providers[identifier] = nil }
        }
        if families.isEmpty { feedTimeline(.undeclare(kind: widget.kind)) }
    }

    /// One timeline event through the machines, committed, its effects queued (before the
    /// restore too: declarations must precede it).
    func feedTimeline(_ event: TimelineEvent) { perform(.timeline(event)) }

    /// Asks every family of a widget kind for a new timeline, like WidgetKit's
    /// `reloadTimelines(ofKind:)`. Over budget the reload is deferred, never dropped.
    package func reloadTimelines(ofKind kind: String, reason: ReloadReason = .explicitAPI) {
        lock.withLock { startIfNeeded() }
        feedTimeline(.reload(kind: kind, reason: reason))
    }

    /// Asks every widget for a new timeline, like WidgetKit's `reloadAllTimelines()`.
    package func reloadAllTimelines(reason: ReloadReason = .explicitAPI) {
        lock.withLock { startIfNeeded() }
        feedTimeline(.reload(kind: nil, reason: reason))
    }

    /// Every widget: the entry shown, the next switch and reload, budget, staleness.
    package func timelineSnapshot() -> TimelineSnapshot {
        lock.withLock { machines.timelines.snapshot(at: clock()) }
    }

    /// The timeline machine's invariants, checked now (empty when all hold).
    package func checkTimelineInvariants() -> [TimelineViolation] { lock.withLock { machines.timelines.checkInvariants() } }

    /// How many events the timeline and activity machines have been handed: while it stays the
    /// same, their state (and every invariant of theirs, which reads only their state) has not
    /// changed. The simulator checks them again only when it moves.
    package var sideMachinesRevision: UInt64 { lock.withLock { machines.sideRevision } }

    /// True while no widget is declared and no activity exists: nothing for their checks to do.
    package var sideMachinesIdle: Bool {
        lock.withLock { machines.timelines.definitions.isEmpty && machines.activities.activities.isEmpty }
    }

    // MARK: Live activities

    /// Starts a live activity now or at `request.startAt`, like ActivityKit's `request`.
    /// - Throws: the refusal (activities disabled, payload over 4 KB, too many at once...).
    package func requestActivity(_ request: ActivityRequest) throws(ActivityError) {
        try feedActivity(.request(request))
    }

    /// New content and stale date for an activity, like ActivityKit's `update`.
    package func updateActivity(_ update: ActivityUpdate) throws(ActivityError) {
        try feedActivity(.update(update))
    }

    /// Ends an activity with final content and a dismissal policy, like ActivityKit's `end`.
    package func endActivity(_ id: String, content: String? = nil, policy: DismissalPolicy = .default) throws(ActivityError) {
        try feedActivity(.end(id: id, content: content, policy: policy, timestamp: clock()))
    }

    /// Changes the activity settings (config reload); deadlines follow the new limits at once.
    package func setActivitySettings(_ settings: ActivitySettings) {
        try? feedActivity(.settingsChanged(settings))
    }

    func feedActivity(_ event: ActivityEvent) throws(ActivityError) {
        if case let .refused(.activity(error)) = perform(.activity(event)).reply { throw error }
    }

    /// Every activity: state and since when, progress, stale date, dismissal, held updates.
    package func activitySnapshot() -> ActivitySnapshot { lock.withLock { machines.activities.snapshot() } }

    /// The activity machine's invariants, checked now (empty when all hold).
    package func checkActivityInvariants() -> [String] { lock.withLock { machines.activities.checkInvariants() } }

    // MARK: Results while a run goes on

    /// A complete line a running command wrote to its results channel (any thread). A live line
    /// (an activity event, an explicit reload) is taken now and true is returned; any other
    /// line is left for the run's end.
    ///
    /// Taken lines are applied together at the next drain (a later loop turn on the real host,
    /// at once in the simulator, whose drain is immediate) or before the next event, whichever
    /// comes first, in one commit: a job writing a burst of lines costs one fsync per burst,
    /// not one per line, and timers get their turn between bursts.
    /// Hosts hand whole reads to `runResultsRead`, which offers each line here.
    package func runResultLine(_ order: LaunchOrder, _ line: String) -> Bool {
        guard case let .liveLine(taken, first) = perform(.resultLine(order, line)).reply else { return false }
        if first { host?.scheduleDrain() }
        return taken
    }

    /// Under `lock`: applies the live lines taken since the last time, in order, in one commit.
    func applyLiveBacklog() {
        guard !machine.liveBacklog.isEmpty else { return }
        scratch.removeAll(keepingCapacity: true)
        _ = machine.handle(.liveLines, at: clock(), into: &scratch)
        _ = commit(scratch)
    }
}
