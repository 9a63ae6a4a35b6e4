/// Which jobs get a first request at a load, and how: a pure function of the jobs, what is
/// pending and what was seeded before.
///
/// - A job with a pending request keeps it (a restart never replaces a saved request, retry or
///   missed-slot catch-up), unless `replacing` (its config changed).
/// - A job whose first request is a fixed date that was already requested is not requested
///   again (`seedSpecs` holds the text it was last seeded from).
/// - Otherwise: `.core` asks the core (next calendar slot or now); the rest submit the date they
///   name for a load at `now`.
package enum SeedPlan {
    package enum Action: Sendable, Hashable {
        case keep
        case submitFirst
        case submit(earliest: Instant)
        /// A calendar first request with no slot left.
        case none
    }

    package static func plan(_ job: JobSpec, hasPending: Bool, seededFrom: String?, replacing: Bool,
                            now: Instant) -> Action {
        if !replacing, hasPending { return .keep }
        if !replacing, case .at = job.firstRequest, seededFrom == job.firstRequest.text { return .keep }
        if job.firstRequest == .core { return .submitFirst }
        guard let earliest = job.firstRequest.earliest(loadedAt: now) else { return .none }
        return .submit(earliest: earliest)
    }
}

/// The difference between the config in force and a newly read one, by identifier: pure, so
/// it is tested on its own and the simulator reloads exactly as the daemon does.
package struct ReloadPlan: Sendable, Hashable {
    /// Identifiers no longer in the config: their pending requests are cancelled.
    package var removed: [String]
    /// New jobs: declared and given their first request.
    package var added: [JobSpec]
    /// Jobs whose definition, command or first request changed: redeclared, pending replaced.
    package var changed: [JobSpec]
    /// Jobs left alone, pending requests, streaks and counters included.
    package var unchanged: Int

    package static func diff(current: [String: JobSpec], loaded: [JobSpec]) -> ReloadPlan {
        var seen = Set<String>()
        var added: [JobSpec] = [], changed: [JobSpec] = []
        var unchanged = 0
        for job in loaded where seen.insert(job.identifier).inserted {
            if let old = current[job.identifier] {
                if old == job { unchanged += 1 } else { changed.append(job) }
            } else {
                added.append(job)
            }
        }
        let removed = current.keys.filter { !seen.contains($0) }.sorted()
        return ReloadPlan(removed: removed, added: added, changed: changed, unchanged: unchanged)
    }

    /// The identifiers added, changed or removed, sorted (what a reload's `WorldEvent` keeps).
    package var changedIdentifiers: [String] {
        (added.map(\.identifier) + changed.map(\.identifier) + removed).sorted()
    }

    /// `2 added, 1 changed, 0 removed, 5 unchanged`.
    package var summary: String {
        "\(added.count) added, \(changed.count) changed, \(removed.count) removed, \(unchanged) unchanged"
    }
}

extension ReloadPlan {
    /// One step of applying a plan; the engine carries it out (it binds handlers), all of them
    /// in one transaction.
    package enum Step: Sendable, Hashable {
        /// Withdraw a timeline job's widget (its spec as it was) and its providers, except the
        /// families in `keeping`, which stay on screen with their pending reloads.
        case withdrawWidget(JobSpec, keeping: Set<String>)
        /// Withdraw an identifier: its pending request is cancelled; a run in flight finishes.
        case withdraw(String)
        /// Declare a timeline job's widget and its providers.
        case declareWidget(JobSpec)
        /// (Re)declare a job with its handler.
        case redeclare(JobSpec)
        /// Give these jobs their first request (`RuntimeMachine.seed`); `replacing` a pending one.
        case seed([JobSpec], replacing: Bool)
    }

    /// The steps of this plan over `current` (the config in force), in order: removed jobs
    /// withdrawn, added and changed ones (re)declared (a changed widget keeps the families still
    /// on screen; a job that became a widget is withdrawn first), then the seeds, added jobs'
    /// first, changed jobs' replacing their pending request. Widgets are seeded by their machine.
    package func steps(current: [String: JobSpec]) -> [Step] {
        var steps: [Step] = []
        for id in removed {
            if let old = current[id], old.widget != nil { steps.append(.withdrawWidget(old, keeping: [])) } else { steps.append(.withdraw(id)) }
        }
        for spec in added + changed {
            if let old = current[spec.identifier], let widget = old.widget {
                let kept = spec.widget?.kind == widget.kind ? Set(spec.widget?.families ?? []) : []
                steps.append(.withdrawWidget(old, keeping: kept))
            } else if spec.widget != nil, current[spec.identifier] != nil {
                steps.append(.withdraw(spec.identifier))
            }
            steps.append(spec.widget != nil ? .declareWidget(spec) : .redeclare(spec))
        }
        steps.append(.seed(added.filter { $0.widget == nil }, replacing: false))
        steps.append(.seed(changed.filter { $0.widget == nil }, replacing: true))
        return steps
    }
}
