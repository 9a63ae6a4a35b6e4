import RefreshdCore

// Search and filter (issue 33, item 5), as the SQLite store's `StateStore+Search` (the same rule,
// in PostgreSQL's words), on the indexes of schema version 4. Identifiers, keys and texts are
// bytea: compared, sliced and searched as bytes.

extension PostgresShardStore {
    /// `template`'s instances counted by state, as the SQLite store counts them (the same rule
    /// in PostgreSQL's words), each on the index its search walks: the instances' own rows
    /// (ending in `]`) counted, and a timeline template's providers' rows (`T[K]#family`)
    /// counted by instance (`InstanceSearch.instanceKey(ofIdentifier:)`), none read out.
    func instanceCounts(of template: String) throws -> InstanceCounts {
        let context = "counting shard \(shard)'s instances of \(template) by state"
        let range = InstanceSearch(template: template)
        let count = try instanceCount(of: template)
        return try database.withConnection(context) { (c) throws(PostgresError) -> InstanceCounts in
            let values: [PGValue] = [shardValue, .bytes(range.lowerBound), .bytes(range.upperBound)]
            // Own rows, plus the instances of provider rows (up to the `]` of their first `]#`)
            // that have no row of their own among them.
            func counted(_ rows: String) throws(PostgresError) -> Int {
                let instance = "substring(p.ord FROM 1 FOR position('\\x5d23'::bytea IN p.ord))"
                return try self.count(c, """
                    SELECT count(*) FILTER (WHERE get_byte(p.ord, length(p.ord) - 1) = 93)
                    + count(DISTINCT CASE WHEN position('\\x5d23'::bytea IN p.ord) > 0
                                          AND NOT EXISTS (SELECT 1 FROM (\(rows)) AS o WHERE o.ord = \(instance)) THEN \(instance) END)
                    FROM (\(rows)) AS p
                    """, values, context)
            }
            var counts = InstanceCounts(count: count)
            counts.pending = try counted("SELECT identifier AS ord FROM refreshd.pending WHERE shard = $1 AND identifier > $2 AND identifier < $3")
            counts.running = try counted("""
                SELECT DISTINCT identifier AS ord FROM refreshd.runs WHERE shard = $1 AND ended IS NULL AND identifier > $2 AND identifier < $3
                """)
            counts.failing = try counted("""
                SELECT identifier AS ord FROM refreshd.job_state WHERE shard = $1 AND failure_streak > 0 AND identifier > $2 AND identifier < $3
                """)
            let paused = PGValue.bytes(SchedulerCore.pausedTable)
            let templatePaused = try self.count(c, "SELECT count(*) FROM refreshd.records WHERE shard = $1 AND table_name = $2 AND key = $3",
                                                [shardValue, paused, .bytes(template)], context)
            // A provider's pause is not its instance's.
            counts.paused = templatePaused > 0 ? count : try self.count(c, """
                SELECT count(*) FROM refreshd.records WHERE shard = $1 AND table_name = $4 AND key > $2 AND key < $3
                AND get_byte(key, length(key) - 1) = 93
                """, values + [paused], context)
            return counts
        }
    }

    /// Each of `identifiers`' state (those with none are left out), each looked up by key as
    /// the SQLite store does: its pending request's earliest, its failure streak, its pause,
    /// its run without an end (one statement), and its latest run (`runs_by_identifier`).
    func states(of identifiers: [String]) throws -> [String: IdentifierState] {
        let context = "reading the state of \(identifiers.count) jobs in shard \(shard)"
        return try database.withConnection(context) { (c) throws(PostgresError) -> [String: IdentifierState] in
            var states: [String: IdentifierState] = [:]
            for id in identifiers {
                let values: [PGValue] = [shardValue, .bytes(id), .bytes(SchedulerCore.pausedTable)]
                let found = try c.execute("""
                    SELECT (SELECT earliest FROM refreshd.pending WHERE shard = $1 AND identifier = $2),
                           (SELECT failure_streak FROM refreshd.job_state WHERE shard = $1 AND identifier = $2),
                           EXISTS (SELECT 1 FROM refreshd.records WHERE shard = $1 AND table_name = $3 AND key = $2),
                           (SELECT run_id FROM refreshd.runs WHERE shard = $1 AND identifier = $2 AND ended IS NULL
                            ORDER BY run_id DESC LIMIT 1)
                    """, values, context: context)
                var state = IdentifierState()
                if found.count > 0 {
                    state.pending = found.optionalInt64(0, 0).map(Instant.init(milliseconds:))
                    state.failureStreak = found.int(0, 1)
                    state.paused = found.bool(0, 2)
                    state.running = found.optionalInt64(0, 3)
                }
                state.lastRun = try runs(c.execute("""
                    SELECT \(SQL.runColumns) FROM refreshd.runs WHERE shard = $1 AND identifier = $2 ORDER BY run_id DESC LIMIT 1
                    """, [shardValue, .bytes(id)], context: context), context).first
                if state != IdentifierState() { states[id] = state }
            }
            return states
        }
    }

