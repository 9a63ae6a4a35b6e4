@_spi(Benchmarks) import RefreshdCore

extension WhyFacts {
    /// Resolves what the identifier names among `jobs` (nil: the job files could not be read)
    /// and the activities, and adds what that subject needs: a timeline job's families' widgets
    /// and its providers' runs (from `runs`, newest first), a provider's widget, the activities a
    /// job owns or the one named, or suggestions for an unknown identifier. The live refreshd and
    /// the state files both end here, so `why` answers the same either way.
    package mutating func addSubject(jobs: [JobSpec]?, timelines: TimelineSnapshot, activities: ActivitySnapshot,
                                    runs: [RunRecord]) {
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
            let providers = Set(families.map { WidgetSpec.providerIdentifier(job: id, family: $0) })
            recentRuns = runs.filter { providers.contains($0.identifier) }.prefix(5).map(StatusReport.Run.init)
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

extension RefreshRuntime {
    /// What `why` needs from the live runtime: its core's snapshot, definitions, store, machines
    /// and the identifier's `recent` observations (oldest first).
    package func whyFacts(_ id: String, recent: [RuntimeObservation]) throws -> WhyFacts {
        let core = snapshot()
        let definition = definitions[id]
        let allRuns = try recentRuns(limit: 500)
        // Its own, however many runs of other jobs came since (a job failing for days among
        // busy ones had none in the 500 latest and read "It has not run yet": issue 36).
        let runs = try recentRuns(of: id, limit: 5).map(StatusReport.Run.init)
        let missed = try dailyCounters(days: 7).filter { $0.identifier == id && $0.missed > 0 }
            .map { (day: $0.day, count: $0.missed) }
        let timelines = timelineSnapshot()
        let widget = timelines.widgets.first {
            WidgetSpec.providerIdentifier(job: $0.job, family: $0.family.rawValue) == id
        }
        var facts = WhyFacts(identifier: id, now: now, live: true, definition: definition,
                             knownUndeclared: definition == nil,
                             pending: core.pending.first { $0.identifier == id },
                             running: core.runs.first { $0.identifier == id }, runsInFlight: core.runs,
                             maxConcurrentRuns: options.configuration.maxConcurrentRuns,
                             conditions: core.conditions,
                             failureStreak: core.failureStreaks.first { $0.identifier == id }?.count ?? 0,
                             recentRuns: Array(runs), missedByDay: missed,
                             recentEvents: recent, widget: widget)
        facts.addSubject(jobs: Array(jobsInForce.values), timelines: timelines, activities: activitySnapshot(), runs: allRuns)
        facts.paused = WhyFacts.pause(of: id, among: core.paused ?? [])
        if facts.isTemplate { facts.templateInstances = instances(of: id)?.count }
        if facts.instanceOf == nil, let record = instance(id) { facts.instanceOf = record.template }
        return facts
    }
}
