/// What the notification machine did, as one log line each.
package enum NotificationLog: Sendable, Hashable, CustomStringConvertible {
    /// The receiver took it (on `attempt`, counting from 1).
    case delivered(RunNotification, attempt: Int)
    /// An attempt failed; the next is at `next`.
    case retrying(RunNotification, attempt: Int, reason: String, next: Instant)
    /// The last allowed attempt failed: it is dropped.
    case gaveUp(RunNotification, attempts: Int, reason: String)
    /// Dropped unsent: `held` others were waiting, the most allowed.
    case dropped(RunNotification, held: Int)

    package var notification: RunNotification {
        switch self {
        case let .delivered(n, _), let .retrying(n, _, _, _), let .gaveUp(n, _, _), let .dropped(n, _): n
        }
    }

    package var description: String {
        switch self {
        case let .delivered(n, attempt):
            "notified \(n.kind.rawValue) of \(n.job) run \(n.runID) (\(n.notifier.summary), id \(n.id))"
                + (attempt > 1 ? " on attempt \(attempt)" : "")
        case let .retrying(n, attempt, reason, next):
            "\(n.kind.rawValue) notification of \(n.job) run \(n.runID) not delivered (\(n.notifier.summary): \(reason)): attempt \(attempt + 1) at \(next)"
        case let .gaveUp(n, attempts, reason):
            "\(n.kind.rawValue) notification of \(n.job) run \(n.runID) given up after \(attempts) attempts (\(n.notifier.summary): \(reason))"
        case let .dropped(n, held):
            "\(n.kind.rawValue) notification of \(n.job) run \(n.runID) dropped unsent: \(held) notifications already waiting, the most held"
        }
    }
}
