/// Where the runtime commits state changes and reads them back at start.
///
/// Two stores implement it: `StateStore` (SQLite, WAL, durable: real runs) and `InMemoryStore`
/// (folds the same changes into the same state: simulation and tests). The runtime cannot tell
/// them apart, so what the simulator shows about restarts is what SQLite does.
///
/// Rules every store keeps:
/// - `apply` commits one event's changes atomically: every change or none, and on a throw
///   nothing of the batch is visible afterwards (to `restoredState` or the queries);
/// - `restoredState` after any sequence of successful `apply`s is the fold of those changes;
/// - reads never change the state.
package protocol StateStoring: AnyObject, Sendable {
    /// Commits one event's changes in one transaction.
    func apply(_ changes: [StateChange]) throws
    /// Everything the runtime needs at start.
    func restoredState() throws -> SchedulerCore.RestoredState
    /// A random identifier of this state, fixed when it was created.
    func instanceID() throws -> String
    /// Pending requests in launch order (earliest begin, then submission sequence).
    func pendingRequests() throws -> [PendingRequest]
    /// One identifier's pending request, if it has one (looked up by key where the store can).
    func pendingRequest(of identifier: String) throws -> PendingRequest?
    /// The `limit` most recent runs, newest (highest run id) first.
    func recentRuns(limit: Int) throws -> [RunRecord]
    /// The `limit` most recent runs with a run id below `before` (a page of the history; nil:
    /// from the newest), newest first.
    func recentRuns(limit: Int, before: Int64?) throws -> [RunRecord]
    /// `recentRuns(limit:before:)`, without the kept output when `withOutput` is false: for
    /// scans of many runs, which then read the output of the few they show (`withKeptOutput`).
    func recentRuns(limit: Int, before: Int64?, withOutput: Bool) throws -> [RunRecord]
    /// The runs given, each with its kept output, in the order given (a run no longer kept is
    /// left out).
    func withKeptOutput(_ runs: [RunRecord]) throws -> [RunRecord]
    /// The `limit` most recent runs of one identifier, newest first, however many runs of
    /// other identifiers came after them.
    func recentRuns(of identifier: String, limit: Int) throws -> [RunRecord]
    /// The latest run of each identifier that ever ran, by identifier.
    func lastRunPerJob() throws -> [RunRecord]
    /// Per-day counters, newest day first, then by identifier; `days` limits to the most
    /// recent days that have counters.
    func dailyCounters(days: Int?) throws -> [DailyCounter]
    /// The `earliest:` text a job's first request was last made from.
    func seedSpec(for identifier: String) throws -> String?
    /// A table's machine records, by key (UTF-8 byte order).
    func records(table: String) throws -> [MachineRecord]
    /// A page of at most `limit` of `template`'s instances in key order (UTF-8 bytes), after the
    /// key `after` (nil: from the first): a cluster lists a template's instances across shards.
    func instances(of template: String, after: String?, limit: Int) throws -> [InstanceRecord]
    /// Each identifier's failure streak above zero (failed attempts in a row).
    func failureStreaks() throws -> [String: Int]
    /// Finished runs started at or after `since`, counted by identifier and outcome (`stats runs`).
    func runCounts(since: Instant) throws -> [(identifier: String, outcome: Outcome, count: Int)]
    /// How many instances `template` has in this store.
    func instanceCount(of template: String) throws -> Int
    /// The instance `template[key]`, if this store holds it.
    func instance(of template: String, key: String) throws -> InstanceRecord?
    /// A page of `search`'s results among `template`'s instances in this store, in identifier
    /// order (`InstanceSearch.precedes`), next to the cursor (a key), with the counts that place it.
    /// `.paused` here is the instance's own pause (a template's pause is a reader's to apply:
    /// it may be saved in another store).
    func searchInstances(_ search: InstanceSearch, cursor: SearchCursor<String>?, limit: Int) throws -> SearchPage<InstanceRecord>
    /// A page of `search`'s results among this store's runs, newest start first
    /// (`RunPosition.precedes`), without their kept output, with the counts that place it.
    func searchRuns(_ search: RunSearch, cursor: SearchCursor<RunPosition>?, limit: Int) throws -> SearchPage<RunRecord>
    /// `template`'s instances in this store counted by state (`InstanceCounts`), on indexes where
    /// the store has them; `paused` is every instance when the template's pause is saved here.
    func instanceCounts(of template: String) throws -> InstanceCounts
    /// The state of each of `identifiers` (an identifier with none is left out).
    func states(of identifiers: [String]) throws -> [String: IdentifierState]
    /// Releases the store; further calls may fail.
    func close()
}

