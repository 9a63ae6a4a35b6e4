import RefreshdCore

/// One shard's state in the shared database, as the runtime's store: every `apply` is fenced by
/// the epoch the store was opened with (`PostgresDatabase.store(shard:epoch:)`).
///
/// `apply` is one transaction: it first locks the shard's lease row (`SELECT … FOR UPDATE`) and
/// checks that the epoch is still this store's and the lease has not expired at the database's
/// instant; then it folds the changes exactly as the SQLite `StateStore` does (same refusals,
/// same orders); last, still holding the row lock, it checks the expiry again against
/// `clock_timestamp()` and commits. A failed check throws `ShardFenced` and rolls everything
/// back. An acquire by another node must update that row, so it waits for the lock until this
/// transaction ends and then sees the commit: nothing a fenced node writes can interleave with a
/// new owner's restore (ARCHITECTURE.md, "Fenced commits").
///
/// Run ids: the core hands them out from `restoredState().nextRunID`; an empty shard starts at
/// `shard × ShardMap.runIDSpan + 1` (shard 0 at 1, as SQLite), so the runs of different
/// shards never share an id, and a shard's leaders (one at a time, fenced) continue its range.
/// With runs, the next id is the largest + 1, exactly as SQLite.
///
/// Reads are not fenced; `restoredState` reads one snapshot (REPEATABLE READ).
final class PostgresShardStore: StateStoring, @unchecked Sendable {
    let database: PostgresDatabase
    let shard: Int
    let epoch: Int64
    var shardValue: PGValue { .int4(Int32(shard)) }

    init(database: PostgresDatabase, shard: Int, epoch: Int64) {
        self.database = database
        self.shard = shard
        self.epoch = epoch
    }

    func close() {}

    // MARK: Apply

    /// Why a fenced transaction stopped: the fence, or a database error.
    private enum Stop: Error {
        case fenced(ShardFenced)
        case database(PostgresError)
    }

    func apply(_ changes: [StateChange]) throws {
        guard !changes.isEmpty else { return }
        let context = "applying shard \(shard)'s state changes at epoch \(epoch)"
        var fence: ShardFenced?
        do {
            try database.transaction(context) { (c) throws(PostgresError) in
                guard try checkFence(c, context) else {
                    fence = try currentFence(c, context)
                    throw PostgresError(kind: .invalidArgument, target: database.target, context: context, detail: "fenced")
                }
                PostgresPausePoint.reach(.commitLocked)
                var rows = Rows()
                for change in changes {
                    do throws(PostgresError) {
                        // Saved instances and pending requests go out many rows a statement (a
                        // batch of 100,000 instances was 200,000 round trips); everything else,
                        // in order, after what was gathered before it.
                        if try rows.gather(change, into: self, c, context) { continue }
                        try rows.flush(into: self, c, context)
                        try write(change, c, context)
                    } catch {
                        var described = error
                        if described.kind == .server, described.sqlState == "23505" { described.kind = .invalidChange }
                        described.context = "\(context) (\(change))"
                        throw described
                    }
                }
                do throws(PostgresError) {
                    try rows.flush(into: self, c, context)
                } catch {
                    var described = error
                    described.context = "\(context) (saving instances and pending requests)"
                    throw described
                }
                // The commit's instant: still this epoch's, still unexpired, with the row locked.
                guard try checkFence(c, context) else {
                    fence = try currentFence(c, context)
                    throw PostgresError(kind: .invalidArgument, target: database.target, context: context, detail: "fenced")
                }
            }
        } catch {
            if let fence { throw fence }
            throw error
        }
    }

    /// Locks the shard's lease row and answers whether this store's epoch still holds it,
    /// unexpired at `clock_timestamp()`.
    private func checkFence(_ c: PGConnection, _ context: String) throws(PostgresError) -> Bool {
        let result = try c.execute("""
            SELECT epoch = $2 AND owner IS NOT NULL AND expires_at > clock_timestamp()
            FROM refreshd.leases WHERE shard = $1 FOR UPDATE
            """, [shardValue, .int8(epoch)], context: context)
        return result.count == 1 && result.bool(0, 0)
    }

