import RefreshdCore

// Search and filter (issue 33, item 5): keyset pages on the indexes of schema version 8, with
// the counts that place a page. See `InstanceSearch` for the rule each state follows.

extension StateStore {
    /// A page of `search`'s results among `template`'s instances.
    ///
    /// Without a state: the instances table through `instances_in_identifier_order`. With one:
    /// the identifiers in the template's range (`TEMPLATE[` to `TEMPLATE\`) of the table that
    /// says it (pending; runs without an end, by `runs_unfinished`; streaks above zero, by
    /// `job_state_failing`; pause records), a provider's (`T[K]#family`) as its instance's but
    /// for a pause (an instance's own), and the page's values read by key.
    ///
    /// A search of few results (at most `wholeRead`) is read whole in one ordered pass, which
    /// stops there, and paged in memory. One of more is counted in one pass (the total and
    /// those before the cursor together), then its page read from the cursor on the index; the
    /// instances without a text or state are counted by the template's own index (SQLite counts
    /// a range of an index without reading its rows).
    package func searchInstances(_ search: InstanceSearch, cursor: SearchCursor<String>?,
                                                  limit: Int) throws(StoreError) -> SearchPage<InstanceRecord> {
        let context = "searching the instances of \(search.template)"
        let (position, forward, inclusive): (String?, Bool, Bool) = switch cursor {
        case nil: (nil, true, false)
        case let .after(key): (key, true, true)
        case let .before(key): (key, false, false)
        }
        // The matches' keys in identifier order (`order`: the ordering expression; `rows`: the
        // filtered rows with that expression as `ord`), what places `position` in that order.
        let rows: String, values: [SQLValue], boundary: String?, keyOf: (String) -> String
        // The values a page is read with: an identifier source's range starts (or ends) at the
        // cursor itself, so the walk seeks it rather than stepping from the range's start.
        var pageValues: [SQLValue]
        if let state = search.state {
            // A provider's state (`T[K]#family`) is its instance's, as the counts fold it: its
            // identifier is cut after the key's `]` (a key holds no `]`).
            let instance = "CASE WHEN instr(identifier, ']#') > 0 THEN substr(identifier, 1, instr(identifier, ']#')) ELSE identifier END"
            // A range of instances' own pending rows alone (the usual case: no provider's, none
            // in `pending_not_own`) is walked and counted on the primary key as it is: folding
            // each row (`DISTINCT` over the expression) sorted a million rows a search (1.6 s).
            var ownRowsOnly = false
            if state == .pending { ownRowsOnly = try !pendingHoldsOtherRows(search, context) }
            let source = switch state {
            case .pending where ownRowsOnly: "SELECT identifier AS ord FROM pending WHERE identifier > ? AND identifier < ?"
            case .pending: "SELECT DISTINCT \(instance) AS ord FROM pending WHERE identifier > ? AND identifier < ?"
            case .running: "SELECT DISTINCT \(instance) AS ord FROM runs WHERE ended IS NULL AND identifier > ? AND identifier < ?"
            case .failing: "SELECT DISTINCT \(instance) AS ord FROM job_state WHERE failure_streak > 0 AND identifier > ? AND identifier < ?"
            case .paused: "SELECT key AS ord FROM records WHERE table_name = '\(SchedulerCore.pausedTable)' AND key > ? AND key < ?"
            }
            // The template's own instances (ending in `]`) whose key holds the text: searched in
            // the bytes after `TEMPLATE[`, the key and its `]` (a text holds no `]`).
            // (The text first: the ending is then checked for its matches only.)
            var filter = "SELECT ord FROM (\(source)) WHERE "
            var bound: [SQLValue] = [.text(search.lowerBound), .text(search.upperBound)]
            if !search.text.isEmpty, InstanceSearch.contains(Array(search.template.utf8), Array(search.text.utf8)) {
                filter += "instr(substr(CAST(ord AS BLOB), ?), CAST(? AS BLOB)) > 0 AND "
                bound += [.int(search.lowerBound.utf8.count + 1), .text(search.text)]
            } else if !search.text.isEmpty {
                // Not in the template's name, and a text (key bytes) cannot hold its `[`: found
                // in the identifier, it is in the key.
                filter += "instr(ord, ?) > 0 AND "
                bound += [.text(search.text)]
            }
            filter += ownRowsOnly ? "1" : "ord GLOB '*]'"
            (rows, values) = (filter, bound)
            boundary = position.map { search.lowerBound + $0 + "]" }
            keyOf = { search.key(ofIdentifier: $0) ?? "" }
            pageValues = values
            if let boundary { pageValues[forward ? 0 : 1] = .text(boundary) }
        } else {
            let text = search.text.isEmpty ? "" : " AND instr(key || ']', ?) > 0"
            rows = "SELECT key || ']' AS ord FROM instances WHERE template = ?" + text
            values = [.text(search.template)] + (search.text.isEmpty ? [] : [.text(search.text)])
            boundary = position.map { $0 + "]" }
            keyOf = { String($0.dropLast()) }
            pageValues = values
        }
        let page: SearchPage<String>
        if search.state == nil, search.text.isEmpty {
            let total = try count("SELECT count(*) FROM instances WHERE template = ?", [.text(search.template)], context)
            var before = 0
            if let boundary {
                before = try count("SELECT count(*) FROM (\(rows)) WHERE ord \(inclusive ? "<=" : "<") ?", values + [.text(boundary)], context)
            }
            page = try keysPage(rows, pageValues, boundary: boundary, forward: forward, limit: limit, total: total, before: before, keyOf, context)
        } else {
            // A text among the instances is first looked for on the template's own index (its
            // keys, without reading rows or making the order's expression), and sorted here.
            let whole = search.state == nil
                ? try connection.query("SELECT key FROM instances WHERE template = ? AND instr(key, ?) > 0 LIMIT ?",
                                       values + [.int(Self.wholeRead + 1)], context: context) { $0.text(0) }
                    .sorted(by: InstanceSearch.precedes)
                : try connection.query("SELECT ord FROM (\(rows)) ORDER BY ord LIMIT ?", values + [.int(Self.wholeRead + 1)],
                                       context: context) { keyOf($0.text(0)) }
            if whole.count <= Self.wholeRead {
                page = SearchPage.of(whole, cursor: cursor, limit: limit,
                                     precedes: InstanceSearch.precedes, follows: { InstanceSearch.precedes($1, $0) })
            } else {
                // A text among the instances is counted on the template's own index (its keys,
                // without reading rows), the order's expression made only for the matches.
                let counted = search.state == nil
                    ? "SELECT key || ']' AS ord FROM instances WHERE template = ? AND instr(key, ?) > 0" : rows
                let counts = try connection.query("""
                    SELECT count(*), count(*) FILTER (WHERE ord \(inclusive ? "<=" : "<") ?) FROM (\(counted))
                    """, [.text(boundary ?? "")] + values, context: context) { ($0.int(0), $0.int(1)) }.first ?? (0, 0)
                page = try keysPage(rows, pageValues, boundary: boundary, forward: forward, limit: limit, total: counts.0,
                                    before: boundary == nil ? 0 : counts.1, keyOf, context)
            }
        }
        return try page.map { (key) throws(StoreError) in
            try instance(of: search.template, key: key) ?? InstanceRecord(template: search.template, key: key, values: [:])
        }
    }

