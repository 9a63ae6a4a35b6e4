import RefreshdCore

extension StateStore {
    /// Everything the core needs at start: pending requests, runs in flight when refreshd died
    /// (no end recorded, with their process fields), failure streaks above zero, and the next run
    /// id (one past the largest ever used, 1 for an empty store).
    package func restoredState() throws(StoreError) -> SchedulerCore.RestoredState {
        let context = "reading the state to restore"
        let unfinished = try connection.query(
            "SELECT \(Query.runColumns) FROM runs WHERE ended IS NULL ORDER BY run_id",
            context: context, runRecord)
        // In rowid order, as before the failing index (version 8) could order them by identifier:
        // identifiers equal as Swift strings (é and e + accent) fold into one dictionary entry,
        // the last read, and the in-memory store reads in rowid order too.
        let streaks = try connection.query(
            "SELECT identifier, failure_streak FROM job_state WHERE failure_streak > 0 ORDER BY rowid",
            context: context) { row in (row.text(0), row.int(1)) }
        let maxRunID = try connection.query("SELECT MAX(run_id) FROM runs", context: context) { row in
            row.optionalInt64(0)
        }.first ?? nil
        let specs = try connection.query(
            "SELECT identifier, seed_spec FROM job_state WHERE seed_spec IS NOT NULL",
            context: context) { row in (row.text(0), row.text(1)) }
        return SchedulerCore.RestoredState(
            pending: try pendingRequests(),
            unfinishedRuns: unfinished,
            failureStreaks: Dictionary(streaks, uniquingKeysWith: { _, last in last }),
            nextRunID: try nextRunID(after: maxRunID),
            seedSpecs: Dictionary(specs, uniquingKeysWith: { _, last in last }),
            counters: try dailyCounters(days: 1),
            records: try connection.query("SELECT table_name, key, value FROM records ORDER BY table_name, key",
                                          context: context, machineRecord),
            instances: try instances())
    }

    /// The instances of templates, in the order they were added (issue 23).
    package func instances() throws(StoreError) -> [InstanceRecord] {
        try connection.query("SELECT template, key, parameter_values FROM instances ORDER BY rowid",
                             context: "reading the instances") { row in
            InstanceRecord(template: row.text(0), key: row.text(1), values: InstanceRecord.restoredValues(fromText: row.text(2)))
        }
    }

    /// Each identifier's failure streak above zero.
    package func failureStreaks() throws(StoreError) -> [String: Int] {
        Dictionary(try connection.query("SELECT identifier, failure_streak FROM job_state WHERE failure_streak > 0 ORDER BY rowid",
                                        context: "reading the failure streaks") { row in (row.text(0), row.int(1)) },
                   uniquingKeysWith: { _, last in last })
    }

    /// How many instances `template` has (its UNIQUE (template, key) index counts them).
    package func instanceCount(of template: String) throws(StoreError) -> Int {
        try connection.query("SELECT count(*) FROM instances WHERE template = ?", [.text(template)],
                             context: "counting the instances of \(template)") { Int($0.int64(0)) }.first ?? 0
    }

    /// The instance `template[key]`, if there is one.
    package func instance(of template: String, key: String) throws(StoreError) -> InstanceRecord? {
        try connection.query("SELECT template, key, parameter_values FROM instances WHERE template = ? AND key = ?",
                             [.text(template), .text(key)], context: "reading the instance \(template)[\(key)]") { row in
            InstanceRecord(template: row.text(0), key: row.text(1), values: InstanceRecord.restoredValues(fromText: row.text(2)))
        }.first
    }

    /// A table's machine records, by key (UTF-8 byte order, SQLite's BINARY collation).
    package func records(table: String) throws(StoreError) -> [MachineRecord] {
        try connection.query("SELECT table_name, key, value FROM records WHERE table_name = ? ORDER BY key",
                             [.text(table)], context: "reading the \(table) records", machineRecord)
    }

    private func machineRecord(_ row: Row) -> MachineRecord {
        MachineRecord(table: row.text(0), key: row.text(1), value: row.text(2))
    }

    /// The state's random identifier (16 hex digits), made when the file was created or
    /// migrated to version 3. Every run's processes carry it, so a restart can tell them apart
    /// from the runs of another state directory that happen to share a run number.
    package func instanceID() throws(StoreError) -> String {
        try connection.query("SELECT value FROM meta WHERE key = 'instance'",
                             context: "reading the state's instance id") { row in row.text(0) }.first ?? ""
    }

