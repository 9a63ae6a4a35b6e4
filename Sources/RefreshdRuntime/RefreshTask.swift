import RefreshdCore
import Synchronization

/// A launched task handed to an in-process handler, shaped like `BGTask`.
///
/// Set `expirationHandler` early: it is called (on the loop thread) when the allowance runs out,
/// and should stop the work quickly. Call `setTaskCompleted(success:)` exactly once, from any
/// thread; later calls are ignored. A task with no expiration handler is completed unsuccessfully
/// when its time is up, like BGTaskScheduler.
public final class RefreshTask: @unchecked Sendable {
    /// The declared identifier this run is for (an instance's is `template[key]`).
    public let identifier: String
    /// The run's number, unique and increasing over the scheduler's state (it survives restarts).
    public let runID: Int64
    /// The request's kind, which set the run's default allowance.
    public let kind: TaskKind
    /// When the expiration is delivered if the task has not completed.
    public let deadline: Instant
    /// The directory tasks share (the App Group analog).
    public let sharedContainer: String?

    private struct State {
        var handler: (@Sendable () -> Void)?
        var completed = false
    }
    private let state = Mutex(State())
    private let complete: @Sendable (Int64, Bool) -> Void

    package init(order: LaunchOrder, sharedContainer: String?, complete: @escaping @Sendable (Int64, Bool) -> Void) {
        identifier = order.identifier
        runID = order.runID
        kind = order.kind
        deadline = order.deadline
        self.sharedContainer = sharedContainer
        self.complete = complete
    }

    /// Called once when the task's time is up.
    public var expirationHandler: (@Sendable () -> Void)? {
        get { state.withLock { $0.handler } }
        set { state.withLock { $0.handler = newValue } }
    }

    /// Reports the end of the work. The first call counts.
    public func setTaskCompleted(success: Bool) {
        let first = state.withLock { s -> Bool in
            defer { s.completed = true }
            return !s.completed
        }
        if first { complete(runID, success) }
    }

    /// Delivers the expiration; without a handler the task completes unsuccessfully.
    package func deliverExpiration() {
        if let handler = expirationHandler { handler() } else { setTaskCompleted(success: false) }
    }

    /// Marks the task done without reporting (the scheduler has already ended the run).
    package func abandon() { state.withLock { $0.completed = true } }
}
