/// A declared task identifier and the rules its runs follow.
///
/// The analog of listing an identifier in `BGTaskSchedulerPermittedIdentifiers` and registering a
/// launch handler: requests for undeclared identifiers fail with `notPermitted`. Job files and the
/// embedding API both produce definitions.
public struct TaskDefinition: Sendable, Hashable {
    public var identifier: String
    public var kind: TaskKind
    /// The "app" whose pending-request limits this identifier counts against.
    public var namespace: String
    /// How long a run may take before its expiration is delivered.
    public var allowance: Duration
    /// After the expiration, how long before the run is killed.
    public var grace: Duration
    public var resubmit: ResubmitPolicy
    public var retry: RetryPolicy?
    public var requiresExternalPower: Bool
    public var requiresNetworkConnectivity: Bool

    public init(
        identifier: String,
        kind: TaskKind = .appRefresh,
        namespace: String = "default",
        allowance: Duration? = nil,
        grace: Duration = .seconds(5),
        resubmit: ResubmitPolicy = .none,
        retry: RetryPolicy? = nil,
        requiresExternalPower: Bool = false,
        requiresNetworkConnectivity: Bool = false
    ) {
        self.identifier = identifier
        self.kind = kind
        self.namespace = namespace
        self.allowance = allowance ?? kind.defaultAllowance
        self.grace = grace
        self.resubmit = resubmit
        self.retry = retry
        self.requiresExternalPower = requiresExternalPower
        self.requiresNetworkConnectivity = requiresNetworkConnectivity
    }
}
