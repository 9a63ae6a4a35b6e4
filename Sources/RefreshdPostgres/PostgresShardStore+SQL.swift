import RefreshdCore

/// The rows of one fenced commit that go out many a statement (issue 32: 1,000,000 instances
/// added through a node took 132 s, one round trip for each saved instance and each pending
/// request).
extension PostgresShardStore {
    /// Saved instances and pending requests of one commit, gathered for multi-row statements.
    /// The two tables are independent, so each keeps its own order; a row saved twice, or a
    /// change of another kind, sends what was gathered first (an upsert may not touch one row
    /// twice in a statement, and a later delete must come after the save).
    struct Rows {
        static let limit = 1_000
        var pending: [PendingRequest] = []
        var pendingKeys: Set<String> = []
        var instances: [InstanceRecord] = []
        var instanceKeys: Set<String> = []

        /// Takes `change` if it is a row to gather (true).
        mutating func gather(_ change: StateChange, into store: PostgresShardStore, _ c: PGConnection,
                             _ context: String) throws(PostgresError) -> Bool {
            switch change {
            case let .savePending(p):
                if pending.count == Self.limit || pendingKeys.contains(p.identifier) { try flushPending(store, c, context) }
                pending.append(p)
                pendingKeys.insert(p.identifier)
                return true
            case let .saveInstance(record):
                let key = record.template + "\u{0}" + record.key
                if instances.count == Self.limit || instanceKeys.contains(key) { try flushInstances(store, c, context) }
                instances.append(record)
                instanceKeys.insert(key)
                return true
            default:
                return false
            }
        }

        mutating func flush(into store: PostgresShardStore, _ c: PGConnection, _ context: String) throws(PostgresError) {
            try flushPending(store, c, context)
            try flushInstances(store, c, context)
        }

        mutating func flushPending(_ store: PostgresShardStore, _ c: PGConnection, _ context: String) throws(PostgresError) {
            guard !pending.isEmpty else { return }
            var values: [PGValue] = []
            values.reserveCapacity(pending.count * 10)
            for p in pending {
                values += [store.shardValue, .bytes(p.identifier), .bytes(p.namespace), .text(p.kind.rawValue), .int8(p.earliest.milliseconds),
                           .int8(p.submitted.milliseconds), .int8(Int64(bitPattern: p.sequence)), .bool(p.requiresExternalPower),
                           .bool(p.requiresNetworkConnectivity), .text(p.origin.rawValue)]
            }
            try c.execute(SQL.savePending(rows: pending.count), values, context: context)
            pending.removeAll(keepingCapacity: true)
            pendingKeys.removeAll(keepingCapacity: true)
        }

        mutating func flushInstances(_ store: PostgresShardStore, _ c: PGConnection, _ context: String) throws(PostgresError) {
            guard !instances.isEmpty else { return }
            var values: [PGValue] = []
            values.reserveCapacity(instances.count * 4)
            for record in instances {
                values += [store.shardValue, .bytes(record.template), .bytes(record.key), .bytes(record.valuesText)]
            }
            try c.execute(SQL.saveInstances(rows: instances.count), values, context: context)
            instances.removeAll(keepingCapacity: true)
            instanceKeys.removeAll(keepingCapacity: true)
        }
    }

}

enum SQL {
    static let runColumns = """
        run_id, identifier, kind, submitted, earliest, started, deadline, attempt, ended, outcome,
        exit_status, signal, process_group, process_start_ticks, reason, cpu_usec, peak_memory
        """
    /// With the kept output: a page of runs reads it, the restore and the latest runs do not.
    static let runColumnsWithOutput = runColumns + ", output, output_earlier, results"
    /// `VALUES ($1, ..., $width), ($width+1, ...)...` for `rows` rows.
    static func values(rows: Int, width: Int) -> String {
        var text = "VALUES "
        text.reserveCapacity(rows * width * 6)
        for row in 0..<rows {
            text += row == 0 ? "(" : ", ("
            for column in 1...width { text += (column == 1 ? "$" : ", $") + String(row * width + column) }
            text += ")"
        }
        return text
    }

    static func saveInstances(rows: Int) -> String {
        """
        INSERT INTO refreshd.instances (shard, template, key, parameter_values) \(values(rows: rows, width: 4))
        ON CONFLICT (shard, template, key) DO UPDATE SET parameter_values = excluded.parameter_values
        """
    }

    static func savePending(rows: Int) -> String {
        """
        INSERT INTO refreshd.pending (shard, identifier, namespace, kind, earliest, submitted, sequence,
                                      requires_power, requires_network, origin)
        \(values(rows: rows, width: 10))
        ON CONFLICT (shard, identifier) DO UPDATE SET
            namespace = excluded.namespace, kind = excluded.kind, earliest = excluded.earliest,
            submitted = excluded.submitted, sequence = excluded.sequence,
            requires_power = excluded.requires_power, requires_network = excluded.requires_network,
            origin = excluded.origin
        """
    }
    static let insertRun = """
        INSERT INTO refreshd.runs (shard, run_id, identifier, kind, submitted, earliest, started, deadline, attempt,
                                   ended, outcome, exit_status, signal, process_group, process_start_ticks)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
        """
    static let setCounters = """
        INSERT INTO refreshd.daily_counters (shard, day, identifier, launches, successes, failures, expired, crashed,
                                             interrupted, missed)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
        ON CONFLICT (shard, day, identifier) DO UPDATE SET
            launches = excluded.launches, successes = excluded.successes, failures = excluded.failures,
            expired = excluded.expired, crashed = excluded.crashed, interrupted = excluded.interrupted,
            missed = excluded.missed
        """
}
