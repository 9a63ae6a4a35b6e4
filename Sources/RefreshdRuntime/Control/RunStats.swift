import RefreshdCore

/// `refreshd stats runs`: runs over the last days by job and outcome, with the instances of a
/// template folded into one row (issue 23): how many instances ran, their outcomes summed, how
/// many had a failed run and the most failing of them (`FailingInstances`), so a template of a
/// million users is one row and ten names. `instance` (`template[key]`) shows that one
/// instance's row instead. Pure: the counts come from the store (`StateStore.runCounts`).
package struct RunStats: Codable, Sendable, Equatable {
    /// `run-stats` of `request` over `reader`'s state at `now`: its `days` (default 7) and its
    /// `identifier` as the one instance to show (the same for one machine and a cluster node).
    package static func answer(_ request: ControlRequest, _ reader: StateReader, now: Instant) throws -> RunStats {
        let days = request.days ?? 7
        let since = now - .seconds(Int64(days) * 86_400)
        return RunStats(counts: try reader.runCounts(since: since), days: days, since: since, instance: request.identifier)
    }

    /// One job, one template (its instances folded), or the one instance asked for.
    package struct Row: Codable, Sendable, Equatable {
        package var identifier: String
        package var runs: Int
        /// Runs by outcome (its raw value), only outcomes that occurred.
        package var outcomes: [String: Int]
        /// For a template: how many of its instances ran, and how many had a failed run.
        package var instances: Int?
        package var failingInstances: Int?
        /// For a template: its most failing instances (at most `FailingInstances.top`).
        package var mostFailing: [Failing]?
        /// For the provider runs of a timeline template's instances' widgets (`T[K]#family`),
        /// folded per template and family: the family.
        package var family: String?
    }

    /// An instance's key and its failed runs (every outcome but success; see `Outcome.isFailure`).
    package struct Failing: Codable, Sendable, Equatable {
        package var key: String
        package var failures: Int
    }

    package var days: Int
    package var since: Instant
    package var instance: String?
    package var rows: [Row]

    /// Folds `counts` (runs started since `since`, by identifier and outcome).
    package init(counts: [(identifier: String, outcome: Outcome, count: Int)], days: Int, since: Instant, instance: String? = nil) {
        self.days = days
        self.since = since
        self.instance = instance
        var jobs: [String: Row] = [:]
        var failuresOf: [String: [String: Int]] = [:]
        var ranOf: [String: Set<String>] = [:]
        for c in counts {
            // An instance's widget's provider runs (`T[K]#family`) are the instance's own too.
            let hash = c.identifier.utf8.lastIndex(of: UInt8(ascii: "#"))
            let owner = hash.map { String(c.identifier[..<$0]) } ?? c.identifier
            if let instance, c.identifier != instance, owner != instance { continue }
            var split = instance == nil ? InstanceName.split(c.identifier) : nil
            var family: String?
            if instance == nil, split == nil, let hash, let provider = InstanceName.split(owner) {
                split = provider
                family = String(c.identifier[c.identifier.index(after: hash)...])
            }
            let name = split.map { $0.template + (family.map { "#" + $0 } ?? "") } ?? c.identifier
            var row = jobs[name] ?? Row(identifier: split?.template ?? c.identifier, runs: 0, outcomes: [:], family: family)
            row.runs += c.count
            row.outcomes[c.outcome.rawValue, default: 0] += c.count
            jobs[name] = row
            if let split {
                ranOf[name, default: []].insert(split.key)
                if c.outcome.isFailure { failuresOf[name, default: [:]][split.key, default: 0] += c.count }
            }
        }
        for (name, keys) in ranOf {
            let failing = failuresOf[name] ?? [:]
            jobs[name]?.instances = keys.count
            jobs[name]?.failingInstances = failing.count
            jobs[name]?.mostFailing = FailingInstances.most(failing.map { ($0.key, $0.value) })
                .map { Failing(key: $0.key, failures: $0.count) }
        }
        rows = jobs.sorted { $0.key < $1.key }.map(\.value)
    }

    /// The text `refreshd stats runs` prints.
    package var lines: [String] {
        var lines = ["Runs started since \(since) (\(days) day\(days == 1 ? "" : "s"))"
            + (instance.map { ", instance \($0)" } ?? "") + ":"]
        if rows.isEmpty { lines.append("  (no runs)") }
        for row in rows {
            let outcomes = Outcome.allCases.compactMap { o in row.outcomes[o.rawValue].map { "\($0) \(o.rawValue)" } }
            var text = "  \(row.identifier)"
            if let instances = row.instances {
                text += "[*]" + (row.family.map { "#" + $0 } ?? "") + "  \(instances) instance\(instances == 1 ? "" : "s")"
            }
            text += "  \(row.runs) run\(row.runs == 1 ? "" : "s"): " + outcomes.joined(separator: ", ")
            if let failing = row.failingInstances { text += "  \(failing) failing" }
            lines.append(text)
            if let most = row.mostFailing, !most.isEmpty {
                lines.append("    most failing: " + most.map { "\($0.key) (\($0.failures))" }.joined(separator: ", "))
            }
        }
        return lines
    }
}