extension StateStoring {
    /// For a store that keeps every run's output with it (in memory): the runs as read.
    package func recentRuns(limit: Int, before: Int64?, withOutput: Bool) throws -> [RunRecord] {
        try recentRuns(limit: limit, before: before)
    }

    package func withKeptOutput(_ runs: [RunRecord]) throws -> [RunRecord] { runs }

    package func failureStreaks() throws -> [String: Int] { try restoredState().failureStreaks }

    /// For a store without an aggregate query: counted from its runs, by identifier (its bytes,
    /// as the stores order and compare them) and outcome.
    package func runCounts(since: Instant) throws -> [(identifier: String, outcome: Outcome, count: Int)] {
        var counts: [[UInt8]: [Outcome: Int]] = [:]
        for run in try recentRuns(limit: Int.max, before: nil, withOutput: false) where run.started >= since {
            if let outcome = run.outcome { counts[Array(run.identifier.utf8), default: [:]][outcome, default: 0] += 1 }
        }
        return counts.keys.sorted { $0.lexicographicallyPrecedes($1) }.flatMap { id in
            counts[id]!.sorted { $0.key.rawValue < $1.key.rawValue }
                .map { (identifier: String(decoding: id, as: UTF8.self), outcome: $0.key, count: $0.value) }
        }
    }

    /// For a store without indexes (in memory): counted from the whole state, by the rule the
    /// SQL of the others says (`InstanceCounts`).
    package func instanceCounts(of template: String) throws -> InstanceCounts {
        let search = InstanceSearch(template: template)
        func instances(_ identifiers: [String]) -> Int { Set(identifiers.compactMap(search.instanceKey(ofIdentifier:))).count }
        let state = try restoredState()
        let count = try instanceCount(of: template)
        let pauses = try records(table: SchedulerCore.pausedTable).map(\.key)
        return InstanceCounts(count: count, pending: instances(try pendingRequests().map(\.identifier)),
                              running: instances(state.unfinishedRuns.map(\.identifier)),
                              failing: instances(try failureStreaks().filter { $0.value > 0 }.map(\.key)),
                              paused: pauses.contains { $0.utf8.elementsEqual(template.utf8) } ? count
                                  : pauses.count { search.key(ofIdentifier: $0) != nil })
    }

    /// For a store without indexes (in memory): read from the whole state.
    package func pendingRequest(of identifier: String) throws -> PendingRequest? {
        try pendingRequests().first { $0.identifier == identifier }
    }

    package func states(of identifiers: [String]) throws -> [String: IdentifierState] {
        let wanted = Set(identifiers)
        let state = try restoredState()
        let streaks = try failureStreaks()
        let paused = Set(try records(table: SchedulerCore.pausedTable).map(\.key))
        var states: [String: IdentifierState] = [:]
        for p in try pendingRequests() where wanted.contains(p.identifier) { states[p.identifier, default: .init()].pending = p.earliest }
        for run in state.unfinishedRuns where wanted.contains(run.identifier) { states[run.identifier, default: .init()].running = run.runID }
        for id in wanted {
            if let streak = streaks[id], streak > 0 { states[id, default: .init()].failureStreak = streak }
            if paused.contains(id) { states[id, default: .init()].paused = true }
            if var last = try recentRuns(of: id, limit: 1).first {
                last.output = .none
                states[id, default: .init()].lastRun = last
            }
        }
        return states
    }

