/// Which jobs get a first request at a load, and how: a pure function of the jobs, what is
/// pending and what was seeded before.
///
/// - A job with a pending request keeps it (a restart never replaces a saved request, retry or
///   missed-slot catch-up), unless `replacing` (its config changed).
/// - A job whose first request is a fixed date that was already requested is not requested
///   again (`seedSpecs` holds the text it was last seeded from).
/// - Otherwise: `.core` asks the core (next calendar slot or now); the rest submit the date they
///   name for a load at `now`.
public enum SeedPlan {
    public enum Action: Sendable, Hashable {
        case keep
        case submitFirst
        case submit(earliest: Instant)
        /// A calendar first request with no slot left.
        case none
    }

    public static func plan(_ job: JobSpec, hasPending: Bool, seededFrom: String?, replacing: Bool,
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
public struct ReloadPlan: Sendable, Hashable {
    /// Identifiers no longer in the config: their pending requests are cancelled.
    public var removed: [String]
    /// New jobs: declared and given their first request.
    public var added: [JobSpec]
    /// Jobs whose definition, command or first request changed: redeclared, pending replaced.
    public var changed: [JobSpec]
    /// Jobs left alone, pending requests, streaks and counters included.
    public var unchanged: Int

    public static func diff(current: [String: JobSpec], loaded: [JobSpec]) -> ReloadPlan {
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

    /// `2 added, 1 changed, 0 removed, 5 unchanged`.
    public var summary: String {
        "\(added.count) added, \(changed.count) changed, \(removed.count) removed, \(unchanged) unchanged"
    }
}
