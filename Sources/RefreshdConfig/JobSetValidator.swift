import RefreshdCore

/// The rules a set of jobs must follow together: unique identifiers, and no more jobs of a kind
/// in one namespace than can be pending at once.
///
/// The scheduler keeps at most one pending app-refresh request (and ten processing requests) per
/// namespace, like iOS per app. Two app-refresh jobs in one namespace would keep replacing or
/// refusing each other's requests, so one of them would starve; the loader refuses such a set
/// instead of letting it fail quietly at run time.
///
/// The rules run on every job whose identifier could be read, also when its file has other
/// errors, so one `refreshd check` shows every error. In a namespace clash the job refused is the
/// one in the most recently modified file (the one just added or edited, ties in file order),
/// and its message names both files and the ways out.
struct JobSetValidator {
    var limits: SchedulerConfiguration
    /// Where identifiers must be unique, for messages: `the job folder`, `the scenario`.
    var scope = "the job folder"

    /// Earlier jobs named in a namespace-limit error before "and N more".
    static let namedJobs = 3

    /// Errors for duplicate identifiers (at the later one, in the order the jobs were given) and
    /// namespace limits (at the newest jobs of the namespace past its limit).
    func validate(_ jobs: [JobIdentity]) -> [ConfigError] {
        var errors: [ConfigError] = []
        var unique: [(order: Int, job: JobIdentity)] = []
        var firstByIdentifier: [String: JobIdentity] = [:]
        for job in jobs {
            if let first = firstByIdentifier[job.identifier] {
                errors.append(error(at: job, job.identifierLocation,
                    "identifier: \"\(job.identifier)\" is already used by \(first.file):\(first.line); "
                    + "expected identifiers to be unique across \(scope)"))
            } else {
                firstByIdentifier[job.identifier] = job
                unique.append((unique.count, job))
            }
        }
        var groups: [NamespaceKey: [(order: Int, job: JobIdentity)]] = [:]
        var keys: [NamespaceKey] = []
        for entry in unique {
            guard let kind = entry.job.kind, let namespace = entry.job.namespace else { continue }
            let key = NamespaceKey(namespace: namespace, kind: kind)
            if groups[key] == nil { keys.append(key) }
            groups[key, default: []].append(entry)
        }
        for key in keys {
            let limit = key.kind == .appRefresh ? limits.maxPendingAppRefresh : limits.maxPendingProcessing
            guard let group = groups[key], group.count > limit else { continue }
            // Oldest first: the files that were there before keep their place.
            let ordered = group.sorted { ($0.job.modified ?? 0, $0.order) < ($1.job.modified ?? 0, $1.order) }.map(\.job)
            for index in limit..<ordered.count {
                let job = ordered[index]
                errors.append(error(at: job, job.kindOrIdentifierLocation,
                                    limitMessage(key, limit: limit, earlier: ordered[..<index], job: job)))
            }
        }
        return errors
    }

    /// `too many app-refresh jobs in namespace "com.me" (from the identifiers): com.me.quick
    /// (Jobs/quick.yaml, this file) and com.me.other (Jobs/other.yaml:1) ...; expected kind:
    /// processing ..., or a namespace: of its own ...`.
    private func limitMessage(_ key: NamespaceKey, limit: Int, earlier: ArraySlice<JobIdentity>, job: JobIdentity) -> String {
        let kind = key.kind.rawValue
        // At most a few are named: with thousands of jobs in one namespace, naming every earlier
        // one in every error would print a quadratic amount of text.
        let shown = Self.namedJobs
        var others = earlier.prefix(shown).map { "\($0.identifier) (\($0.file):\($0.line))" }
            .joined(separator: ", ")
        if earlier.count > shown { others += " and \(earlier.count - shown) more" }
        let origin = job.namespaceIsDerived ? " (the default: the identifier without its last label)" : ""
        let requests = limit == 1 ? "1 \(kind) request" : "\(limit) \(kind) requests"
        let wayOut = key.kind == .appRefresh
            ? "expected kind: processing (longer work, up to \(limits.maxPendingProcessing) pending per namespace), "
                + "or a namespace: of its own"
            : "expected a namespace: of its own"
        return "too many \(kind) jobs in namespace \"\(key.namespace)\"\(origin): \(job.identifier) (\(job.file), this file) "
            + "joins \(others); at most \(requests) can be pending per namespace, so these jobs would starve each other; "
            + "\(wayOut) (for example namespace: \(job.identifier))"
    }

    private func error(at job: JobIdentity, _ location: Location, _ message: String) -> ConfigError {
        ConfigError(file: job.file, line: location.line, column: location.column, message: message)
    }

    private struct NamespaceKey: Hashable {
        var namespace: String
        var kind: TaskKind
    }
}