    /// One past the largest run id; a file whose run ids are used up is refused, not wrapped.
    func nextRunID(after max: Int64?) throws(StoreError) -> Int64 {
        guard let max else { return 1 }
        guard max < Int64.max else {
            throw StoreError(kind: .corrupt, path: path, context: "reading the state to restore",
                             detail: "run id \(max) leaves no next run id")
        }
        return max + 1
    }

    /// Pending requests in launch order: by earliest begin, then submission sequence.
    package func pendingRequests() throws(StoreError) -> [PendingRequest] {
        try pending("ORDER BY earliest, sequence", [], context: "reading pending requests")
    }

    /// One identifier's pending request, by the table's key.
    package func pendingRequest(of identifier: String) throws(StoreError) -> PendingRequest? {
        try pending("WHERE identifier = ?", [.text(identifier)], context: "reading the pending request of \(identifier)").first
    }

    private func pending(_ clause: String, _ values: [SQLValue], context: String) throws(StoreError) -> [PendingRequest] {
        try connection.query("""
            SELECT identifier, namespace, kind, earliest, submitted, sequence, requires_power,
                   requires_network, origin
            FROM pending \(clause)
            """, values, context: context) { (row) throws(StoreError) in
            let identifier = row.text(0)
            return PendingRequest(
                identifier: identifier, namespace: row.text(1),
                kind: try decode(TaskKind.self, row.text(2), "pending", identifier),
                earliest: Instant(milliseconds: row.int64(3)),
                submitted: Instant(milliseconds: row.int64(4)),
                sequence: UInt64(bitPattern: row.int64(5)),
                requiresExternalPower: row.bool(6), requiresNetworkConnectivity: row.bool(7),
                origin: try decode(PendingRequest.Origin.self, row.text(8), "pending", identifier))
        }
    }

    /// The `limit` most recent runs, newest (highest run id) first.
    package func recentRuns(limit: Int) throws(StoreError) -> [RunRecord] {
        try connection.query("SELECT \(Query.runColumnsWithOutput) FROM runs ORDER BY run_id DESC LIMIT ?",
                             [.int(max(0, limit))], context: "reading recent runs", runRecordWithOutput)
    }

    /// The `limit` most recent runs of one identifier, newest first (by the identifier's index).
    package func recentRuns(of identifier: String, limit: Int) throws(StoreError) -> [RunRecord] {
        try connection.query("SELECT \(Query.runColumnsWithOutput) FROM runs WHERE identifier = ? ORDER BY run_id DESC LIMIT ?",
                             [.text(identifier), .int(max(0, limit))], context: "reading the runs of \(identifier)", runRecordWithOutput)
    }

    /// The `limit` most recent runs with a run id below `before` (nil: from the newest).
    package func recentRuns(limit: Int, before: Int64?) throws(StoreError) -> [RunRecord] {
        guard let before else { return try recentRuns(limit: limit) }
        return try connection.query("SELECT \(Query.runColumnsWithOutput) FROM runs WHERE run_id < ? ORDER BY run_id DESC LIMIT ?",
                                    [.integer(before), .int(max(0, limit))], context: "reading recent runs", runRecordWithOutput)
    }

    /// `recentRuns(limit:before:)` without the kept output (`withOutput: false`): for scans of
    /// many runs (the dashboard's 24 h window, a job's runs among all), which then read the
    /// output of the few they show with `keptOutput(of:)`.
    package func recentRuns(limit: Int, before: Int64?, withOutput: Bool) throws(StoreError) -> [RunRecord] {
        if withOutput { return try recentRuns(limit: limit, before: before) }
        return try connection.query("SELECT \(Query.runColumns) FROM runs WHERE run_id < ? ORDER BY run_id DESC LIMIT ?",
                                    [.integer(before ?? Int64.max), .int(max(0, limit))], context: "reading recent runs", runRecord)
    }

    /// The runs given, each with its kept output, in the order given (a run no longer kept is left out).
    package func withKeptOutput(_ runs: [RunRecord]) throws(StoreError) -> [RunRecord] {
        var result: [RunRecord] = []
        for var run in runs {
            let kept = try connection.query("SELECT output, output_earlier, results FROM runs WHERE run_id = ?",
                                            [.integer(run.runID)], context: "reading the output of run \(run.runID)") { row in
                RunOutput(lines: RunOutput.split(row.optionalText(0)), earlier: row.optionalInt64(1).map { Int($0) } ?? 0,
                          results: RunOutput.split(row.optionalText(2)))
            }
            guard let output = kept.first else { continue }
            run.output = output
            result.append(run)
        }
        return result
    }

