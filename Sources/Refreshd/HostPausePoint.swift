#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A named instant at which the libuv host can be made to stop its own process (SIGSTOP, as an
/// operator's `kill -STOP` or a long pause would), so a test pauses a node exactly where a pause
/// is hardest to survive (issue 32), as `PostgresPausePoint` does inside a commit.
///
/// Set `REFRESHD_PAUSE_AT` to a point's name. The process stops the first time it reaches the
/// point (and goes on after SIGCONT). Unset, every check is one comparison against nil.
package enum HostPausePoint: String, Sendable {
    /// A cluster shard's publication: its commit made, its file written and flushed, the rename
    /// into the shared container not yet asked for.
    case publicationBeforeRename = "publication-before-rename"

    package static let armed: HostPausePoint? = getenv("REFRESHD_PAUSE_AT").flatMap { HostPausePoint(rawValue: String(cString: $0)) }
    private static let reached = Atomic<Bool>(false)

    /// Stops the whole process (every thread) if this is the armed point, the first time only.
    @inline(__always)
    package static func reach(_ point: HostPausePoint) {
        guard let armed, armed == point, !reached.exchange(true, ordering: .relaxed) else { return }
        // The calling thread stops itself (a thread-directed signal, dequeued by this very
        // thread before it returns): `kill(getpid(), ...)` let another thread take the signal
        // while this one went on a few instructions, past its point, on a loaded machine.
        raise(SIGSTOP)
    }
}
