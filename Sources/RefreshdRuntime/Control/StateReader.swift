import Foundation
import RefreshdCore

/// The state as a reader sees it, whatever the daemon (issue 32): one machine's store, or each
/// shard's store of a cluster's database, read in shard order and merged. `status` on a node and
/// the dashboard on either read through it, so a page or a report is put together once.
///
/// Reads are not fenced and never change the state. A job's own runs, counters and instances
/// are in one store (`store(of:)`, as `ShardMap` places them); lists over every job are merged.
package struct StateReader {
    /// Each shard's store, by shard (one machine: its one store).
    package let stores: [any StateStoring]
    /// The jobs in force: which shard holds a plain job is its namespace's.
    package var jobs: [JobSpec]
    package var map: ShardMap { ShardMap(shardCount: stores.count) }

    package init(stores: [any StateStoring], jobs: [JobSpec]) {
        precondition(!stores.isEmpty, "the state has at least one store")
        self.stores = stores
        self.jobs = jobs
    }

    /// Every shard's state in a cluster's database, read-only (reads are not fenced).
    package init(database: any ShardDatabase, jobs: [JobSpec]) throws {
        self.init(stores: try (0..<database.shardCount).map { try database.store(shard: $0, epoch: 0) }, jobs: jobs)
    }

    /// The store that holds `identifier`'s requests, runs and counters (a timeline job's
    /// providers, `JOB#FAMILY`, are in their job's).
    package func store(of identifier: String) -> any StateStoring {
        guard stores.count > 1 else { return stores[0] }
        let job = identifier.firstIndex(of: "#").map { String(identifier[..<$0]) } ?? identifier
        return stores[map.shard(ofJob: job, in: jobs)]
    }

    /// Every store's status merged: pending in due order, the runs newest start first across
    /// stores (`runs(newest:before:)`), the last run of each job, counters by day and job, held
    /// notifications and pauses.
    package func status(runs: Int, days: Int, before: Int64? = nil) throws -> StatusReport {
        guard stores.count > 1 else { return try StatusReport(store: stores[0], runs: runs, days: days, before: before) }
        var merged: StatusReport?
        for (shard, store) in stores.enumerated() {
            var report = try StatusReport(store: store, runs: 0, days: days)
            if stores.count > 1 { for index in report.pending.indices { report.pending[index].shard = shard } }
            guard var all = merged else {
                merged = report
                continue
            }
            all.pending += report.pending
            all.runs += report.runs
            all.jobs += report.jobs
            all.counters += report.counters
            all.heldNotifications += report.heldNotifications
            all.paused += report.paused.filter { p in !all.paused.contains { $0.identifier == p.identifier } }
            merged = all
        }
        guard var report = merged else { return merged! }
        report.pending.sort { ($0.earliest, $0.identifier) < ($1.earliest, $1.identifier) }
        report.runs = StatusReport.withinOutputBudget(try self.runs(newest: runs, before: before).map(StatusReport.Run.init))
        report.nextBefore = runs > 0 && report.runs.count == runs ? report.runs.last?.runID : nil
        report.jobs.sort { $0.identifier < $1.identifier }
        report.counters.sort { $0.day != $1.day ? $0.day > $1.day : $0.identifier < $1.identifier }
        report.heldNotifications.sort { ($0.runID, $0.kind) < ($1.runID, $1.kind) }
        report.paused.sort { $0.identifier < $1.identifier }
        return report
    }

    /// A page of `count` runs with their kept output, newest start first across stores (ties by
    /// run id), below the run `before` (the last of the previous page) in that order. Run ids
    /// grow with launches within a store but say their shard across stores, so the order is by
    /// start: each store is scanned back by run id past the runs at or above the cursor (a few,
    /// launches and starts go together) for `count` candidates, at most 20 batches.
    package func runs(newest count: Int, before: Int64?) throws -> [RunRecord] {
        guard count > 0 else { return [] }
        var cursor: (started: Instant, runID: Int64)?
        if let before {
            let shard = map.shard(ofRun: before)
            // The run the previous page ended at (gone since: the page goes on by run id alone).
            let run = shard < stores.count ? try stores[shard].recentRuns(limit: 1, before: before + 1, withOutput: false).first : nil
            cursor = run.map { $0.runID == before ? ($0.started, $0.runID) : ($0.started, before) } ?? (.latest, before)
        }
        func below(_ run: RunRecord) -> Bool {
            guard let cursor else { return true }
            return (run.started, run.runID) < (cursor.started, cursor.runID)
        }
        var candidates: [(store: Int, run: RunRecord)] = []
        for (index, store) in stores.enumerated() {
            var found = 0
            var page: Int64?
            for _ in 0..<20 {
                let batch = try store.recentRuns(limit: count + 50, before: page, withOutput: false)
                for run in batch where below(run) && found < count {
                    candidates.append((index, run))
                    found += 1
                }
                guard found < count, batch.count == count + 50, let last = batch.last else { break }
                page = last.runID
            }
        }
        candidates.sort { ($0.run.started, $0.run.runID) > ($1.run.started, $1.run.runID) }
        let chosen = candidates.prefix(count)
        // Their kept output, store by store, back in the page's order.
        var kept: [Int64: RunRecord] = [:]
        for (index, group) in Dictionary(grouping: chosen, by: \.store) {
            for run in try stores[index].withKeptOutput(group.map(\.run)) { kept[run.runID] = run }
        }
        return chosen.map { kept[$0.run.runID] ?? $0.run }
    }

    /// The `limit` most recent runs without their output, newest start first across stores.
    package func recentRuns(limit: Int) throws -> [RunRecord] {
        if stores.count == 1 { return try stores[0].recentRuns(limit: limit, before: nil, withOutput: false) }
        var all: [RunRecord] = []
        for store in stores { all += try store.recentRuns(limit: limit, before: nil, withOutput: false) }
        return Array(all.sorted { ($0.started, $0.runID) > ($1.started, $1.runID) }.prefix(limit))
    }

    /// Runs started at or after `since`, newest start first, at most `limit` (`truncated`: the
    /// window held more). Each store is scanned back by run id until a run started before it.
    package func runs(since: Instant, limit: Int) throws -> (runs: [RunRecord], truncated: Bool) {
        var all: [RunRecord] = []
        var truncated = false
        for store in stores {
            var before: Int64?
            scan: while true {
                let batch = try store.recentRuns(limit: 500, before: before, withOutput: false)
                for run in batch {
                    // Run ids grow with launches: once runs started before the window come, older
                    // ids did too (a clock step back can break that; the window then ends early).
                    if run.started < since { break scan }
                    all.append(run)
                    if all.count > limit * stores.count { truncated = true; break scan }
                }
                guard batch.count == 500, let last = batch.last else { break }
                before = last.runID
            }
        }
        all.sort { ($0.started, $0.runID) > ($1.started, $1.runID) }
        if all.count > limit { truncated = true; all.removeLast(all.count - limit) }
        return (all, truncated)
    }

    /// One job's runs for which `belongs` holds (a timeline job's: its providers' too), newest
    /// first, a page of `pageSize` below `before`, with their kept output; scans at most 20
    /// batches of 500 of the job's store.
    package func runs(of identifier: String, before: Int64?, pageSize: Int,
                      belongs: (String) -> Bool) throws -> (runs: [RunRecord], nextBefore: Int64?) {
        let store = store(of: identifier)
        var found: [RunRecord] = []
        var cursor = before
        for _ in 0..<20 {
            let batch = try store.recentRuns(limit: 500, before: cursor, withOutput: false)
            for run in batch where belongs(run.identifier) {
                found.append(run)
                if found.count == pageSize { return (try store.withKeptOutput(found), run.runID > 1 ? run.runID : nil) }
            }
            guard batch.count == 500, let last = batch.last else { return (try store.withKeptOutput(found), nil) }
            cursor = last.runID
        }
        return (try store.withKeptOutput(found), cursor)
    }

    /// Every store's daily counters, newest day first, then by identifier.
    package func dailyCounters(days: Int?) throws -> [DailyCounter] {
        if stores.count == 1 { return try stores[0].dailyCounters(days: days) }
        var all: [DailyCounter] = []
        for store in stores { all += try store.dailyCounters(days: days) }
        return all.sorted { $0.day != $1.day ? $0.day > $1.day : $0.identifier < $1.identifier }
    }

    /// Every store's widgets, their counters and live activities.
    package func savedMachineState() throws -> SavedMachineState {
        var merged = try SavedMachineState(store: stores[0])
        for store in stores.dropFirst() {
            let saved = try SavedMachineState(store: store)
            merged.widgets += saved.widgets
            merged.counters += saved.counters
            merged.activities += saved.activities
            merged.unreadable += saved.unreadable
        }
        return merged
    }

    /// The failure notifications every store holds, waiting to be delivered.
    package func heldNotifications() throws -> [RunNotification] {
        let decoder = JSONDecoder()
        return try stores.flatMap { store in
            try store.records(table: NotificationMachine.table).compactMap { try? decoder.decode(RunNotification.self, from: Data($0.value.utf8)) }
        }.sorted { ($0.runID, $0.kind.rawValue) < ($1.runID, $1.kind.rawValue) }
    }

    /// Finished runs started at or after `since`, by identifier and outcome, in every store.
    package func runCounts(since: Instant) throws -> [(identifier: String, outcome: Outcome, count: Int)] {
        if stores.count == 1 { return try stores[0].runCounts(since: since) }
        return try stores.flatMap { try $0.runCounts(since: since) }
            .sorted { $0.identifier != $1.identifier
                ? Array($0.identifier.utf8).lexicographicallyPrecedes(Array($1.identifier.utf8)) : $0.outcome.rawValue < $1.outcome.rawValue }
    }

    /// Every instance of `template`, in every store (read a page at a time).
    package func instances(of template: String) throws -> [InstanceRecord] {
        var all: [InstanceRecord] = []
        for store in stores {
            var after: String?
            while true {
                let page = try store.instances(of: template, after: after, limit: 10_000)
                all += page
                guard page.count == 10_000, let last = page.last else { break }
                after = last.key
            }
        }
        return all
    }

    /// The plain timeline jobs of `specs` whose widget kind an instance of one of their timeline
    /// templates has, with every instance in the state (`InstanceKind.clashes`; read only when
    /// there is a plain timeline job and a timeline template).
    package func instanceKindClashes(_ specs: [JobSpec]) throws -> [InstanceKind.Clash] {
        var failure: (any Error)?
        let clashes = InstanceKind.clashes(specs) { spec in
            do { return try instances(of: spec.identifier) } catch { failure = error; return [] }
        }
        if let failure { throw failure }
        return clashes
    }

    /// A page of `search`'s results among the template's instances in every store, merged in
    /// identifier order, with its position (issue 33). Paused is the instance's own pause or
    /// its template's: a paused template (its record may be in another store than an
    /// instance's) pauses every instance, so the search is then of all of them.
    package func searchInstances(_ search: InstanceSearch, cursor: SearchCursor<String>?, limit: Int) throws -> SearchPage<InstanceRecord> {
        var search = search
        if search.state == .paused,
           try stores.contains(where: { try $0.records(table: SchedulerCore.pausedTable).contains { $0.key.utf8.elementsEqual(search.template.utf8) } }) {
            search.state = nil
        }
        return SearchPage.merged(try stores.map { try $0.searchInstances(search, cursor: cursor, limit: limit) }, limit: limit) {
            InstanceSearch.precedes($0.key, $1.key)
        }
    }

    /// A page of `search`'s results among every store's runs, newest start first (ties: the
    /// higher run id), with their kept output and the page's position.
    package func searchRuns(_ search: RunSearch, cursor: SearchCursor<RunPosition>?, limit: Int) throws -> SearchPage<RunRecord> {
        // One identifier's runs are in its store.
        let stores = search.identifier.map { [store(of: $0)] } ?? stores
        let pages = try stores.map { try $0.searchRuns(search, cursor: cursor, limit: limit) }
        var page = SearchPage.merged(pages, limit: limit) { RunPosition.precedes(RunPosition($0), RunPosition($1)) }
        // Their kept output, store by store, back in the page's order.
        var kept: [Int64: RunRecord] = [:]
        for (index, store) in stores.enumerated() {
            let mine = Set(pages[index].items.map(\.runID))
            for run in try store.withKeptOutput(page.items.filter { mine.contains($0.runID) }) { kept[run.runID] = run }
        }
        page.items = page.items.map { kept[$0.runID] ?? $0 }
        return page
    }

    /// `template`'s instances counted by state in every store (`InstanceCounts`, each store's
    /// on its indexes). A paused template (its pause may be saved in another store than an
    /// instance's) pauses every instance.
    package func instanceCounts(of template: String) throws -> InstanceCounts {
        var counts = try stores.reduce(InstanceCounts()) { $0 + (try $1.instanceCounts(of: template)) }
        if try stores.contains(where: { try $0.records(table: SchedulerCore.pausedTable).contains { $0.key.utf8.elementsEqual(template.utf8) } }) {
            counts.paused = counts.count
        }
        return counts
    }

    /// The state of each of `identifiers`, each read from the store that holds it.
    package func states(of identifiers: [String]) throws -> [String: IdentifierState] {
        guard stores.count > 1 else { return try stores[0].states(of: identifiers) }
        var all: [String: IdentifierState] = [:]
        for (_, group) in Dictionary(grouping: identifiers, by: { ObjectIdentifier(store(of: $0)) }) {
            all.merge(try store(of: group[0]).states(of: group), uniquingKeysWith: { a, _ in a })
        }
        return all
    }

    /// Each of a template's instances (`keys`) as a list row shows it: its state with its
    /// providers' (`TEMPLATE[KEY]#family` for each of `families`, a timeline template's) folded
    /// in, so an instance whose widget's provider fails is failing.
    package func instanceStates(template: String, keys: [String], families: [String]) throws -> [String: IdentifierState] {
        var parts: [String: [String]] = [:]
        for key in keys {
            let id = InstanceName.identifier(template: template, key: key)
            parts[key] = [id] + families.map { WidgetSpec.providerIdentifier(job: id, family: $0) }
        }
        let states = try self.states(of: parts.values.flatMap { $0 })
        return parts.mapValues { ids in IdentifierState.folded(ids.compactMap { states[$0] }) }
    }

    /// How many instances `template` has, in every store.
    package func instanceCount(of template: String) throws -> Int {
        try stores.reduce(0) { $0 + (try $1.instanceCount(of: template)) }
    }

    /// The instance `identifier` (`TEMPLATE[KEY]`), from the store that holds it.
    package func instance(_ identifier: String) throws -> InstanceRecord? {
        guard let split = InstanceName.split(identifier) else { return nil }
        return try store(of: identifier).instance(of: split.template, key: split.key)
    }
}