    func searchInstances(_ search: InstanceSearch, cursor: SearchCursor<String>?, limit: Int) throws -> SearchPage<InstanceRecord> {
        let context = "searching shard \(shard)'s instances of \(search.template)"
        let (position, forward, inclusive): (String?, Bool, Bool) = switch cursor {
        case nil: (nil, true, false)
        case let .after(key): (key, true, true)
        case let .before(key): (key, false, false)
        }
        return try database.withConnection(context) { (c) throws(PostgresError) -> SearchPage<InstanceRecord> in
            var query = Parameters(shard: shardValue)
            guard let state = search.state else {
                let order = "(key || '\\x5d'::bytea)"
                var filter = "shard = $1 AND template = \(query.add(.bytes(search.template)))"
                if !search.text.isEmpty { filter += " AND position(\(query.add(.bytes(search.text))) IN key) > 0" }
                let total = try count(c, "SELECT count(*) FROM refreshd.instances WHERE \(filter)", query.values, context)
                var before = 0
                var page = query
                if let position {
                    var counting = query
                    before = try count(c, "SELECT count(*) FROM refreshd.instances WHERE \(filter) AND \(order) \(inclusive ? "<=" : "<") "
                                       + counting.add(.bytes(position + "]")), counting.values, context)
                }
                let sql = "SELECT key, parameter_values FROM refreshd.instances WHERE \(filter) AND \(order) \(forward ? ">" : "<") "
                    + page.add(.bytes(position.map { $0 + "]" } ?? "")) + " ORDER BY \(order) \(forward ? "" : "DESC") LIMIT "
                    + page.add(.int8(Int64(max(0, limit))))
                let result = try c.execute(sql, page.values, context: context)
                let rows = (0..<result.count).map {
                    InstanceRecord(template: search.template, key: result.string($0, 0),
                                   values: InstanceRecord.restoredValues(fromText: result.string($0, 1)))
                }
                return SearchPage(items: forward ? rows : rows.reversed(), total: total, beforeCursor: before, forward: forward)
            }
            let (lower, upper) = (query.add(.bytes(search.lowerBound)), query.add(.bytes(search.upperBound)))
            // A provider's state (`T[K]#family`) is its instance's, as the counts fold it: its
            // identifier is cut after the key's `]` (a key holds no `]`).
            let instance = "CASE WHEN position('\\x5d23'::bytea IN identifier) > 0 "
                + "THEN substring(identifier FROM 1 FOR position('\\x5d23'::bytea IN identifier)) ELSE identifier END AS identifier"
            let source = switch state {
            case .pending:
                "SELECT DISTINCT \(instance) FROM refreshd.pending WHERE shard = $1 AND identifier > \(lower) AND identifier < \(upper)"
            case .running:
                "SELECT DISTINCT \(instance) FROM refreshd.runs WHERE shard = $1 AND ended IS NULL AND identifier > \(lower) AND identifier < \(upper)"
            case .failing:
                "SELECT DISTINCT \(instance) FROM refreshd.job_state WHERE shard = $1 AND failure_streak > 0 AND identifier > \(lower) AND identifier < \(upper)"
            case .paused:
                "SELECT key AS identifier FROM refreshd.records WHERE shard = $1 AND table_name = \(query.add(.bytes(SchedulerCore.pausedTable))) "
                    + "AND key > \(lower) AND key < \(upper)"
            }
            var filter = "SELECT identifier FROM (\(source)) AS ids WHERE get_byte(identifier, length(identifier) - 1) = 93"
            if !search.text.isEmpty {
                filter += " AND position(\(query.add(.bytes(search.text))) IN substring(identifier FROM "
                    + "\(query.add(.int4(Int32(search.lowerBound.utf8.count + 1)))))) > 0"
            }
            let total = try count(c, "SELECT count(*) FROM (\(filter)) AS found", query.values, context)
            let boundary = position.map { search.lowerBound + $0 + "]" }
            var before = 0
            if let boundary {
                var counting = query
                before = try count(c, "SELECT count(*) FROM (\(filter)) AS found WHERE identifier \(inclusive ? "<=" : "<") "
                                   + counting.add(.bytes(boundary)), counting.values, context)
            }
            var page = query
            let sql = "SELECT identifier FROM (\(filter)) AS found WHERE identifier \(forward ? ">" : "<") "
                + page.add(.bytes(boundary ?? search.lowerBound)) + " ORDER BY identifier \(forward ? "" : "DESC") LIMIT "
                + page.add(.int8(Int64(max(0, limit))))
            let result = try c.execute(sql, page.values, context: context)
            let keys = (0..<result.count).map { search.key(ofIdentifier: result.string($0, 0)) ?? "" }
            var items: [InstanceRecord] = []
            for key in forward ? keys : keys.reversed() {
                let found = try c.execute("""
                    SELECT parameter_values FROM refreshd.instances WHERE shard = $1 AND template = $2 AND key = $3
                    """, [shardValue, .bytes(search.template), .bytes(key)], context: context)
                items.append(InstanceRecord(template: search.template, key: key,
                                            values: found.count > 0 ? InstanceRecord.restoredValues(fromText: found.string(0, 0)) : [:]))
            }
            return SearchPage(items: items, total: total, beforeCursor: before, forward: forward)
        }
    }

