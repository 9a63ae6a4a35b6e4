import RefreshdCore

/// The SQLite store is the durable implementation of the runtime's store protocol.
extension StateStore: StateStoring {}

extension StateStore {
    /// Commits one event's changes in one transaction (`BEGIN IMMEDIATE … COMMIT`).
    ///
    /// Either every change is written and durable when this returns, or none is: any error rolls
    /// the whole batch back and is thrown. An empty batch opens no transaction. After the commit
    /// it checks that the files written are still the state's (`checkFilesInPlace`): if not,
    /// it throws `.vanished` (the batch is in no file a restart reads).
    ///
    /// - `savePending` inserts or replaces the identifier's pending request.
    /// - `deletePending` removes it (no error if there is none).
    /// - `runStarted` inserts the run (a duplicate run id is an error).
    /// - `runEnded` sets the end of an unfinished run of that identifier; an unknown, already
    ///   ended, or mismatched run is an `.invalidChange` error.
    /// - `counters` replaces a job's row for a day with what the core counted.
    /// - `runOutput` sets what a run's row keeps of its output (no error if there is no row).
    /// - `failureStreak` sets the identifier's streak.
    /// - `putRecord` inserts or replaces a machine record; `deleteRecord` removes it.
    /// - `saveInstance` inserts or replaces an instance (a replaced one keeps its place);
    ///   `deleteInstance` removes it (no error if there is none).
    /// - `pruneRuns` deletes the runs that ended before the instant, except each identifier's
    ///   latest run, and the world's events (`WorldEvent` records) before it.
    package func apply(_ changes: [StateChange]) throws(StoreError) {
        guard !changes.isEmpty else { return }
        try requireWritable(SQL.context)
        try connection.transaction(context: SQL.context) { () throws(StoreError) in
            for change in changes {
                do throws(StoreError) {
                    try write(change)
                } catch {
                    var described = error
                    described.context = "\(SQL.context) (\(change))"
                    throw described
                }
            }
        }
        // After the commit: a batch that went into a deleted or replaced file is not durable,
        // and nothing may act on it.
        try checkFilesInPlace(SQL.context)
    }

    private func write(_ change: StateChange) throws(StoreError) {
        switch change {
        case let .savePending(p):
            try connection.run(SQL.savePending, [
                .text(p.identifier), .text(p.namespace), .text(p.kind.rawValue),
                .integer(p.earliest.milliseconds), .integer(p.submitted.milliseconds),
                .integer(Int64(bitPattern: p.sequence)), .bool(p.requiresExternalPower),
                .bool(p.requiresNetworkConnectivity), .text(p.origin.rawValue),
            ], context: SQL.context)
        case let .deletePending(identifier, _):
            try connection.run(SQL.deletePending, [.text(identifier)], context: SQL.context)
        case let .runStarted(r):
            try connection.run(SQL.insertRun, [
                .integer(r.runID), .text(r.identifier), .text(r.kind.rawValue),
                .integer(r.submitted.milliseconds), .integer(r.earliest.milliseconds),
                .integer(r.started.milliseconds), .integer(r.deadline.milliseconds), .int(r.attempt),
                .optional(r.ended?.milliseconds), .optional(r.outcome?.rawValue), .optional(r.exitStatus),
                .optional(r.signal), .optional(r.processGroup),
                .optional(r.processStartTicks.map { Int64(bitPattern: $0) }),
            ], context: SQL.context)
        case let .runEnded(runID, identifier, ended, outcome, exitStatus, signal, _, reason, usage):
            let changed = try connection.run(SQL.endRun, [
                .integer(ended.milliseconds), .text(outcome.rawValue), .optional(exitStatus),
                .optional(signal), .optional(reason), .optional(usage.cpuMicroseconds),
                .optional(usage.peakMemoryBytes), .integer(runID), .text(identifier),
            ], context: SQL.context)
            guard changed == 1 else {
                throw StoreError(kind: .invalidChange, path: path, context: SQL.context,
                                 detail: "no unfinished run \(runID) of \(identifier) to end")
            }
        case let .runOutput(runID, output):
            try connection.run(SQL.keepOutput, [
                .optional(RunOutput.joined(output.lines)), .optional(output.earlier == 0 ? nil : Int64(output.earlier)),
                .optional(RunOutput.joined(output.results)), .integer(runID),
            ], context: SQL.context)
        case let .failureStreak(identifier, count, _):
            try connection.run(SQL.setFailureStreak, [.text(identifier), .int(count)], context: SQL.context)
        case let .counters(c):
            try connection.run(SQL.setCounters, [
                .text(c.day), .text(c.identifier), .int(c.launches), .int(c.successes), .int(c.failures),
                .int(c.expired), .int(c.crashed), .int(c.interrupted), .int(c.missed),
            ], context: SQL.context)
        case let .processStarted(runID, processGroup, startTicks):
            let changed = try connection.run(SQL.recordProcess, [
                .integer(Int64(processGroup)), .optional(startTicks.map { Int64(bitPattern: $0) }), .integer(runID),
            ], context: SQL.context)
            guard changed == 1 else {
                throw StoreError(kind: .invalidChange, path: path, context: SQL.context, detail: "no run \(runID)")
            }
        case let .pruneRuns(cutoff):
            try connection.run(SQL.pruneRuns, [.integer(cutoff.milliseconds)], context: SQL.context)
            try connection.run(SQL.pruneWorld, [.text(WorldEvent.table), .text(WorldEvent.key(from: cutoff))], context: SQL.context)
        case let .seedSpec(identifier, spec, _):
            try connection.run(SQL.setSeedSpec, [.text(identifier), .text(spec)], context: SQL.context)
        case let .putRecord(record):
            try connection.run(SQL.putRecord, [.text(record.table), .text(record.key), .text(record.value)],
                               context: SQL.context)
        case let .deleteRecord(table, key):
            try connection.run(SQL.deleteRecord, [.text(table), .text(key)], context: SQL.context)
        case let .saveInstance(record):
            try connection.run(SQL.saveInstance, [.text(record.template), .text(record.key), .text(record.valuesText)],
                               context: SQL.context)
        case let .deleteInstance(template, key):
            try connection.run(SQL.deleteInstance, [.text(template), .text(key)], context: SQL.context)
        }
    }
}

