import RefreshdCore

/// The rules a set of jobs must follow together: unique identifiers, and no more jobs of a kind
/// in one namespace than can be pending at once.
///
/// The scheduler keeps at most one pending app-refresh request (and ten processing requests) per
/// namespace, like iOS per app. Two app-refresh jobs in one namespace would keep replacing or
/// refusing each other's requests, so one of them would starve; the loader refuses such a set
/// instead of letting it fail quietly at run time.
struct JobSetValidator {
    var limits: SchedulerConfiguration
    /// Where identifiers must be unique, for messages: `the job folder`, `the scenario`.
    var scope = "the job folder"

    /// Earlier jobs named in a namespace-limit error before "and N more".
    static let namedJobs = 3

    /// Errors for duplicate identifiers and namespace limits, in the order the jobs were given.
    func validate(_ jobs: [ParsedJob]) -> [ConfigError] {
        var errors: [ConfigError] = []
        var unique: [ParsedJob] = []
        var firstByIdentifier: [String: ParsedJob] = [:]
        for job in jobs {
            if let first = firstByIdentifier[job.config.identifier] {
                errors.append(error(at: job, job.identifierLocation,
                    "identifier: \"\(job.config.identifier)\" is already used by \(first.config.file):\(first.config.line); "
                    + "expected identifiers to be unique across \(scope)"))
            } else {
                firstByIdentifier[job.config.identifier] = job
                unique.append(job)
            }
        }
        var seen: [NamespaceKey: [ParsedJob]] = [:]
        for job in unique {
            let key = NamespaceKey(namespace: job.config.definition.namespace, kind: job.config.definition.kind)
            let limit = key.kind == .appRefresh ? limits.maxPendingAppRefresh : limits.maxPendingProcessing
            let earlier = seen[key, default: []]
            if earlier.count >= limit {
                errors.append(error(at: job, job.kindOrIdentifierLocation, limitMessage(key, limit: limit, earlier: earlier, job: job)))
            }
            seen[key, default: []].append(job)
        }
        return errors
    }

    private func limitMessage(_ key: NamespaceKey, limit: Int, earlier: [ParsedJob], job: ParsedJob) -> String {
        let kind = key.kind.rawValue
        // At most a few are named: with thousands of jobs in one namespace, naming every earlier
        // one in every error would print a quadratic amount of text.
        let shown = Self.namedJobs
        var others = earlier.prefix(shown).map { "\($0.config.identifier) (\($0.config.file):\($0.config.line))" }
            .joined(separator: ", ")
        if earlier.count > shown { others += " and \(earlier.count - shown) more" }
        let requests = limit == 1 ? "1 \(kind) request" : "\(limit) \(kind) requests"
        return "too many \(kind) jobs in namespace \"\(key.namespace)\": it already has \(others); "
            + "at most \(requests) can be pending per namespace, so these jobs would starve each other; "
            + "give them distinct namespace: values (for example namespace: \(job.config.identifier))"
    }

    private func error(at job: ParsedJob, _ location: Location, _ message: String) -> ConfigError {
        ConfigError(file: job.config.file, line: location.line, column: location.column, message: message)
    }

    private struct NamespaceKey: Hashable {
        var namespace: String
        var kind: TaskKind
    }
}
