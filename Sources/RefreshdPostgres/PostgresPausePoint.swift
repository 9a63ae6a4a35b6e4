#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

/// A named instant at which a node can be made to stop itself (SIGSTOP to its own process, as
/// an operator's `kill -STOP` or a long GC pause would), so that a test pauses it exactly where a
/// pause is hardest to survive instead of hoping a random SIGSTOP lands there (as `CrashPoint`
/// does for SIGKILL).
///
/// Set `REFRESHD_PAUSE_AT` to a point's name in refreshd's environment. The process stops the
/// first time it reaches the point, and only then (it goes on normally after SIGCONT). Unset,
/// every check is one comparison against nil.
package enum PostgresPausePoint: String, Sendable {
    /// Inside a shard's commit transaction, its lease row locked (`SELECT … FOR UPDATE`), the
    /// changes not written yet: a node paused here holds the row lock every acquirer of the
    /// shard must wait for.
    case commitLocked = "commit-locked"

    /// The point this process should stop at, read once from the environment.
    package static let armed: PostgresPausePoint? = getenv("REFRESHD_PAUSE_AT").flatMap { PostgresPausePoint(rawValue: String(cString: $0)) }
    private static let reached = Atomic<Bool>(false)

    /// Stops the whole process (every thread) if this is the armed point, the first time only.
    @inline(__always)
    package static func reach(_ point: PostgresPausePoint) {
        guard let armed, armed == point, !reached.exchange(true, ordering: .relaxed) else { return }
        // The calling thread stops itself (a thread-directed signal, dequeued by this very
        // thread before it returns): `kill(getpid(), ...)` let another thread take the signal
        // while this one went on a few instructions, past its point, on a loaded machine.
        raise(SIGSTOP)
    }
}
