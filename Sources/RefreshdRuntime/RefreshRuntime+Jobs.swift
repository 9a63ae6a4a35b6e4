import RefreshdCore

extension RefreshRuntime {
    /// Starts from a config: declares every job, restores the saved state, then gives each job
    /// without a pending request its first request (`SeedPlan`). Returns the pending count.
    @discardableResult
    package func load(_ specs: [JobSpec]) -> Int {
        for spec in specs {
            if spec.template != nil {
                declareTemplate(spec)
            } else if let widget = spec.widget {
                declareWidget(spec, widget)
            } else {
                register(spec.definition, handler: spec.handler(actions: options.actions))
            }
        }
        lock.withLock {
            jobs = Dictionary(specs.map { ($0.identifier, $0.withoutInstanceSource) }, uniquingKeysWith: { a, _ in a })
            setNotifiers()
        }
        restoreSavedState()
        seed(specs.filter { $0.widget == nil && $0.template == nil }, replacing: false)
        for spec in specs where spec.template != nil {
            applyInstanceSource(spec)
            seedInstances(of: spec.identifier, replacing: false)
        }
        return lock.withLock { machines.scheduler.pendingCount }
    }

    /// Applies a newly read config as a diff (`ReloadPlan`): removed jobs' pending requests are
    /// cancelled, added and changed jobs (re)declared and seeded (a changed job's pending
    /// request is replaced), unchanged jobs left alone. Runs in flight keep their process and
    /// deadline.
    ///
    /// The whole reload is ONE transaction (one event from outside, one commit), committed
    /// before any of its effects is carried out. If that commit fails, nothing of the reload
    /// acts: the config in force stays the old one, no "reloaded" is reported, and the runtime
    /// stops as for any failed commit.
    @discardableResult
    package func reload(_ specs: [JobSpec], reason: String) -> ReloadPlan {
        let ((plan, previous), committed) = inOneTransaction { () -> (ReloadPlan, [String: JobSpec]) in
            let current = jobs
            // An instance list is applied as a set below, never a change of its template.
            let plan = ReloadPlan.diff(current: current, loaded: specs.map(\.withoutInstanceSource))
            // The config in force first: no step reads it.
            jobs = Dictionary(specs.map { ($0.identifier, $0.withoutInstanceSource) }, uniquingKeysWith: { a, _ in a })
            setNotifiers()
            for step in plan.steps(current: current) {
                switch step {
                case let .withdrawWidget(old, keeping):
                    if let widget = old.widget { withdrawWidget(old, widget, keeping: keeping) }
                case let .withdraw(id):
                    if current[id]?.template != nil { withdrawTemplate(id) } else { withdraw(id) }
                case let .declareWidget(spec):
                    if let widget = spec.widget { declareWidget(spec, widget) }
                case let .redeclare(spec) where spec.template != nil:
                    // A job that became a template: its identifier no longer runs itself.
                    if let old = current[spec.identifier], old.template == nil { withdraw(spec.identifier) }
                    declareTemplate(spec)
                case let .redeclare(spec):
                    if let old = current[spec.identifier], old.template != nil { withdrawTemplate(spec.identifier) }
                    redeclare(spec.definition, handler: spec.handler(actions: options.actions))
                case let .seed(specs, replacing):
                    seed(specs.filter { $0.template == nil }, replacing: replacing)
                    for spec in specs where spec.template != nil {
                        seedInstances(of: spec.identifier, replacing: replacing)
                    }
                }
            }
            // Each template's `instances:` file, as a set (its changes are diffs, in this
            // transaction); new instances get their first request at their add.
            for spec in specs where spec.instanceSource != nil { applyInstanceSource(spec) }
            performLocked(.reloaded(changed: plan.changedIdentifiers))
            return (plan, current)
        }
        guard committed else {
            lock.withLock {
                jobs = previous
                setNotifiers()
            }
            return plan
        }
        report(RuntimeObservation(.runtime(.reloaded(reason: reason, summary: plan.summary, jobs: specs.count)), at: clock()))
        return plan
    }

    /// A config that could not be used: says why and that the running one stays.
    package func refuseReload(_ problems: [String], reason: String) {
        let now = clock()
        for problem in problems {
            report(RuntimeObservation(.runtime(.reloadRefused(problem: problem)), at: now))
        }
        let count = lock.withLock { jobs.count }
        report(RuntimeObservation(.runtime(.reloadKept(reason: reason, problems: problems.count, jobs: count)), at: now))
    }

    /// The jobs in force, by identifier.
    package var jobsInForce: [String: JobSpec] { lock.withLock { jobs } }

    /// Seeds first requests; each submit and its seed record are one transaction.
    func seed(_ specs: [JobSpec], replacing: Bool) {
        let refusals: [(String, SchedulerError)] = lock.withLock {
            specs.compactMap { spec in
                let performed = performLocked(.seed(spec, replacing: replacing))
                if case let .refused(.scheduler(error)) = performed.reply { return (spec.identifier, error) }
                return performed.notSaved.map { (spec.identifier, .notSaved(reason: $0)) }
            }
        }
        for (id, refusal) in refusals {
            report(RuntimeObservation(.runtime(.seedRefused(identifier: id, refusal)), at: clock()))
        }
        kick()
    }
}