    /// Whether the pending requests in `search`'s template range hold a row that is not an
    /// instance's own (`T[K]`): a provider's (`T[K]#family`) or another; looked up on the partial
    /// index `pending_not_own` (version 9), which holds only such rows.
    func pendingHoldsOtherRows(_ search: InstanceSearch, _ context: String) throws(StoreError) -> Bool {
        try count("""
            SELECT EXISTS (SELECT 1 FROM pending WHERE identifier > ?1 AND identifier < ?2 AND \(Schema.pendingNotOwn))
            """, [.text(search.lowerBound), .text(search.upperBound)], context) != 0
    }

    /// Searches of at most this many results are read whole and paged in memory (a task-local
    /// so the tests can send small searches down the counting path too).
    @TaskLocal package static var wholeRead = 5_000

    /// The keys of a page read from the boundary on, in the rows' order.
    private func keysPage(_ rows: String, _ values: [SQLValue], boundary: String?, forward: Bool, limit: Int, total: Int, before: Int,
                          _ keyOf: (String) -> String, _ context: String) throws(StoreError) -> SearchPage<String> {
        let keys = try connection.query("""
            SELECT ord FROM (\(rows)) WHERE ord \(forward ? ">" : "<") ? ORDER BY ord \(forward ? "" : "DESC") LIMIT ?
            """, values + [.text(boundary ?? ""), .int(max(0, limit))], context: context) { keyOf($0.text(0)) }
        return SearchPage(items: forward ? keys : keys.reversed(), total: total, beforeCursor: before, forward: forward)
    }