    private func currentFence(_ c: PGConnection, _ context: String) throws(PostgresError) -> ShardFenced {
        let result = try c.execute("""
            SELECT shard, owner, epoch, \(PostgresDatabase.milliseconds("expires_at")) FROM refreshd.leases WHERE shard = $1
            """, [shardValue], context: context)
        let current = result.count == 1
            ? ShardLease(shard: result.int(0, 0), owner: result.optionalString(0, 1), epoch: result.int64(0, 2),
                         expiresAt: Instant(milliseconds: result.int64(0, 3)))
            : nil
        return ShardFenced(shard: shard, epoch: epoch, current: current)
    }

    private func invalid(_ detail: String, _ context: String) -> PostgresError {
        PostgresError(kind: .invalidChange, target: database.target, context: context, detail: detail)
    }

    private func write(_ change: StateChange, _ c: PGConnection, _ context: String) throws(PostgresError) {
        let s = shardValue
        switch change {
        case .savePending, .saveInstance:
            var rows = Rows()
            _ = try rows.gather(change, into: self, c, context)
            try rows.flush(into: self, c, context)
        case let .deletePending(identifier, _):
            try c.execute("DELETE FROM refreshd.pending WHERE shard = $1 AND identifier = $2", [s, .bytes(identifier)],
                          context: context)
        case let .runStarted(r):
            try c.execute(SQL.insertRun, [
                s, .int8(r.runID), .bytes(r.identifier), .text(r.kind.rawValue), .int8(r.submitted.milliseconds),
                .int8(r.earliest.milliseconds), .int8(r.started.milliseconds), .int8(r.deadline.milliseconds),
                .int8(Int64(r.attempt)), .optional(r.ended?.milliseconds), .optionalText(r.outcome?.rawValue),
                .optional(r.exitStatus), .optional(r.signal), .optional(r.processGroup),
                .optional(r.processStartTicks.map { Int64(bitPattern: $0) }),
            ], context: context)
        case let .runEnded(runID, identifier, ended, outcome, exitStatus, signal, _, reason, usage):
            let result = try c.execute("""
                UPDATE refreshd.runs SET ended = $3, outcome = $4, exit_status = $5, signal = $6, reason = $8,
                                         cpu_usec = $9, peak_memory = $10
                WHERE shard = $1 AND run_id = $2 AND identifier = $7 AND ended IS NULL
                """, [s, .int8(runID), .int8(ended.milliseconds), .text(outcome.rawValue), .optional(exitStatus),
                      .optional(signal), .bytes(identifier), .optionalText(reason), .optional(usage.cpuMicroseconds),
                      .optional(usage.peakMemoryBytes)], context: context)
            guard result.changed == 1 else { throw invalid("no unfinished run \(runID) of \(identifier) to end", context) }
        case let .runOutput(runID, output):
            // bytea: a line a job printed may hold a NUL, which text refuses.
            try c.execute("""
                UPDATE refreshd.runs SET output = $3, output_earlier = $4, results = $5 WHERE shard = $1 AND run_id = $2
                """, [s, .int8(runID), .optionalBytes(RunOutput.joined(output.lines)),
                      .optional(output.earlier == 0 ? nil : Int64(output.earlier)),
                      .optionalBytes(RunOutput.joined(output.results))], context: context)
        case let .failureStreak(identifier, count, _):
            try c.execute("""
                INSERT INTO refreshd.job_state (shard, identifier, failure_streak) VALUES ($1, $2, $3)
                ON CONFLICT (shard, identifier) DO UPDATE SET failure_streak = excluded.failure_streak
                """, [s, .bytes(identifier), .int8(Int64(count))], context: context)
        case let .counters(k):
            try c.execute(SQL.setCounters, [
                s, .text(k.day), .bytes(k.identifier), .int8(Int64(k.launches)), .int8(Int64(k.successes)),
                .int8(Int64(k.failures)), .int8(Int64(k.expired)), .int8(Int64(k.crashed)),
                .int8(Int64(k.interrupted)), .int8(Int64(k.missed)),
            ], context: context)
        case let .processStarted(runID, processGroup, startTicks):
            let result = try c.execute("""
                UPDATE refreshd.runs SET process_group = $3, process_start_ticks = $4 WHERE shard = $1 AND run_id = $2
                """, [s, .int8(runID), .int8(Int64(processGroup)), .optional(startTicks.map { Int64(bitPattern: $0) })],
                context: context)
            guard result.changed == 1 else { throw invalid("no run \(runID)", context) }
        case let .pruneRuns(cutoff):
            try c.execute("""
                DELETE FROM refreshd.runs WHERE shard = $1 AND ended IS NOT NULL AND ended < $2
                AND run_id NOT IN (SELECT max(run_id) FROM refreshd.runs WHERE shard = $1 GROUP BY identifier)
                """, [s, .int8(cutoff.milliseconds)], context: context)
            // The world's events go with the runs (`WorldEvent`: keys sort in time order).
            try c.execute("DELETE FROM refreshd.records WHERE shard = $1 AND table_name = $2 AND key < $3",
                          [s, .bytes(WorldEvent.table), .bytes(WorldEvent.key(from: cutoff))], context: context)
        case let .seedSpec(identifier, spec, _):
            try c.execute("""
                INSERT INTO refreshd.job_state (shard, identifier, seed_spec) VALUES ($1, $2, $3)
                ON CONFLICT (shard, identifier) DO UPDATE SET seed_spec = excluded.seed_spec
                """, [s, .bytes(identifier), .bytes(spec)], context: context)
        case let .putRecord(record) where record.table == ShardCommand.outboxTable:
            // A command for another shard (a sync run's instance lines), queued in this very
            // transaction: sent if and only if this shard's change commits, once (its id). The
            // NOTIFY is delivered at the commit and wakes that shard's leader at once.
            guard let command = ShardCommand(outbox: record), (0..<database.shardCount).contains(command.shard) else {
                throw invalid("an outbox record that is not a command for a shard: \(record.key)", context)
            }
            try c.execute("""
                INSERT INTO refreshd.commands (id, shard, payload) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING
                """, [.text(command.id), .int4(Int32(command.shard)), .text(command.payload)], context: context)
            try c.execute("SELECT pg_notify('refreshd_commands', $1)", [.text("\(command.shard)")], context: context)
        case let .putRecord(record):
            try c.execute("""
                INSERT INTO refreshd.records (shard, table_name, key, value) VALUES ($1, $2, $3, $4)
                ON CONFLICT (shard, table_name, key) DO UPDATE SET value = excluded.value
                """, [s, .bytes(record.table), .bytes(record.key), .bytes(record.value)], context: context)
            if record.table == ShardCommand.appliedTable {
                // The leader applied an operator's command in this transaction: it leaves the queue
                // (its id stays, so a retried enqueue is still refused).
                try c.execute("UPDATE refreshd.commands SET applied = true WHERE shard = $1 AND id = $2",
                              [s, .text(record.key)], context: context)
                // The node that queued it waits for its outcome to answer the operator
                // (`ClusterControl`): told at the commit which command was applied, it reads the
                // outcome of that one only if it waits for it.
                try c.execute("SELECT pg_notify('\(PostgresCommandListener.channel)', $1)",
                              [.text(PostgresCommandListener.appliedPrefix + record.key)], context: context)
            }
        case let .deleteRecord(table, key):
            try c.execute("DELETE FROM refreshd.records WHERE shard = $1 AND table_name = $2 AND key = $3",
                          [s, .bytes(table), .bytes(key)], context: context)
        case let .deleteInstance(template, key):
            try c.execute("DELETE FROM refreshd.instances WHERE shard = $1 AND template = $2 AND key = $3",
                          [s, .bytes(template), .bytes(key)], context: context)
        }
    }

