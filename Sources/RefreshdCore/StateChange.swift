/// A durable change the shell must commit before acting on the effects that follow it.
///
/// The store applies all changes of one event in one transaction, so a kill -9 at any instant
/// leaves either the state before the event or the state after it.
public enum StateChange: Sendable, Hashable {
    case savePending(PendingRequest)
    case deletePending(identifier: String)
    case runStarted(RunRecord)
    case runEnded(runID: Int64, identifier: String, ended: Instant, outcome: Outcome,
                  exitStatus: Int32?, signal: Int32?)
    /// Consecutive failed attempts of a job, reset by a success; drives the retry backoff.
    case failureStreak(identifier: String, count: Int)
    /// Calendar slots of a job that passed unrun (downtime, sleep, a clock step), counted on the
    /// day they were noticed.
    case missedSlots(identifier: String, count: Int, noticed: Instant)
}
