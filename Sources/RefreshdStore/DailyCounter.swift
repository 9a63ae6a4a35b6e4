import RefreshdCore

/// How many runs of one job launched and how they ended, on one UTC day.
///
/// Launches are counted on the day a run started, outcomes on the day it ended, so a run that
/// crosses midnight counts its launch on one day and its outcome on the next. Kept forever (a
/// row per job and day) for `refreshd status`.
public struct DailyCounter: Sendable, Hashable {
    /// The UTC day, `YYYY-MM-DD` (`ISO8601.day`).
    public var day: String
    public var identifier: String
    public var launches: Int
    public var successes: Int
    public var failures: Int
    public var expired: Int
    public var crashed: Int
    public var interrupted: Int
    /// Calendar slots that passed unrun (downtime, sleep, clock steps).
    public var missed: Int = 0

    public init(day: String, identifier: String, launches: Int = 0, successes: Int = 0,
                failures: Int = 0, expired: Int = 0, crashed: Int = 0, interrupted: Int = 0,
                missed: Int = 0) {
        self.missed = missed
        self.day = day
        self.identifier = identifier
        self.launches = launches
        self.successes = successes
        self.failures = failures
        self.expired = expired
        self.crashed = crashed
        self.interrupted = interrupted
    }

    /// The count of runs that ended with `outcome`.
    public func count(of outcome: Outcome) -> Int {
        switch outcome {
        case .success: successes
        case .failure: failures
        case .expired: expired
        case .crashed: crashed
        case .interrupted: interrupted
        }
    }
}

extension StateStore {
    /// Per-day counters, newest day first, then by identifier.
    ///
    /// `days` limits the result to the `days` most recent days that have any counter (not
    /// calendar days back from now: the store reads no clock); nil returns every day.
    public func dailyCounters(days: Int?) throws(StoreError) -> [DailyCounter] {
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