/// The SQL of the write path, each string a key of the statement cache.
private enum SQL {
    static let context = "applying state changes"

    static let savePending = """
        INSERT INTO pending (identifier, namespace, kind, earliest, submitted, sequence,
                             requires_power, requires_network, origin)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (identifier) DO UPDATE SET
            namespace = excluded.namespace, kind = excluded.kind, earliest = excluded.earliest,
            submitted = excluded.submitted, sequence = excluded.sequence,
            requires_power = excluded.requires_power, requires_network = excluded.requires_network,
            origin = excluded.origin
        """
    static let deletePending = "DELETE FROM pending WHERE identifier = ?"
    static let insertRun = """
        INSERT INTO runs (run_id, identifier, kind, submitted, earliest, started, deadline, attempt,
                          ended, outcome, exit_status, signal, process_group, process_start_ticks)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
    static let endRun = """
        UPDATE runs SET ended = ?, outcome = ?, exit_status = ?, signal = ?, reason = ?, cpu_usec = ?,
                        peak_memory = ?
        WHERE run_id = ? AND identifier = ? AND ended IS NULL
        """
    static let keepOutput = "UPDATE runs SET output = ?, output_earlier = ?, results = ? WHERE run_id = ?"
    static let recordProcess = "UPDATE runs SET process_group = ?, process_start_ticks = ? WHERE run_id = ?"
    static let setFailureStreak = """
        INSERT INTO job_state (identifier, failure_streak) VALUES (?, ?)
        ON CONFLICT (identifier) DO UPDATE SET failure_streak = excluded.failure_streak
        """
    static let setSeedSpec = """
        INSERT INTO job_state (identifier, seed_spec) VALUES (?, ?)
        ON CONFLICT (identifier) DO UPDATE SET seed_spec = excluded.seed_spec
        """

    static let putRecord = """
        INSERT INTO records (table_name, key, value) VALUES (?, ?, ?)
        ON CONFLICT (table_name, key) DO UPDATE SET value = excluded.value
        """
    static let deleteRecord = "DELETE FROM records WHERE table_name = ? AND key = ?"
    static let saveInstance = """
        INSERT INTO instances (template, key, parameter_values) VALUES (?, ?, ?)
        ON CONFLICT (template, key) DO UPDATE SET parameter_values = excluded.parameter_values
        """
    static let deleteInstance = "DELETE FROM instances WHERE template = ? AND key = ?"
    /// The world's events go with the runs (`WorldEvent`: keys sort in time order).
    static let pruneWorld = "DELETE FROM records WHERE table_name = ? AND key < ?"
    static let pruneRuns = """
        DELETE FROM runs WHERE ended IS NOT NULL AND ended < ?
        AND run_id NOT IN (SELECT MAX(run_id) FROM runs GROUP BY identifier)
        """

    /// A day's counters as the core counted them: the row is replaced, nothing is derived.
    static let setCounters = """
        INSERT INTO daily_counters (day, identifier, launches, successes, failures, expired, crashed,
                                    interrupted, missed)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (day, identifier) DO UPDATE SET
            launches = excluded.launches, successes = excluded.successes, failures = excluded.failures,
            expired = excluded.expired, crashed = excluded.crashed, interrupted = excluded.interrupted,
            missed = excluded.missed
        """
}