    // MARK: Reads

    func restoredState() throws -> SchedulerCore.RestoredState {
        let context = "reading shard \(shard)'s state to restore"
        return try database.transaction(context, readOnly: true) { (c) throws(PostgresError) -> SchedulerCore.RestoredState in
            let s = shardValue
            let unfinished = try runs(c.execute("""
                SELECT \(SQL.runColumns) FROM refreshd.runs WHERE shard = $1 AND ended IS NULL ORDER BY run_id
                """, [s], context: context), context)
            let jobs = try c.execute("""
                SELECT identifier, failure_streak, seed_spec FROM refreshd.job_state WHERE shard = $1
                """, [s], context: context)
            var streaks: [String: Int] = [:], specs: [String: String] = [:]
            for row in 0..<jobs.count {
                let identifier = jobs.string(row, 0)
                if jobs.int64(row, 1) > 0 { streaks[identifier] = jobs.int(row, 1) }
                if let spec = jobs.optionalString(row, 2) { specs[identifier] = spec }
            }
            let maximum = try c.execute("SELECT max(run_id) FROM refreshd.runs WHERE shard = $1", [s], context: context)
            let records = try c.execute("""
                SELECT table_name, key, value FROM refreshd.records WHERE shard = $1 ORDER BY table_name, key
                """, [s], context: context)
            let instances = try c.execute("""
                SELECT template, key, parameter_values FROM refreshd.instances WHERE shard = $1 ORDER BY position
                """, [s], context: context)
            return SchedulerCore.RestoredState(
                pending: try pending(c, context),
                unfinishedRuns: unfinished,
                failureStreaks: streaks,
                nextRunID: try nextRunID(after: maximum.optionalInt64(0, 0), context),
                seedSpecs: specs,
                counters: try counters(c, days: 1, context),
                records: (0..<records.count).map {
                    MachineRecord(table: records.string($0, 0), key: records.string($0, 1), value: records.string($0, 2))
                },
                instances: (0..<instances.count).map {
                    InstanceRecord(template: instances.string($0, 0), key: instances.string($0, 1),
                                   values: InstanceRecord.restoredValues(fromText: instances.string($0, 2)))
                })
        }
    }

