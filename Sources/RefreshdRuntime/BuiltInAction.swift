import RefreshdCore
import Synchronization

/// Work that refreshd does itself rather than a command (the staging action is one).
///
/// Light actions (reading a playlist) run their `body` on the host's worker pool (libuv's
/// thread pool in real time; inline in simulation). A heavy action (decoding images) carries a
/// `worker`: the libuv host then runs it in a short-lived worker process (`refreshd
/// action-worker`) with its own memory limit, which receives the expiration as SIGTERM and the
/// kill as SIGKILL like a command, so an image can neither exhaust the scheduler's memory nor
/// keep it busy after the run ended. The worker rebuilds the action from `name` and
/// `worker.payload` and runs the same `body`.
///
/// The expiration is delivered through the context: `isExpired` turns true and the action
/// should return promptly. An action still running when the grace period ends is killed (its
/// worker) or abandoned (a body on the pool): the run ends `expired` and whatever the action
/// returns later is ignored.
package struct BuiltInAction: Sendable {
    /// How a heavy action is run out of process.
    package struct Worker: Sendable, Hashable {
        /// Everything the worker needs to rebuild the action (e.g. its options as JSON).
        package var payload: String
        /// The address space the worker may add to what it has at its start (`RLIMIT_AS`).
        package var memoryLimit: Int

        package init(payload: String, memoryLimit: Int) {
            self.payload = payload
            self.memoryLimit = memoryLimit
        }
    }

    /// A name for logs, e.g. `stage-playlist`.
    package var name: String
    package var body: @Sendable (ActionContext) -> ActionResult
    /// Set for an action that must run in a worker process (see above).
    package var worker: Worker?

    package init(name: String, worker: Worker? = nil, body: @escaping @Sendable (ActionContext) -> ActionResult) {
        self.name = name
        self.worker = worker
        self.body = body
    }
}

/// What an action returns: success or failure, with structured results (JSON objects, like the
/// results channel of a command) and lines for the log.
package struct ActionResult: Sendable, Hashable {
    package var success: Bool
    package var results: [String]
    package var log: [String]

    package init(success: Bool, results: [String] = [], log: [String] = []) {
        self.success = success
        self.results = results
        self.log = log
    }
}

/// What a running action sees: its run, the shared container and the expiration.
package final class ActionContext: Sendable {
    package let order: LaunchOrder
    package let sharedContainer: String?
    private let expired = Atomic<Bool>(false)
    /// Also expired when this says so (a worker process: its SIGTERM flag).
    private let externalExpiry: (@Sendable () -> Bool)?
    /// Where the host delivers the expiration and the kill of a worker process.
    private let signalHook = Mutex<(@Sendable (RunSignal) -> Void)?>(nil)

    package init(order: LaunchOrder, sharedContainer: String?, externalExpiry: (@Sendable () -> Bool)? = nil) {
        self.order = order
        self.sharedContainer = sharedContainer
        self.externalExpiry = externalExpiry
    }

    /// True once the allowance is used up: stop and return.
    package var isExpired: Bool { expired.load(ordering: .acquiring) || externalExpiry?() == true }

    /// The expiration: `isExpired` turns true, and a worker process gets SIGTERM.
    package func expire() {
        expired.store(true, ordering: .releasing)
        signalHook.withLock { $0 }?(.terminate)
    }

    /// The end of the grace period: a worker process gets SIGKILL.
    package func kill() {
        expired.store(true, ordering: .releasing)
        signalHook.withLock { $0 }?(.kill)
    }

    /// The host running this action in a process: where `expire` and `kill` go (nil detaches).
    package func attach(_ hook: (@Sendable (RunSignal) -> Void)?) {
        signalHook.withLock { $0 = hook }
    }
}
