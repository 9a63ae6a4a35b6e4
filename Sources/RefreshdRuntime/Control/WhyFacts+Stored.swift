@_spi(Benchmarks) import RefreshdCore

/// What an answer read from a store knows, gathered once for every reader without refreshd's
/// memory: the CLI with refreshd stopped (the state file) and a cluster node (a shard's store in
/// the database). Both wrote it themselves before (issue 32: one fact, gathered once).
extension WhyFacts {
    /// `why`'s facts for `id` from `store`: its pending request, its last five runs, its
    /// failure streak, its missed slots of the last 7 days, its pause, and what else the
    /// identifier may name (a widget, an activity, a template) from the saved machines.
    /// `jobs`: the job files in force (nil when they could not be read: nothing is then said
    /// to be undeclared).
    package static func stored(_ id: String, in store: any StateStoring, jobs: [JobSpec]?, now: Instant) throws -> WhyFacts {
        // As the live core knows it: a plain job's definition, or an instance's (its template's
        // under its own name); a timeline job is not scheduled itself (its providers are).
        let definition = jobs.flatMap { jobs in
            jobs.first { $0.identifier == id && $0.template == nil && $0.widget == nil }?.definition
                ?? InstanceName.split(id).flatMap { split in jobs.first { $0.identifier == split.template && $0.template != nil }?.definition }
        }
        let pending = try store.pendingRequests().first { $0.identifier == id }
        // The latest 500 runs without their output (what the subject rules read); its own five
        // however many runs of other jobs came since (issue 36).
        let allRuns = try store.recentRuns(limit: 500, before: nil, withOutput: false)
        let runs = try store.recentRuns(of: id, limit: 5)
        let missed = try store.dailyCounters(days: 7).filter { $0.identifier == id && $0.missed > 0 }
        let streak = try store.failureStreaks()[id] ?? 0
        var facts = WhyFacts(identifier: id, now: now, live: false, definition: definition,
                             knownUndeclared: jobs != nil && definition == nil && pending == nil && runs.isEmpty,
                             pending: pending.map(SchedulerSnapshot.Pending.init), failureStreak: streak,
                             recentRuns: runs.map(StatusReport.Run.init),
                             missedByDay: missed.map { (day: $0.day, count: $0.missed) })
        // The widgets of the job files, and the one of the instance `id` names if it has one
        // (not every instance's: a million would be read for one answer).
        var instances: [InstanceRecord] = []
        if let split = InstanceName.split(id), let record = try store.instance(of: split.template, key: split.key) { instances.append(record) }
        let saved = try SavedMachineState(store: store)
        let timelines = saved.timelineSnapshot(at: now, definitions: WidgetSpec.definitions(of: jobs ?? [], instances: instances))
        facts.addSubject(jobs: jobs, timelines: timelines, activities: saved.activitySnapshot(at: now), runs: allRuns)
        facts.paused = WhyFacts.pause(of: id, among: try StatusReport.paused(in: store))
        return facts
    }
}

extension WidgetSpec {
    /// The widgets `jobs` declare, and those of `instances` of their timeline templates (each
    /// with its instance as its job, so that they fold per template), as the runtime declares
    /// them (`definition(job:families:)`): for the answers read from a store.
    package static func definitions(of jobs: [JobSpec], instances: [InstanceRecord] = []) -> [WidgetDefinition] {
        func families(_ widget: WidgetSpec) -> Set<WidgetFamily> { Set(widget.families.compactMap(WidgetFamily.init(rawValue:))) }
        var definitions = jobs.compactMap { spec in
            spec.template == nil ? spec.widget.map { $0.definition(job: spec.definition, families: families($0)) } : nil
        }
        guard !instances.isEmpty else { return definitions }
        let templates = Dictionary(jobs.compactMap { spec in spec.template?.widget != nil ? (spec.identifier, spec) : nil },
                                   uniquingKeysWith: { first, _ in first })
        for record in instances {
            guard let spec = templates[record.template], let template = spec.template,
                  let widget = template.instanceWidget(template.values(of: record)) else { continue }
            var job = spec.definition
            job.identifier = record.identifier
            definitions.append(widget.definition(job: job, families: families(widget)))
        }
        return definitions
    }
}
