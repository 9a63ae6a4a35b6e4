@_spi(Benchmarks) import RefreshdCore

// Search and filter (issue 33, item 5): keyset pages on the indexes of schema version 8, with
// the counts that place a page. See `InstanceSearch` for the rule each state follows.

extension StateStore {
    /// A page of `search`'s results among `template`'s instances.
    ///
    /// Without a state: the instances table through `instances_in_identifier_order`. With one:
    /// the identifiers in the template's range (`TEMPLATE[` to `TEMPLATE\`) of the table that
    /// says it (pending; runs without an end, by `runs_unfinished`; streaks above zero, by
    /// `job_state_failing`; pause records), ending in `]` (not a provider's `T[K]#family`), and
    /// the page's values read by key.
    @_spi(Benchmarks) public func searchInstances(_ search: InstanceSearch, cursor: SearchCursor<String>?,
                                                  limit: Int) throws(StoreError) -> SearchPage<InstanceRecord> {
        let context = "searching the instances of \(search.template)"
        let (position, forward, inclusive): (String?, Bool, Bool) = switch cursor {
        case nil: (nil, true, false)
        case let .after(key): (key, true, true)
        case let .before(key): (key, false, false)
        }
        let limit = SQLValue.int(max(0, limit))
        guard let state = search.state else {
            let text = search.text.isEmpty ? "" : " AND instr(key || ']', ?) > 0"
            let textValue: [SQLValue] = search.text.isEmpty ? [] : [.text(search.text)]
            let total = try count("SELECT count(*) FROM instances WHERE template = ?" + text, [.text(search.template)] + textValue, context)
            var before = 0
            if let position {
                before = try count("SELECT count(*) FROM instances WHERE template = ? AND key || ']' \(inclusive ? "<=" : "<") ?" + text,
                                   [.text(search.template), .text(position + "]")] + textValue, context)
            }
            let rows = try connection.query("""
                SELECT key, parameter_values FROM instances WHERE template = ? AND key || ']' \(forward ? ">" : "<") ?\(text)
                ORDER BY key || ']' \(forward ? "" : "DESC") LIMIT ?
                """, [.text(search.template), .text(position.map { $0 + "]" } ?? "")] + textValue + [limit],
                context: context) { row in
                InstanceRecord(template: search.template, key: row.text(0), values: InstanceRecord.restoredValues(fromText: row.text(1)))
            }
            return SearchPage(items: forward ? rows : rows.reversed(), total: total, beforeCursor: before, forward: forward)
        }
        let source = switch state {
        case .pending: "SELECT identifier FROM pending WHERE identifier > ? AND identifier < ?"
        case .running: "SELECT DISTINCT identifier FROM runs WHERE ended IS NULL AND identifier > ? AND identifier < ?"
        case .failing: "SELECT identifier FROM job_state WHERE failure_streak > 0 AND identifier > ? AND identifier < ?"
        case .paused: "SELECT key AS identifier FROM records WHERE table_name = '\(SchedulerCore.pausedTable)' AND key > ? AND key < ?"
        }
        // The template's own instances (ending in `]`) whose key holds the text: searched in the
        // bytes after `TEMPLATE[`, the key and its `]` (a text holds no `]`).
        var filter = "SELECT identifier FROM (\(source)) WHERE substr(CAST(identifier AS BLOB), -1) = X'5D'"
        var values: [SQLValue] = [.text(search.lowerBound), .text(search.upperBound)]
        if !search.text.isEmpty {
            filter += " AND instr(substr(CAST(identifier AS BLOB), ?), CAST(? AS BLOB)) > 0"
            values += [.int(search.lowerBound.utf8.count + 1), .text(search.text)]
        }
        let total = try count("SELECT count(*) FROM (\(filter))", values, context)
        let boundary = position.map { search.lowerBound + $0 + "]" }
        var before = 0
        if let boundary {
            before = try count("SELECT count(*) FROM (\(filter)) WHERE identifier \(inclusive ? "<=" : "<") ?", values + [.text(boundary)], context)
        }
        let keys = try connection.query("""
            SELECT identifier FROM (\(filter)) WHERE identifier \(forward ? ">" : "<") ?
            ORDER BY identifier \(forward ? "" : "DESC") LIMIT ?
            """, values + [.text(boundary ?? search.lowerBound), limit], context: context) { row in
            search.key(ofIdentifier: row.text(0)) ?? ""
        }
        let items = try (forward ? keys : keys.reversed()).map { (key) throws(StoreError) in
            try instance(of: search.template, key: key) ?? InstanceRecord(template: search.template, key: key, values: [:])
        }
        return SearchPage(items: items, total: total, beforeCursor: before, forward: forward)
    }

    /// A page of `search`'s results among the runs, newest start first, through `runs_by_start`
    /// (or `runs_by_identifier_start` for one identifier's), without their kept output.
    @_spi(Benchmarks) public func searchRuns(_ search: RunSearch, cursor: SearchCursor<RunPosition>?,
                                             limit: Int) throws(StoreError) -> SearchPage<RunRecord> {
        let context = "searching the runs"
        var conditions = ["started >= ?1", "started < ?2"]
        var values: [SQLValue] = [.integer(search.since?.milliseconds ?? Int64.min), .integer(search.until?.milliseconds ?? Int64.max)]
        if let identifier = search.identifier {
            conditions.append("identifier = ?3")
            values.append(.text(identifier))
        }
        switch search.ending {
        case nil: break
        case .unfinished?: conditions.append("outcome IS NULL")
        case let .outcomes(list)?:
            conditions.append("outcome IN (" + (list.isEmpty ? "NULL" : list.map { "'\($0.rawValue)'" }.joined(separator: ", ")) + ")")
        }
        let filter = conditions.joined(separator: " AND ")
        let placeholder = values.count + 1
        let total = try count("SELECT count(*) FROM runs WHERE \(filter)", values, context)
        var before = 0
        var page = ""
        var pageValues = values
        switch cursor {
        case nil: break
        case let .after(position):
            before = try count("SELECT count(*) FROM runs WHERE \(filter) AND (started, run_id) >= (?\(placeholder), ?\(placeholder + 1))",
                               values + [.integer(position.started.milliseconds), .integer(position.runID)], context)
            page = " AND (started, run_id) < (?\(placeholder), ?\(placeholder + 1))"
            pageValues += [.integer(position.started.milliseconds), .integer(position.runID)]
        case let .before(position):
            before = try count("SELECT count(*) FROM runs WHERE \(filter) AND (started, run_id) > (?\(placeholder), ?\(placeholder + 1))",
                               values + [.integer(position.started.milliseconds), .integer(position.runID)], context)
            page = " AND (started, run_id) > (?\(placeholder), ?\(placeholder + 1))"
            pageValues += [.integer(position.started.milliseconds), .integer(position.runID)]
        }
        let forward: Bool
        if case .before = cursor { forward = false } else { forward = true }
        let rows = try connection.query("""
            SELECT \(Query.runColumns) FROM runs WHERE \(filter)\(page)
            ORDER BY started \(forward ? "DESC" : ""), run_id \(forward ? "DESC" : "") LIMIT ?\(pageValues.count + 1)
            """, pageValues + [.int(max(0, limit))], context: context, runRecord)
        return SearchPage(items: forward ? rows : rows.reversed(), total: total, beforeCursor: before, forward: forward)
    }

    private func count(_ sql: String, _ values: [SQLValue], _ context: String) throws(StoreError) -> Int {
        try connection.query(sql, values, context: context) { $0.int(0) }.first ?? 0
    }
}