    /// Finished runs started at or after `since`, counted by identifier and outcome (for
    /// `refreshd stats runs`; one pass over the history, no row per run read into memory).
    package func runCounts(since: Instant) throws(StoreError) -> [(identifier: String, outcome: Outcome, count: Int)] {
        try connection.query("""
            SELECT identifier, outcome, COUNT(*) FROM runs
            WHERE started >= ? AND outcome IS NOT NULL
            GROUP BY identifier, outcome ORDER BY identifier, outcome
            """, [.integer(since.milliseconds)], context: "counting runs") { (row: Row) throws(StoreError) in
            (row.text(0), try decode(Outcome.self, row.text(1), "runs", "runs of \(row.text(0))"), row.int(2))
        }
    }

    /// The latest run (highest run id) of each identifier that ever ran, by identifier.
    package func lastRunPerJob() throws(StoreError) -> [RunRecord] {
        try connection.query("""
            SELECT \(Query.runColumns) FROM runs
            WHERE run_id IN (SELECT MAX(run_id) FROM runs GROUP BY identifier)
            ORDER BY identifier
            """, context: "reading the last run of each job", runRecord)
    }

    /// The seed spec stored by a `.seedSpec` change, or nil.
    package func seedSpec(for identifier: String) throws(StoreError) -> String? {
        try connection.query("SELECT seed_spec FROM job_state WHERE identifier = ?", [.text(identifier)],
                             context: "reading the seed spec of \(identifier)") { row in
            row.optionalText(0)
        }.first ?? nil
    }

    /// A `runs` row selected with `Query.runColumns`.
    func runRecord(_ row: Row) throws(StoreError) -> RunRecord {
        let runID = row.int64(0)
        let outcome: Outcome?
        if let raw = row.optionalText(9) {
            outcome = try decode(Outcome.self, raw, "runs", "run \(runID)")
        } else {
            outcome = nil
        }
        var record = RunRecord(
            runID: runID, identifier: row.text(1),
            kind: try decode(TaskKind.self, row.text(2), "runs", "run \(runID)"),
            submitted: Instant(milliseconds: row.int64(3)), earliest: Instant(milliseconds: row.int64(4)),
            started: Instant(milliseconds: row.int64(5)), deadline: Instant(milliseconds: row.int64(6)),
            attempt: row.int(7), ended: row.optionalInt64(8).map(Instant.init(milliseconds:)),
            outcome: outcome, exitStatus: row.optionalInt32(10), signal: row.optionalInt32(11),
            processGroup: row.optionalInt32(12),
            processStartTicks: row.optionalInt64(13).map { UInt64(bitPattern: $0) })
        record.reason = row.optionalText(14)
        record.usage = RunUsage(cpuMicroseconds: row.optionalInt64(15), peakMemoryBytes: row.optionalInt64(16))
        return record
    }

    /// A `runs` row selected with `Query.runColumnsWithOutput`: the record with its kept output.
    func runRecordWithOutput(_ row: Row) throws(StoreError) -> RunRecord {
        var record = try runRecord(row)
        record.output = RunOutput(lines: RunOutput.split(row.optionalText(17)), earlier: row.optionalInt64(18).map { Int($0) } ?? 0,
                                  results: RunOutput.split(row.optionalText(19)))
        return record
    }

    /// An enumeration from its stored raw value; an unknown value means the file was damaged or
    /// written by something else.
    private func decode<T: RawRepresentable>(_ type: T.Type, _ raw: String, _ table: String,
                                             _ key: String) throws(StoreError) -> T where T.RawValue == String {
        guard let value = T(rawValue: raw) else {
            throw StoreError(kind: .corrupt, path: path, context: "reading \(table)",
                             detail: "\(table) row \(key) has unknown \(T.self) '\(raw)'")
        }
        return value
    }
}

/// SQL shared by the read queries.
enum Query {
    /// The columns `StateStore.runRecord(_:)` reads, in its order.
    static let runColumns = """
        run_id, identifier, kind, submitted, earliest, started, deadline, attempt, ended, outcome,
        exit_status, signal, process_group, process_start_ticks, reason, cpu_usec, peak_memory
        """
    /// `runColumns` and the kept output (`StateStore.runRecordWithOutput(_:)`): the queries of a
    /// page of runs read it, the latest run of every job and the restore do not.
    static let runColumnsWithOutput = runColumns + ", output, output_earlier, results"
}
