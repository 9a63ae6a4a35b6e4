import Glibc

/// Named instants at which refreshd can be made to die on purpose (SIGKILL to itself), so that
/// tests kill it exactly where a crash is hardest to survive instead of hoping a random kill
/// lands there.
///
/// Set `REFRESHD_CRASH_AT` to a point's name in refreshd's environment (for example
/// `REFRESHD_CRASH_AT=spawned`). Unset, every check is one comparison against nil.
package enum CrashPoint: String, Sendable, CaseIterable {
    /// A launch is committed (its run recorded) and the command not spawned yet.
    case launchCommitted = "launch-committed"
    /// The command is spawned (its process exists) and its process group not recorded yet.
    case spawned
    /// A command's leader has exited (its group just got SIGKILL), and what else the run left
    /// running (a descendant in a session of its own) is not killed yet.
    case leaderExited = "leader-exited"
    /// A command run's end is committed (after its leftovers were swept).
    case runEnded = "run-ended"
    /// A failure or recovery notification is committed (with its run's end, or restored at a
    /// start) and its delivery attempt not begun.
    case notificationCommitted = "notification-committed"
    /// The receiver took a notification (2xx, or the command exited 0) and the delivered
    /// commit is not made yet: the one window in which a restart sends it again (same id).
    case notificationDelivered = "notification-delivered"

    /// The point this process should die at, read once from the environment.
    package static let armed: CrashPoint? = getenv("REFRESHD_CRASH_AT").flatMap { CrashPoint(rawValue: String(cString: $0)) }

    /// Dies at once, without cleanup, if this is the armed point.
    @inline(__always)
    package static func reach(_ point: CrashPoint) {
        guard let armed, armed == point else { return }
        kill(getpid(), SIGKILL)
        pause()
    }
}