    /// A page of `search`'s results among the runs, newest start first, through `runs_by_start`
    /// (or `runs_by_identifier_start` for one identifier's), without their kept output.
    package func searchRuns(_ search: RunSearch, cursor: SearchCursor<RunPosition>?,
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
        var total = 0, before = 0
        var page = ""
        var pageValues = values
        // The cursor narrows the start's range too (?1, ?2), so the index seeks it rather than
        // stepping from the newest run (SQLite seeks one column's range, not a row value's).
        let (since, until) = (search.since?.milliseconds ?? Int64.min, search.until?.milliseconds ?? Int64.max)
        // Counted in one pass: the total, and those newer than the cursor (or as new).
        func counts(_ newer: String, _ position: RunPosition) throws(StoreError) -> (Int, Int) {
            try connection.query("""
                SELECT count(*), count(*) FILTER (WHERE (started, run_id) \(newer) (?\(placeholder), ?\(placeholder + 1))) FROM runs WHERE \(filter)
                """, values + [.integer(position.started.milliseconds), .integer(position.runID)], context: context) {
                ($0.int(0), $0.int(1))
            }.first ?? (0, 0)
        }
        switch cursor {
        case nil:
            total = try count("SELECT count(*) FROM runs WHERE \(filter)", values, context)
        case let .after(position):
            let at = position.started.milliseconds
            (total, before) = try counts(">=", position)
            page = " AND (started, run_id) < (?\(placeholder), ?\(placeholder + 1))"
            pageValues[1] = .integer(at == Int64.max ? until : min(until, at + 1))
            pageValues += [.integer(at), .integer(position.runID)]
        case let .before(position):
            let at = position.started.milliseconds
            (total, before) = try counts(">", position)
            pageValues[0] = .integer(max(since, at))
            page = " AND (started, run_id) > (?\(placeholder), ?\(placeholder + 1))"
            pageValues += [.integer(at), .integer(position.runID)]
        }
        let forward: Bool
        if case .before = cursor { forward = false } else { forward = true }
        let rows = try connection.query("""
            SELECT \(Query.runColumns) FROM runs WHERE \(filter)\(page)
            ORDER BY started \(forward ? "DESC" : ""), run_id \(forward ? "DESC" : "") LIMIT ?\(pageValues.count + 1)
            """, pageValues + [.int(max(0, limit))], context: context, runRecord)
        return SearchPage(items: forward ? rows : rows.reversed(), total: total, beforeCursor: before, forward: forward)
    }

    /// `template`'s instances counted by state (issue 33, item 6), each on the index its search
    /// walks (`searchInstances`): the instances' own rows (ending in `]`) counted, and a timeline
    /// template's providers' rows (`T[K]#family`) counted by instance. No row is read into memory;
    /// at 1,000,000 instances the pending requests' count is the one that costs (one pass of
    /// their primary key's range, with no function a row: `pendingCount`).
    package func instanceCounts(of template: String) throws(StoreError) -> InstanceCounts {
        let context = "counting the instances of \(template) by state"
        let range = InstanceSearch(template: template)
        let bounds: [SQLValue] = [.text(range.lowerBound), .text(range.upperBound)]
        // Own rows, plus the instances of provider rows (`substr` up to the `]` of `]#`) that
        // have no row of their own (looked up by key, for provider rows only).
        func counted(_ rows: String) throws(StoreError) -> Int {
            let instance = "substr(p.ord, 1, instr(p.ord, ']#'))"
            return try count("""
                SELECT count(*) FILTER (WHERE p.ord GLOB '*]')
                + count(DISTINCT CASE WHEN p.ord GLOB '*]#*' AND NOT EXISTS (SELECT 1 FROM (\(rows)) AS o WHERE o.ord = \(instance))
                                 THEN \(instance) END)
                FROM (\(rows)) AS p
                """, bounds, context)
        }
        var counts = InstanceCounts(count: try instanceCount(of: template))
        counts.pending = try pendingCount(bounds, context)
        counts.running = try counted("SELECT DISTINCT identifier AS ord FROM runs WHERE ended IS NULL AND identifier > ?1 AND identifier < ?2")
        counts.failing = try counted("SELECT identifier AS ord FROM job_state WHERE failure_streak > 0 AND identifier > ?1 AND identifier < ?2")
        let templatePaused = try count("SELECT count(*) FROM records WHERE table_name = '\(SchedulerCore.pausedTable)' AND key = ?",
                                       [.text(template)], context)
        counts.paused = templatePaused > 0 ? counts.count : try count("""
            SELECT count(*) FROM records WHERE table_name = '\(SchedulerCore.pausedTable)' AND key > ?1 AND key < ?2 AND key GLOB '*]'
            """, bounds, context)
        return counts
    }