    /// One past the largest run id; an empty shard starts its range (see the type's comment).
    private func nextRunID(after maximum: Int64?, _ context: String) throws(PostgresError) -> Int64 {
        let base = Int64(shard) * ShardMap.runIDSpan
        guard let maximum else { return base + 1 }
        guard maximum < Int64.max else {
            throw PostgresError(kind: .corrupt, target: database.target, context: context,
                                detail: "run id \(maximum) leaves no next run id")
        }
        if maximum >= base, maximum - base >= ShardMap.runIDSpan - 1, shard + 1 < database.shardCount {
            throw PostgresError(kind: .corrupt, target: database.target, context: context,
                                detail: "shard \(shard) used up its run ids (run \(maximum)); the next is shard \(shard + 1)'s")
        }
        return maximum + 1
    }

    func instanceID() throws -> String {
        let context = "reading shard \(shard)'s instance id"
        return try database.withConnection(context) { (c) throws(PostgresError) -> String in
            let result = try c.execute("SELECT instance FROM refreshd.leases WHERE shard = $1", [shardValue], context: context)
            return result.count == 1 ? result.string(0, 0) : ""
        }
    }

    func pendingRequests() throws -> [PendingRequest] {
        let context = "reading shard \(shard)'s pending requests"
        return try database.withConnection(context) { (c) throws(PostgresError) in try pending(c, context) }
    }

    func pendingRequest(of identifier: String) throws -> PendingRequest? {
        let context = "reading the pending request of \(identifier) in shard \(shard)"
        return try database.withConnection(context) { (c) throws(PostgresError) in try pending(c, context, of: identifier).first }
    }

    func recentRuns(limit: Int) throws -> [RunRecord] {
        try recentRuns(limit: limit, before: nil)
    }

    func recentRuns(limit: Int, before: Int64?) throws -> [RunRecord] {
        try recentRuns(limit: limit, before: before, withOutput: true)
    }