    func searchRuns(_ search: RunSearch, cursor: SearchCursor<RunPosition>?, limit: Int) throws -> SearchPage<RunRecord> {
        let context = "searching shard \(shard)'s runs"
        return try database.withConnection(context) { (c) throws(PostgresError) -> SearchPage<RunRecord> in
            var query = Parameters(shard: shardValue)
            var filter = "shard = $1 AND started >= \(query.add(.int8(search.since?.milliseconds ?? Int64.min))) "
                + "AND started < \(query.add(.int8(search.until?.milliseconds ?? Int64.max)))"
            if let identifier = search.identifier { filter += " AND identifier = \(query.add(.bytes(identifier)))" }
            switch search.ending {
            case nil: break
            case .unfinished?: filter += " AND outcome IS NULL"
            case let .outcomes(list)?:
                filter += " AND outcome IN (" + (list.isEmpty ? "NULL" : list.map { "'\($0.rawValue)'" }.joined(separator: ", ")) + ")"
            }
            let total = try count(c, "SELECT count(*) FROM refreshd.runs WHERE \(filter)", query.values, context)
            var before = 0
            var page = query
            var pageFilter = filter
            var forward = true
            if let cursor {
                let (position, countOp, pageOp): (RunPosition, String, String) = switch cursor {
                case let .after(p): (p, ">=", "<")
                case let .before(p): (p, ">", ">")
                }
                if case .before = cursor { forward = false }
                var counting = query
                before = try count(c, "SELECT count(*) FROM refreshd.runs WHERE \(filter) AND (started, run_id) \(countOp) ("
                                   + counting.add(.int8(position.started.milliseconds)) + ", " + counting.add(.int8(position.runID)) + ")",
                                   counting.values, context)
                pageFilter += " AND (started, run_id) \(pageOp) (" + page.add(.int8(position.started.milliseconds)) + ", "
                    + page.add(.int8(position.runID)) + ")"
            }
            let order = forward ? "DESC" : ""
            let sql = "SELECT \(SQL.runColumns) FROM refreshd.runs WHERE \(pageFilter) ORDER BY started \(order), run_id \(order) LIMIT "
                + page.add(.int8(Int64(max(0, limit))))
            let rows = try runs(c.execute(sql, page.values, context: context), context)
            return SearchPage(items: forward ? rows : rows.reversed(), total: total, beforeCursor: before, forward: forward)
        }
    }

    private func count(_ c: PGConnection, _ sql: String, _ values: [PGValue], _ context: String) throws(PostgresError) -> Int {
        let result = try c.execute(sql, values, context: context)
        return result.count > 0 ? result.int(0, 0) : 0
    }
}

/// A statement's parameters, `$1` the shard, each added one given the next number.
private struct Parameters {
    var values: [PGValue]

    init(shard: PGValue) { values = [shard] }

    mutating func add(_ value: PGValue) -> String {
        values.append(value)
        return "$\(values.count)"
    }
}
