import RefreshdCore

/// What the libuv host tells a worker process (`refreshd action-worker --request JSON`) about
/// the built-in action to run: the action's name and payload (`BuiltInAction.Worker`), its
/// memory limit, and the run (for the `ActionContext` the action sees).
///
/// The worker writes the action's log lines to stdout (one line each, escaped), its results to
/// the results channel (fd 3) like a command, and exits 0 on success, 1 on failure. It turns
/// SIGTERM (the expiration) into `isExpired` and dies on SIGKILL (the end of the grace).
package struct ActionWorkerRequest: Sendable, Hashable, Codable {
    package var action: String
    package var payload: String
    package var memoryLimit: Int
    package var runID: Int64
    package var identifier: String
    package var kind: TaskKind
    package var started: Instant
    package var deadline: Instant
    package var attempt: Int
    package var sharedContainer: String?

    package init(action: String, worker: BuiltInAction.Worker, order: LaunchOrder, sharedContainer: String?) {
        self.action = action
        payload = worker.payload
        memoryLimit = worker.memoryLimit
        runID = order.runID
        identifier = order.identifier
        kind = order.kind
        started = order.started
        deadline = order.deadline
        attempt = order.attempt
        self.sharedContainer = sharedContainer
    }

    package var order: LaunchOrder {
        LaunchOrder(runID: runID, identifier: identifier, kind: kind, started: started, deadline: deadline, attempt: attempt)
    }

    /// The subcommand of the `refreshd` executable that runs a worker.
    package static let subcommand = "action-worker"
    /// Names the worker executable for an embedder whose own program is not `refreshd`.
    package static let executableVariable = "REFRESHD_ACTION_WORKER"
}