    func recentRuns(limit: Int, before: Int64?, withOutput: Bool) throws -> [RunRecord] {
        let context = "reading shard \(shard)'s recent runs"
        return try database.withConnection(context) { (c) throws(PostgresError) -> [RunRecord] in
            try runs(c.execute("""
                SELECT \(withOutput ? SQL.runColumnsWithOutput : SQL.runColumns) FROM refreshd.runs
                WHERE shard = $1 AND ($2::bigint IS NULL OR run_id < $2) ORDER BY run_id DESC LIMIT $3
                """, [shardValue, .optional(before), .int8(Int64(max(0, limit)))], context: context), context, withOutput: withOutput)
        }
    }

    /// Through the index by identifier (`runs_by_identifier`), with the kept output, as SQLite's.
    func recentRuns(of identifier: String, limit: Int) throws -> [RunRecord] {
        let context = "reading shard \(shard)'s runs of \(identifier)"
        return try database.withConnection(context) { (c) throws(PostgresError) -> [RunRecord] in
            try runs(c.execute("""
                SELECT \(SQL.runColumnsWithOutput) FROM refreshd.runs WHERE shard = $1 AND identifier = $2
                ORDER BY run_id DESC LIMIT $3
                """, [shardValue, .bytes(identifier), .int8(Int64(max(0, limit)))], context: context), context, withOutput: true)
        }
    }

    func withKeptOutput(_ runs: [RunRecord]) throws -> [RunRecord] {
        guard !runs.isEmpty else { return [] }
        let context = "reading the output of shard \(shard)'s runs"
        let kept = try database.withConnection(context) { (c) throws(PostgresError) -> [Int64: RunRecord] in
            let ids = runs.map { String($0.runID) }.joined(separator: ",")
            let found = try self.runs(c.execute("""
                SELECT \(SQL.runColumnsWithOutput) FROM refreshd.runs WHERE shard = $1 AND run_id = ANY(('{' || $2 || '}')::bigint[])
                """, [shardValue, .text(ids)], context: context), context, withOutput: true)
            return Dictionary(found.map { ($0.runID, $0) }, uniquingKeysWith: { first, _ in first })
        }
        return runs.compactMap { kept[$0.runID] }
    }

    func failureStreaks() throws -> [String: Int] {
        let context = "reading shard \(shard)'s failure streaks"
        return try database.withConnection(context) { (c) throws(PostgresError) -> [String: Int] in
            let result = try c.execute("SELECT identifier, failure_streak FROM refreshd.job_state WHERE shard = $1 AND failure_streak > 0",
                                       [shardValue], context: context)
            return Dictionary((0..<result.count).map { (result.string($0, 0), result.int($0, 1)) }, uniquingKeysWith: { _, last in last })
        }
    }

    func runCounts(since: Instant) throws -> [(identifier: String, outcome: Outcome, count: Int)] {
        let context = "counting shard \(shard)'s runs"
        return try database.withConnection(context) { (c) throws(PostgresError) -> [(identifier: String, outcome: Outcome, count: Int)] in
            let result = try c.execute("""
                SELECT identifier, outcome, count(*) FROM refreshd.runs WHERE shard = $1 AND started >= $2 AND outcome IS NOT NULL
                GROUP BY identifier, outcome ORDER BY identifier, outcome
                """, [shardValue, .int8(since.milliseconds)], context: context)
            return try (0..<result.count).map { (row: Int) throws(PostgresError) in
                (result.string(row, 0), try decode(Outcome.self, result.string(row, 1), "runs", "runs of \(result.string(row, 0))", context),
                 result.int(row, 2))
            }
        }
    }

    func instanceCount(of template: String) throws -> Int {
        let context = "counting shard \(shard)'s instances of \(template)"
        return try database.withConnection(context) { (c) throws(PostgresError) -> Int in
            let result = try c.execute("SELECT count(*) FROM refreshd.instances WHERE shard = $1 AND template = $2",
                                       [shardValue, .bytes(template)], context: context)
            return result.count > 0 ? result.int(0, 0) : 0
        }
    }

