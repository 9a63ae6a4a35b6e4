import RefreshdCore

extension StateStore {
    /// Per-day counters, newest day first, then by identifier.
    ///
    /// `days` limits the result to the `days` most recent days that have any counter (not
    /// calendar days back from now: the store reads no clock); nil returns every day.
    package func dailyCounters(days: Int?) throws(StoreError) -> [DailyCounter] {
        let columns = "day, identifier, launches, successes, failures, expired, crashed, interrupted, missed"
        let sql: String
        var values: [SQLValue] = []
        if let days {
            sql = """
                SELECT \(columns) FROM daily_counters
                WHERE day IN (SELECT DISTINCT day FROM daily_counters ORDER BY day DESC LIMIT ?)
                ORDER BY day DESC, identifier
                """
            values = [.int(max(0, days))]
        } else {
            sql = "SELECT \(columns) FROM daily_counters ORDER BY day DESC, identifier"
        }
        return try connection.query(sql, values, context: "reading daily counters") { row in
            DailyCounter(day: row.text(0), identifier: row.text(1), launches: row.int(2),
                         successes: row.int(3), failures: row.int(4), expired: row.int(5),
                         crashed: row.int(6), interrupted: row.int(7), missed: row.int(8))
        }
    }
}
