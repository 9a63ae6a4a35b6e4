/// A submitted request waiting to launch, as the core and the store keep it.
///
/// `sequence` orders requests with equal earliest begin dates by submission, across restarts.
package struct PendingRequest: Sendable, Hashable {
    /// Why the request exists; shown in logs and status.
    package enum Origin: String, Sendable, Hashable, CaseIterable {
        /// Submitted by config seeding or the embedding API.
        case submitted
        /// Made by the job's resubmit policy at launch.
        case resubmit
        /// Made by the retry policy after a failed, expired, crashed or interrupted run.
        case retry
    }

    package var identifier: String
    package var namespace: String
    package var kind: TaskKind
    package var earliest: Instant
    package var submitted: Instant
    package var sequence: UInt64
    package var requiresExternalPower: Bool
    package var requiresNetworkConnectivity: Bool
    package var origin: Origin
    /// The identifier's slot in the core's table, when the core made the change (`SlotHint`).
    package var slot: SlotHint = .none

    package init(identifier: String, namespace: String, kind: TaskKind, earliest: Instant,
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
    package var request: TaskRequest {
        TaskRequest(identifier: identifier, kind: kind, earliestBeginDate: earliest,
                    requiresExternalPower: requiresExternalPower,
                    requiresNetworkConnectivity: requiresNetworkConnectivity)
    }
}
