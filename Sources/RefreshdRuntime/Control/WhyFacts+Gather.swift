import RefreshdCore

/// `why`'s facts, gathered once for every asker (issue 37: one gathering): the control socket of
/// a running refreshd, its dashboard, the CLI with refreshd stopped (the state file) and a
/// cluster node (a shard's store in the database). What differs is only where the facts are:
/// a store always, and a live scheduler's memory when one answers.
extension WhyFacts {
    /// What only a running scheduler knows, taken from its memory: its core's snapshot (pending
    /// requests with their place, runs in flight, conditions, streaks, pauses), its definitions,
    /// its machines and its latest observations (oldest first).
    package struct Memory: Sendable {
        package var snapshot: SchedulerSnapshot
        package var definitions: TaskDefinitions
        package var timelines: TimelineSnapshot
        package var activities: ActivitySnapshot
        package var recent: [RuntimeObservation]
        package var maxConcurrentRuns: Int

        package init(snapshot: SchedulerSnapshot, definitions: TaskDefinitions, timelines: TimelineSnapshot,
                     activities: ActivitySnapshot, recent: [RuntimeObservation], maxConcurrentRuns: Int) {
            (self.snapshot, self.definitions, self.timelines, self.activities, self.recent, self.maxConcurrentRuns)
                = (snapshot, definitions, timelines, activities, recent, maxConcurrentRuns)
        }
    }

    /// `why`'s facts for `id`: its runs (its own five latest, however many runs of other jobs
    /// came since) and missed slots of 7 days from `store` (`counters`: those 7 days' counters
    /// when the caller read them already); its request, run in flight, streak, pause, widgets
    /// and activities from `memory` when a scheduler is live, else from the store and the saved
    /// machines. `jobs`: the job files in force (nil when they could not be read: nothing is then
    /// said to be undeclared). Without `memory`: `machines` are the widgets and activities when
    /// the caller read the saved machines already (a page of many jobs), and `source` says where
    /// the store is (the state files unless said).
    package static func gather(_ id: String, store: any StateStoring, jobs: [JobSpec]?, memory: Memory?,
                               counters: [DailyCounter]? = nil, machines: (TimelineSnapshot, ActivitySnapshot)? = nil,
                               source: Source? = nil, now: Instant) throws -> WhyFacts {
        let runs = try store.recentRuns(of: id, limit: 5)
        let missed = try (counters ?? store.dailyCounters(days: 7)).filter { $0.identifier == id && $0.missed > 0 }
            .map { (day: $0.day, count: $0.missed) }
        var facts: WhyFacts
        let timelines: TimelineSnapshot, activities: ActivitySnapshot, paused: [SchedulerSnapshot.Paused]
        if let memory {
            let core = memory.snapshot
            let definition = memory.definitions[id]
            facts = WhyFacts(identifier: id, now: now, live: true, definition: definition,
                             knownUndeclared: definition == nil,
                             pending: core.pending.first { $0.identifier == id },
                             running: core.runs.first { $0.identifier == id }, runsInFlight: core.runs,
                             maxConcurrentRuns: memory.maxConcurrentRuns, conditions: core.conditions,
                             failureStreak: core.failureStreaks.first { $0.identifier == id }?.count ?? 0,
                             recentRuns: runs.map(StatusReport.Run.init), missedByDay: missed,
                             recentEvents: memory.recent.filter { $0.identifier == id },
                             widget: memory.timelines.widgets.first {
                                 WidgetSpec.providerIdentifier(job: $0.job, family: $0.family.rawValue) == id
                             })
            (timelines, activities, paused) = (memory.timelines, memory.activities, core.paused ?? [])
        } else {
            // As the live core knows it: a plain job's definition, or an instance's (its
            // template's under its own name); a timeline job is not scheduled itself (its
            // providers are).
            let definition = jobs.flatMap { jobs in
                jobs.first { $0.identifier == id && $0.template == nil && $0.widget == nil }?.definition
                    ?? InstanceName.split(id).flatMap { split in jobs.first { $0.identifier == split.template && $0.template != nil }?.definition }
            }
            // Each by key: a reader of a million instances' store reads one of each.
            let pending = try store.pendingRequest(of: id)
            facts = WhyFacts(identifier: id, now: now, live: false, definition: definition,
                             knownUndeclared: jobs != nil && definition == nil && pending == nil && runs.isEmpty,
                             pending: pending.map(SchedulerSnapshot.Pending.init),
                             failureStreak: try store.states(of: [id])[id]?.failureStreak ?? 0,
                             recentRuns: runs.map(StatusReport.Run.init), missedByDay: missed)
            facts.source = source ?? .stateFiles
            if facts.source == .database, let run = runs.first, run.ended == nil {
                // Its leader runs it now (with refreshd stopped, a run without an end was cut
                // short and is settled at the next start).
                facts.running = SchedulerSnapshot.Run(runID: run.runID, identifier: id, kind: run.kind, started: run.started,
                                                      deadline: run.deadline, attempt: run.attempt, phase: .running,
                                                      stoppedByShutdown: false)
            }
            // The widgets of the job files, and the one of the instance `id` names if it has
            // one (not every instance's: a million would be read for one answer).
            if let machines {
                (timelines, activities) = machines
            } else {
                var instances: [InstanceRecord] = []
                if let split = InstanceName.split(id), let record = try store.instance(of: split.template, key: split.key) { instances.append(record) }
                let saved = try SavedMachineState(store: store)
                timelines = saved.timelineSnapshot(at: now, definitions: WidgetSpec.definitions(of: jobs ?? [], instances: instances))
                activities = saved.activitySnapshot(at: now)
            }
            paused = try StatusReport.paused(in: store)
        }
        try facts.addSubject(jobs: jobs, timelines: timelines, activities: activities) { try store.recentRuns(of: $0, limit: 5) }
        facts.paused = WhyFacts.pause(of: id, among: paused)
        if facts.isTemplate { facts.templateInstances = try store.instanceCount(of: id) }
        // An instance whose template no file declares any more is still its template's.
        if facts.instanceOf == nil, let split = InstanceName.split(id), try store.instance(of: split.template, key: split.key) != nil {
            facts.instanceOf = split.template
        }
        return facts
    }