    /// The template's instances with a pending request, by `instanceCounts`' rule (own rows, and
    /// the instances of provider rows `T[K]#family` without one), counted as: every row of the
    /// range (`TEMPLATE[` to `TEMPLATE\`), on the primary key's index alone, less the rows that
    /// do not end in `]`, plus the instances of provider rows that have no row of their own. The
    /// rows a correction reads (a `[` in them, and either no `]` at the end or a `]#`) are the
    /// ones `pending_not_own` (version 9) holds: a provider's, never an instance's own, so among a
    /// million instances and their requests the correction reads none, where the rule tested on
    /// every row (two patterns each) took 244 ms. Without that index (a read-only open of an
    /// older file) the same query scans and answers the same.
    private func pendingCount(_ bounds: [SQLValue], _ context: String) throws(StoreError) -> Int {
        try count(Self.pendingCountQuery, bounds, context)
    }

    /// `pendingCount`'s query, of the range (?1, ?2).
    static let pendingCountQuery = """
        WITH other AS (SELECT identifier AS ord FROM pending WHERE identifier > ?1 AND identifier < ?2
                       AND \(Schema.pendingNotOwn))
        SELECT (SELECT count(*) FROM pending WHERE identifier > ?1 AND identifier < ?2)
        - (SELECT count(*) FROM other WHERE ord NOT GLOB '*]')
        + (SELECT count(DISTINCT substr(p.ord, 1, instr(p.ord, ']#'))) FROM other AS p WHERE p.ord GLOB '*]#*'
           AND NOT EXISTS (SELECT 1 FROM pending WHERE identifier = substr(p.ord, 1, instr(p.ord, ']#'))
                           AND identifier > ?1 AND identifier < ?2))
        """

    /// Each of `identifiers`' state (those with none are left out), each looked up by key: its
    /// pending request's earliest, its run without an end, its failure streak, its pause, and
    /// its latest run (by `runs_by_identifier`, without output).
    package func states(of identifiers: [String]) throws(StoreError) -> [String: IdentifierState] {
        let context = "reading the state of \(identifiers.count) jobs"
        var states: [String: IdentifierState] = [:]
        for id in identifiers {
            let value: [SQLValue] = [.text(id)]
            var state = IdentifierState()
            state.pending = try connection.query("SELECT earliest FROM pending WHERE identifier = ?", value, context: context) {
                Instant(milliseconds: $0.int64(0))
            }.first
            state.failureStreak = try count("SELECT failure_streak FROM job_state WHERE identifier = ?", value, context)
            state.paused = try count("""
                SELECT count(*) FROM records WHERE table_name = '\(SchedulerCore.pausedTable)' AND key = ?
                """, value, context) > 0
            state.lastRun = try connection.query("""
                SELECT \(Query.runColumns) FROM runs WHERE identifier = ? ORDER BY run_id DESC LIMIT 1
                """, value, context: context, runRecord).first
            state.running = try connection.query("""
                SELECT run_id FROM runs WHERE identifier = ? AND ended IS NULL ORDER BY run_id DESC LIMIT 1
                """, value, context: context) { $0.int64(0) }.first
            if state != IdentifierState() { states[id] = state }
        }
        return states
    }

    private func count(_ sql: String, _ values: [SQLValue], _ context: String) throws(StoreError) -> Int {
        try connection.query(sql, values, context: context) { $0.int(0) }.first ?? 0
    }
}