    func instance(of template: String, key: String) throws -> InstanceRecord? {
        let context = "reading shard \(shard)'s instance \(template)[\(key)]"
        return try database.withConnection(context) { (c) throws(PostgresError) -> InstanceRecord? in
            let result = try c.execute("""
                SELECT parameter_values FROM refreshd.instances WHERE shard = $1 AND template = $2 AND key = $3
                """, [shardValue, .bytes(template), .bytes(key)], context: context)
            guard result.count > 0 else { return nil }
            return InstanceRecord(template: template, key: key, values: InstanceRecord.restoredValues(fromText: result.string(0, 0)))
        }
    }

    func lastRunPerJob() throws -> [RunRecord] {
        let context = "reading shard \(shard)'s last run of each job"
        return try database.withConnection(context) { (c) throws(PostgresError) -> [RunRecord] in
            try runs(c.execute("""
                SELECT \(SQL.runColumns) FROM refreshd.runs WHERE shard = $1
                AND run_id IN (SELECT max(run_id) FROM refreshd.runs WHERE shard = $1 GROUP BY identifier)
                ORDER BY identifier
                """, [shardValue], context: context), context)
        }
    }

    func dailyCounters(days: Int?) throws -> [DailyCounter] {
        let context = "reading shard \(shard)'s daily counters"
        return try database.withConnection(context) { (c) throws(PostgresError) in try counters(c, days: days, context) }
    }

    func seedSpec(for identifier: String) throws -> String? {
        let context = "reading the seed spec of \(identifier)"
        return try database.withConnection(context) { (c) throws(PostgresError) -> String? in
            let result = try c.execute("SELECT seed_spec FROM refreshd.job_state WHERE shard = $1 AND identifier = $2",
                                       [shardValue, .bytes(identifier)], context: context)
            return result.count == 1 ? result.optionalString(0, 0) : nil
        }
    }

    func records(table: String) throws -> [MachineRecord] {
        let context = "reading shard \(shard)'s \(table) records"
        return try database.withConnection(context) { (c) throws(PostgresError) -> [MachineRecord] in
            let result = try c.execute("""
                SELECT table_name, key, value FROM refreshd.records WHERE shard = $1 AND table_name = $2 ORDER BY key
                """, [shardValue, .bytes(table)], context: context)
            return (0..<result.count).map {
                MachineRecord(table: result.string($0, 0), key: result.string($0, 1), value: result.string($0, 2))
            }
        }
    }

    func instances(of template: String, after: String?, limit: Int) throws -> [InstanceRecord] {
        let context = "reading shard \(shard)'s instances of \(template)"
        return try database.withConnection(context) { (c) throws(PostgresError) -> [InstanceRecord] in
            let result = try c.execute("""
                SELECT key, parameter_values FROM refreshd.instances WHERE shard = $1 AND template = $2
                AND ($3::bytea IS NULL OR key > $3) ORDER BY key LIMIT $4
                """, [shardValue, .bytes(template), .optionalBytes(after), .int8(Int64(max(0, limit)))],
                context: context)
            return (0..<result.count).map {
                InstanceRecord(template: template, key: result.string($0, 0),
                               values: InstanceRecord.restoredValues(fromText: result.string($0, 1)))
            }
        }
    }

    // MARK: Row readers