    /// For a store without an index of instances: counted from the whole state.
    package func instanceCount(of template: String) throws -> Int {
        try restoredState().instances.reduce(0) { $0 + ($1.template.utf8.elementsEqual(template.utf8) ? 1 : 0) }
    }

    package func instance(of template: String, key: String) throws -> InstanceRecord? {
        try restoredState().instances.first { $0.template.utf8.elementsEqual(template.utf8) && $0.key.utf8.elementsEqual(key.utf8) }
    }

    /// For a store without an index of instances: read from the whole state.
    package func instances(of template: String, after: String?, limit: Int) throws -> [InstanceRecord] {
        let all = try restoredState().instances.filter { record in
            record.template == template && (after.map { Array($0.utf8).lexicographicallyPrecedes(Array(record.key.utf8)) } ?? true)
        }
        return Array(all.sorted { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }.prefix(max(0, limit)))
    }

    /// For a store without indexes (in memory): every instance, pending request, run, streak and
    /// pause read and filtered by the search's rule, as the SQL of the others says it.
    package func searchInstances(_ search: InstanceSearch, cursor: SearchCursor<String>?,
                                                  limit: Int) throws -> SearchPage<InstanceRecord> {
        let state = try restoredState()
        let own = { (record: InstanceRecord) in record.template.utf8.elementsEqual(search.template.utf8) }
        var keys: [String]
        switch search.state {
        case nil: keys = state.instances.filter(own).map(\.key)
        // A provider's state is its instance's (`instanceKey`), but for a pause.
        case .pending?: keys = try pendingRequests().compactMap { search.instanceKey(ofIdentifier: $0.identifier) }
        case .running?: keys = state.unfinishedRuns.compactMap { search.instanceKey(ofIdentifier: $0.identifier) }
        case .failing?: keys = try failureStreaks().filter { $0.value > 0 }.compactMap { search.instanceKey(ofIdentifier: $0.key) }
        case .paused?: keys = try records(table: SchedulerCore.pausedTable).compactMap { search.key(ofIdentifier: $0.key) }
        }
        let unique = Dictionary(keys.filter(search.matchesText).map { (Array($0.utf8), $0) }, uniquingKeysWith: { a, _ in a })
        keys = unique.values.sorted(by: InstanceSearch.precedes)
        let page = SearchPage<String>.of(keys, cursor: cursor, limit: limit,
                                         precedes: InstanceSearch.precedes, follows: { InstanceSearch.precedes($1, $0) })
        let values = search.state == nil
            ? Dictionary(state.instances.filter(own).map { (Array($0.key.utf8), $0) }, uniquingKeysWith: { a, _ in a }) : [:]
        return try page.map { key in
            try values[Array(key.utf8)] ?? instance(of: search.template, key: key)
                ?? InstanceRecord(template: search.template, key: key, values: [:])
        }
    }

    /// For a store without indexes (in memory): every run read and filtered by `RunSearch.matches`.
    package func searchRuns(_ search: RunSearch, cursor: SearchCursor<RunPosition>?,
                                             limit: Int) throws -> SearchPage<RunRecord> {
        let matches = try recentRuns(limit: Int.max, before: nil, withOutput: false).filter(search.matches).map { run in
            var bare = run
            bare.output = .none
            return bare
        }.sorted { RunPosition.precedes(RunPosition($0), RunPosition($1)) }
        return SearchPage.of(matches, cursor: cursor, limit: limit,
                             precedes: { RunPosition.precedes(RunPosition($0), $1) },
                             follows: { RunPosition.precedes($1, RunPosition($0)) })
    }

    /// For a store without an index by identifier: its runs among the 10,000 most recent, else
    /// its last run (every store keeps each identifier's last run).
    package func recentRuns(of identifier: String, limit: Int) throws -> [RunRecord] {
        let same = { (run: RunRecord) in run.identifier.utf8.elementsEqual(identifier.utf8) }  // by bytes, as stores compare
        let among = try recentRuns(limit: 10_000).filter(same).prefix(max(0, limit))
        if !among.isEmpty || limit <= 0 { return Array(among) }
        return try lastRunPerJob().filter(same)
    }
}
