/// How many runs of one job launched and how they ended, on one UTC day.
///
/// Launches are counted on the day a run started, outcomes on the day it ended, so a run that
/// crosses midnight counts its launch on one day and its outcome on the next. Kept forever (a
/// row per job and day) for `refreshd status`.
package struct DailyCounter: Sendable, Hashable {
    /// The UTC day, `YYYY-MM-DD` (`ISO8601.day`).
    package var day: String
    package var identifier: String
    package var launches: Int
    package var successes: Int
    package var failures: Int
    package var expired: Int
    package var crashed: Int
    package var interrupted: Int
    /// Calendar slots that passed unrun (downtime, sleep, clock steps).
    package var missed: Int = 0
    /// The identifier's slot in the core's table, when the core counted it (`SlotHint`).
    package var slot: SlotHint = .none

    package init(day: String, identifier: String, launches: Int = 0, successes: Int = 0,
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
    package func count(of outcome: Outcome) -> Int {
        switch outcome {
        case .success: successes
        case .failure: failures
        case .expired: expired
        case .crashed: crashed
        case .interrupted: interrupted
        }
    }
}

extension DailyCounter {
    /// Counts one run that ended with `outcome`.
    package mutating func count(_ outcome: Outcome) {
        switch outcome {
        case .success: successes += 1
        case .failure: failures += 1
        case .expired: expired += 1
        case .crashed: crashed += 1
        case .interrupted: interrupted += 1
        }
    }
}

/// The core's counters of the current UTC day, one row per identifier: found through the
/// caller's slot hint, comparing one name (a launch and an end carry it), or by name, one hash.
struct TodayCounters: Sendable {
    private(set) var rows: [DailyCounter] = []
    /// Row numbers by identifier.
    private var identifiers = HintedNames()

    init() {}

    /// The rows restored at a start (the last of equal identifiers wins).
    init(_ restored: [DailyCounter]) {
        for row in restored { _ = update(row.identifier, hint: .none, making: { row }) { $0 = row } }
    }

    var isEmpty: Bool { rows.isEmpty }

    /// A new day: no row.
    mutating func removeAll() {
        rows.removeAll(keepingCapacity: true)
        identifiers.removeAll()
    }

    /// Changes the identifier's row (made by `making` if it has none) and returns it.
    mutating func update(_ identifier: String, hint: SlotHint, making: () -> DailyCounter,
                         _ body: (inout DailyCounter) -> Void) -> DailyCounter {
        let (number, added) = identifiers.number(of: identifier, hint: hint)
        if added { rows.append(making()) }
        body(&rows[Int(number)])
        return rows[Int(number)]
    }
}
