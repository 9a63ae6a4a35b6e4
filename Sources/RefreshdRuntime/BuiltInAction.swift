import RefreshdCore
import Synchronization

/// Work that refreshd does itself, in process, off the loop thread (the staging action is one).
///
/// The host runs `body` on its worker pool (libuv's thread pool in real time; inline in
/// simulation), so a slow action never delays a timer. The expiration is delivered through the
/// context: `isExpired` turns true and the action should return promptly. An action still
/// running when the grace period ends is abandoned: the run ends `expired` and whatever the
/// action returns later is ignored.
public struct BuiltInAction: Sendable {
    /// A name for logs, e.g. `stage-playlist`.
    public var name: String
    public var body: @Sendable (ActionContext) -> ActionResult

    public init(name: String, body: @escaping @Sendable (ActionContext) -> ActionResult) {
        self.name = name
        self.body = body
    }
}

/// What an action returns: success or failure, with structured results (JSON objects, like the
/// results channel of a command) and lines for the log.
public struct ActionResult: Sendable, Hashable {
    public var success: Bool
    public var results: [String]
    public var log: [String]

    public init(success: Bool, results: [String] = [], log: [String] = []) {
        self.success = success
        self.results = results
        self.log = log
    }
}

/// What a running action sees: its run, the shared container and the expiration.
public final class ActionContext: Sendable {
    public let order: LaunchOrder
    public let sharedContainer: String?
    private let expired = Atomic<Bool>(false)

    package init(order: LaunchOrder, sharedContainer: String?) {
        self.order = order
        self.sharedContainer = sharedContainer
    }

    /// True once the allowance is used up: stop and return.
    public var isExpired: Bool { expired.load(ordering: .acquiring) }

    package func expire() { expired.store(true, ordering: .releasing) }
}
