/// How a run ended.
public enum Outcome: String, Sendable, Hashable, Codable, CaseIterable {
    /// Exit status 0, or `setTaskCompleted(success: true)`.
    case success
    /// Non-zero exit status, or `setTaskCompleted(success: false)`.
    case failure
    /// The allowance ran out and the expiration was delivered.
    case expired
    /// Killed by a signal refreshd did not send, or by its memory limit (the run's reason then
    /// says "memory limit").
    case crashed
    /// refreshd stopped or died while the run was in flight.
    case interrupted

    /// Whether the retry policy applies.
    public var isFailure: Bool { self != .success }

    /// Whether the job itself failed (an exit, an overrun, a crash): what a failure streak
    /// counts and what the dashboard marks as failing. An interruption is refreshd's stop, not
    /// the job's doing: it is retried at once and neither counts nor ends a streak.
    package var isTheJobsFailure: Bool { self == .failure || self == .expired || self == .crashed }
}

/// What the shell observed when a run's work ended.
package enum RunExit: Sendable, Hashable {
    /// A process exited with a status.
    case exited(Int32)
    /// A process was terminated by a signal.
    case signaled(Int32)
    /// An in-process task called `setTaskCompleted(success:)`.
    case completed(success: Bool)
    /// An in-process task did not complete within its grace period and was abandoned.
    case abandoned
    /// The command could not be started (missing program, exec refused, no resources); the
    /// text says why. Not the job's own exit status 127.
    case spawnFailed(String)
    /// Nothing was registered to run the identifier (a library user declared it without a
    /// handler, or withdrew the handler while the request was pending).
    case noHandler
}