    /// The shard's pending requests in launch order, or `identifier`'s alone (by key).
    private func pending(_ c: PGConnection, _ context: String, of identifier: String? = nil) throws(PostgresError) -> [PendingRequest] {
        let result = try c.execute("""
            SELECT identifier, namespace, kind, earliest, submitted, sequence, requires_power, requires_network, origin
            FROM refreshd.pending WHERE shard = $1 AND ($2::bytea IS NULL OR identifier = $2) ORDER BY earliest, sequence, position
            """, [shardValue, identifier.map { PGValue.bytes($0) } ?? .null(PGValue.byteaType)], context: context)
        var requests: [PendingRequest] = []
        for row in 0..<result.count {
            let identifier = result.string(row, 0)
            requests.append(PendingRequest(
                identifier: identifier, namespace: result.string(row, 1),
                kind: try decode(TaskKind.self, result.string(row, 2), "pending", identifier, context),
                earliest: Instant(milliseconds: result.int64(row, 3)), submitted: Instant(milliseconds: result.int64(row, 4)),
                sequence: UInt64(bitPattern: result.int64(row, 5)), requiresExternalPower: result.bool(row, 6),
                requiresNetworkConnectivity: result.bool(row, 7),
                origin: try decode(PendingRequest.Origin.self, result.string(row, 8), "pending", identifier, context)))
        }
        return requests
    }

    private func counters(_ c: PGConnection, days: Int?, _ context: String) throws(PostgresError) -> [DailyCounter] {
        let result = try c.execute("""
            SELECT day, identifier, launches, successes, failures, expired, crashed, interrupted, missed
            FROM refreshd.daily_counters WHERE shard = $1 AND ($2::bigint IS NULL OR day IN (
                SELECT DISTINCT day FROM refreshd.daily_counters WHERE shard = $1 ORDER BY day DESC LIMIT $2))
            ORDER BY day DESC, identifier
            """, [shardValue, .optional(days.map { Int64(max(0, $0)) })], context: context)
        return (0..<result.count).map { row in
            DailyCounter(day: result.string(row, 0), identifier: result.string(row, 1), launches: result.int(row, 2),
                         successes: result.int(row, 3), failures: result.int(row, 4), expired: result.int(row, 5),
                         crashed: result.int(row, 6), interrupted: result.int(row, 7), missed: result.int(row, 8))
        }
    }

    func runs(_ result: PGResult, _ context: String, withOutput: Bool = false) throws(PostgresError) -> [RunRecord] {
        var runs: [RunRecord] = []
        for row in 0..<result.count {
            let runID = result.int64(row, 0)
            let outcome: Outcome? = if let raw = result.optionalString(row, 9) {
                try decode(Outcome.self, raw, "runs", "run \(runID)", context)
            } else {
                nil
            }
            var record = RunRecord(
                runID: runID, identifier: result.string(row, 1),
                kind: try decode(TaskKind.self, result.string(row, 2), "runs", "run \(runID)", context),
                submitted: Instant(milliseconds: result.int64(row, 3)), earliest: Instant(milliseconds: result.int64(row, 4)),
                started: Instant(milliseconds: result.int64(row, 5)), deadline: Instant(milliseconds: result.int64(row, 6)),
                attempt: result.int(row, 7), ended: result.optionalInt64(row, 8).map(Instant.init(milliseconds:)),
                outcome: outcome, exitStatus: result.optionalInt32(row, 10), signal: result.optionalInt32(row, 11),
                processGroup: result.optionalInt32(row, 12),
                processStartTicks: result.optionalInt64(row, 13).map { UInt64(bitPattern: $0) })
            record.reason = result.optionalString(row, 14)
            record.usage = RunUsage(cpuMicroseconds: result.optionalInt64(row, 15), peakMemoryBytes: result.optionalInt64(row, 16))
            if withOutput {
                record.output = RunOutput(lines: RunOutput.split(result.optionalString(row, 17)),
                                          earlier: result.optionalInt64(row, 18).map { Int($0) } ?? 0,
                                          results: RunOutput.split(result.optionalString(row, 19)))
            }
            runs.append(record)
        }
        return runs
    }

    private func decode<T: RawRepresentable>(_ type: T.Type, _ raw: String, _ table: String, _ key: String,
                                             _ context: String) throws(PostgresError) -> T where T.RawValue == String {
        guard let value = T(rawValue: raw) else {
            throw PostgresError(kind: .corrupt, target: database.target, context: context,
                                detail: "\(table) row \(key) of shard \(shard) has unknown \(T.self) '\(raw)'")
        }
        return value
    }
}
