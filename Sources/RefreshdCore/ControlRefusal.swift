/// Why an operator's order to the core (`launchNow`, `expireNow`, `pause`, `resume`) was refused: the control
/// socket replies with it as an error, naming what was wrong and what was expected.
package enum ControlRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    /// The identifier is not declared (no job of that name).
    case notDeclared(identifier: String)
    /// The identifier is a template's: it never runs itself, its instances (`template[key]`) do.
    /// The same code as `notDeclared` (no job of that name), with a message naming the way.
    case template(identifier: String)
    /// Nothing is pending for the identifier, so there is nothing to launch.
    case notPending(identifier: String)
    /// A run of the identifier is already in flight (one run per identifier).
    case runInFlight(identifier: String, runID: Int64)
    /// Every run slot is taken; launching would break the concurrency cap.
    case atCapacity(running: Int, limit: Int)
    /// No run of the identifier is in flight, so there is no expiration to deliver.
    case notRunning(identifier: String)
    /// The run's expiration was already delivered.
    case alreadyExpiring(identifier: String, runID: Int64)
    /// The scheduler is stopping.
    case stopping
    /// The identifier (or its template, `by`) is paused: it launches nothing until resumed.
    case paused(identifier: String, by: String, since: Instant)
    /// A pause of an identifier already paused.
    case alreadyPaused(identifier: String, since: Instant)
    /// A resume of an identifier that is not paused.
    case notPaused(identifier: String)

    /// A stable lowercase code for machine readers.
    package var code: String {
        switch self {
        case .notDeclared, .template: "not-declared"
        case .notPending: "not-pending"
        case .runInFlight: "run-in-flight"
        case .atCapacity: "at-capacity"
        case .notRunning: "not-running"
        case .alreadyExpiring: "already-expiring"
        case .stopping: "stopping"
        case .paused: "paused"
        case .alreadyPaused: "already-paused"
        case .notPaused: "not-paused"
        }
    }

    package var description: String {
        switch self {
        case let .notDeclared(id):
            "\(id) is not a declared job; expected the identifier of a loaded job"
        case let .template(id):
            "\(id) is a template, not a job: its instances run, not it; expected an instance, \(id)[KEY] "
                + "(refreshd ctl instance list \(id) lists them, refreshd ctl instance add \(id) KEY adds one)"
        case let .notPending(id):
            "\(id) has no pending request to launch; submit one first (refreshd ctl submit \(id))"
        case let .runInFlight(id, runID):
            "\(id) already has run \(runID) in flight; expected a job with no run in flight (one run per identifier)"
        case let .atCapacity(running, limit):
            "all \(limit) run slots are taken (\(running) in flight); try again when a run ends"
        case let .notRunning(id):
            "\(id) has no run in flight; expected a running job (refreshd ctl simulate-launch \(id) starts one)"
        case let .alreadyExpiring(id, runID):
            "\(id) run \(runID) has already been given its expiration"
        case .stopping:
            "refreshd is stopping and launches nothing more"
        case let .paused(id, by, since):
            (by == id ? "\(id) is paused" : "\(id) is paused with its template \(by)")
                + " since \(since); expected a job that is not paused (refreshd ctl resume \(by))"
        case let .alreadyPaused(id, since):
            "\(id) is already paused, since \(since)"
        case let .notPaused(id):
            "\(id) is not paused; nothing to resume"
        }
    }
}
