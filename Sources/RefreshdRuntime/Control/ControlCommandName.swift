/// The commands of the control protocol, by their wire names.
///
/// `reload` asks widget timelines for a reload (one kind or all; `foreground` makes it the
/// exempt app-foreground reload), `activity` starts, updates or ends a live activity, `stats`
/// reads the per-day widget reload counters.
package enum ControlCommandName: String, Codable, Sendable, CaseIterable {
    case hello, pending, submit, cancel
    case cancelAll = "cancel-all"
    case simulateLaunch = "simulate-launch"
    case simulateExpiration = "simulate-expiration"
    case status, why, snapshot, subscribe, metrics
    case reload, activity, stats
    /// Instances of templates (issue 23).
    case instanceAdd = "instance-add", instanceRemove = "instance-remove", instanceList = "instance-list"
    /// Pausing and resuming a job, an instance or a template (issue 33).
    case pause, resume
    /// Runs by job and outcome over the last days (`stats runs`), read from the state off the loop.
    case runStats = "run-stats"

    /// Whether this refreshd carries the command out (every command now; kept so a client can
    /// tell, and an older client's check still compiles).
    package var isSupported: Bool { true }
}