    /// Resolves what the identifier names among `jobs` (nil: the job files could not be read)
    /// and the activities, and adds what that subject needs: a timeline job's families' widgets
    /// and its providers' latest runs (`runsOf`: an identifier's, newest first), a provider's
    /// widget, the activities a job owns or the one named, or suggestions for an unknown
    /// identifier.
    package mutating func addSubject(jobs: [JobSpec]?, timelines: TimelineSnapshot, activities: ActivitySnapshot,
                                    runsOf: (String) throws -> [RunRecord]) rethrows {
        let id = identifier
        subject = WhySubject.resolve(id, jobs: jobs, activities: activities)
        if let (template, key) = InstanceName.split(id), let spec = jobs?.first(where: { $0.identifier == template && $0.template != nil }) {
            instanceOf = template
            // An instance of a timeline template (issue 23) is its own widget, run only by its
            // families' providers: explained as a timeline job is. Its kind is the saved widget's
            // (any values), else made from the key (one parameter: the key is the value).
            if let widget = spec.template?.widget {
                let kind = timelines.widgets.first { $0.job == id }?.kind
                    ?? spec.template?.instanceWidget(Dictionary(uniqueKeysWithValues: (spec.template?.parameters ?? []).map { ($0, key) }))?.kind
                if let kind { subject = .timeline(kind: kind, families: widget.families) }
            }
        }
        if let job = jobs?.first(where: { $0.identifier == id }), job.template != nil {
            isTemplate = true
            knownUndeclared = false
        }
        if subject == .unknown, pending != nil || running != nil || !recentRuns.isEmpty {
            // Declared no more (its file was removed), but refreshd still has its request or
            // history: explained as a job that no file declares.
            subject = .job
            knownUndeclared = true
        }
        switch subject {
        case let .timeline(kind, families):
            widgets = timelines.widgets.filter { $0.kind == kind && families.contains($0.family.rawValue) }
            // Each provider's own latest, however many runs of other jobs came since.
            var runs: [RunRecord] = []
            for family in families { runs += try runsOf(WidgetSpec.providerIdentifier(job: id, family: family)) }
            recentRuns = runs.sorted { ($0.started, $0.runID) > ($1.started, $1.runID) }.prefix(5).map(StatusReport.Run.init)
            self.activities = activities.activities.filter { $0.owner == id }
            knownUndeclared = false
        case let .provider(_, kind, family):
            widget = widget ?? timelines.widgets.first { $0.kind == kind && $0.family.rawValue == family }
            knownUndeclared = false
        case .activity:
            self.activities = activities.activities.filter { $0.id == id }
            dismissed = activities.recentlyDismissed.filter { $0.id == id }
            knownUndeclared = false
        case .job:
            self.activities = activities.activities.filter { $0.owner == id }
            dismissed = activities.recentlyDismissed.filter { $0.owner == id }
        case .unknown:
            suggestions = WhySubject.suggestions(for: id, jobs: jobs ?? [], activities: activities)
        }
    }
}
