/// A request to run the task with `identifier` no earlier than `earliestBeginDate`.
///
/// Shaped like `BGAppRefreshTaskRequest`/`BGProcessingTaskRequest`: a value type, so the copies
/// returned by `pendingTaskRequests()` change nothing until they are submitted again. The earliest
/// begin date is a lower bound: the task never starts before it, and may start later.
public struct TaskRequest: Sendable, Hashable {
    /// The declared identifier the request is for.
    public var identifier: String
    /// Which pending limit the request counts against (`appRefresh` or `processing`).
    public var kind: TaskKind
    /// Never launch before this instant; `nil` means as soon as possible.
    public var earliestBeginDate: Instant?
    /// Processing only: wait until the machine is on external power.
    public var requiresExternalPower: Bool
    /// Processing only: wait until a non-loopback interface with a default route is up.
    public var requiresNetworkConnectivity: Bool

    /// A request due as soon as possible unless `earliestBeginDate` says otherwise; submitting it
    /// replaces a pending request with the same identifier.
    public init(
        identifier: String,
        kind: TaskKind = .appRefresh,
        earliestBeginDate: Instant? = nil,
        requiresExternalPower: Bool = false,
        requiresNetworkConnectivity: Bool = false
    ) {
        self.identifier = identifier
        self.kind = kind
        self.earliestBeginDate = earliestBeginDate
        self.requiresExternalPower = requiresExternalPower
        self.requiresNetworkConnectivity = requiresNetworkConnectivity
    }
}
