/// A submitted request waiting to launch, as the core and the store keep it.
///
/// `sequence` orders requests with equal earliest begin dates by submission, across restarts.
public struct PendingRequest: Sendable, Hashable {
    /// Why the request exists; shown in logs and status.
    public enum Origin: String, Sendable, Hashable, CaseIterable {
        /// Submitted by config seeding or the embedding API.
        case submitted
        /// Made by the job's resubmit policy at launch.
        case resubmit
        /// Made by the retry policy after a failed, expired, crashed or interrupted run.
        case retry
    }

    public var identifier: String
    public var namespace: String
    public var kind: TaskKind
    public var earliest: Instant
    public var submitted: Instant
    public var sequence: UInt64
    public var requiresExternalPower: Bool
    public var requiresNetworkConnectivity: Bool
    public var origin: Origin

    public init(identifier: String, namespace: String, kind: TaskKind, earliest: Instant,
                submitted: Instant, sequence: UInt64, requiresExternalPower: Bool = false,
                requiresNetworkConnectivity: Bool = false, origin: Origin = .submitted) {
        self.identifier = identifier
        self.namespace = namespace
        self.kind = kind
        self.earliest = earliest
        self.submitted = submitted
        self.sequence = sequence
        self.requiresExternalPower = requiresExternalPower
        self.requiresNetworkConnectivity = requiresNetworkConnectivity
        self.origin = origin
    }

    /// A copy as the public request type.
    public var request: TaskRequest {
        TaskRequest(identifier: identifier, kind: kind, earliestBeginDate: earliest,
                    requiresExternalPower: requiresExternalPower,
                    requiresNetworkConnectivity: requiresNetworkConnectivity)
    }
}
