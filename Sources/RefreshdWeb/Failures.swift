@_spi(Benchmarks) import RefreshdCore
@_spi(Benchmarks) import RefreshdRuntime

/// `/failures` and `/api/failures` (issue 33): what is failing, in one place. Facts only: the
/// failure streaks and pending requests are the core's, the runs the store's, the held and
/// given-up notifications the runtime's; whether retries are exhausted is the retry policy's
/// own `delay(forAttempt:)`, as `why` reads it. Retry now is the control server's `submit`.
struct FailuresData: Codable, Sendable {
    var now: Instant
    /// Jobs and instances failing with a retry still to come: its next attempt.
    var retrying: [FailureRow]
    /// Jobs and instances whose failures used every retry their policy allows (or that have no
    /// retry policy): nothing retries them; a regular next run, if any, is `next`.
    var exhausted: [FailureRow]
    /// More failing identifiers than the rows shown (`Views.maxFailureRows` a list).
    var more: Int
    /// Runs of the last 24 h that expired or crashed, newest first (at most 100).
    var expiredOrCrashed: [StatusReport.Run]
    /// Failure notifications held (being retried) and those given up or dropped.
    var notifications: NotificationsData
    var actionsEnabled: Bool
}

/// One failing job or instance.
struct FailureRow: Codable, Sendable {
    var identifier: String
    /// Consecutive failed attempts.
    var retryStreak: Int
    /// Its pending request's earliest begin date: the next attempt (retrying) or its next
    /// regular run (exhausted); none when nothing is pending.
    var next: Instant?
    var lastRun: StatusReport.Run?
    /// The pause that holds it, if any (a paused job's retry waits for the resume).
    var paused: SchedulerSnapshot.Paused?
}

extension Views {
    /// The most rows of each failing list on the page (and retried by its bulk button).
    static let maxFailureRows = 500

    static func failures(_ live: Live, window: [RunRecord], status: StatusReport, notifications: NotificationsData,
                         actionsEnabled: Bool) -> FailuresData {
        let pending = Dictionary(live.snapshot.pending.map { ($0.identifier, $0) }, uniquingKeysWith: { a, _ in a })
        let lastRuns = Dictionary(status.jobs.map { ($0.identifier, $0.lastRun) }, uniquingKeysWith: { a, _ in a })
        var retrying: [FailureRow] = []
        var exhausted: [FailureRow] = []
        for streak in live.snapshot.failureStreaks {
            let id = streak.identifier
            let row = FailureRow(identifier: id, retryStreak: streak.count, next: pending[id]?.earliest, lastRun: lastRuns[id],
                                 paused: WhyFacts.pause(of: id, among: live.snapshot.paused ?? []))
            // The retry policy decides, as `why` reads it: no delay for the next attempt means
            // no retry comes (no policy at all: none ever did).
            let retry = live.definitions[id]?.retry
            if let retry, retry.delay(forAttempt: streak.count) != nil {
                retrying.append(row)
            } else {
                exhausted.append(row)
            }
        }
        // The next attempt first; the longest streaks first.
        retrying.sort { ($0.next ?? .latest, $0.identifier) < ($1.next ?? .latest, $1.identifier) }
        exhausted.sort { ($1.retryStreak, $0.identifier) < ($0.retryStreak, $1.identifier) }
        let more = max(0, retrying.count - maxFailureRows) + max(0, exhausted.count - maxFailureRows)
        let broken = window.filter { $0.outcome == .expired || $0.outcome == .crashed }.prefix(100).map(StatusReport.Run.init)
        return FailuresData(now: live.now, retrying: Array(retrying.prefix(maxFailureRows)),
                            exhausted: Array(exhausted.prefix(maxFailureRows)), more: more,
                            expiredOrCrashed: Array(broken), notifications: notifications, actionsEnabled: actionsEnabled)
    }
}
