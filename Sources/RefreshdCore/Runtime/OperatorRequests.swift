
/// What an operator's commands become, decided once here for every caller (the control socket,
/// the embedding API, the simulator): the socket only parses and replies.
extension TaskRequest {
    /// A job's own request, as its definition says (kind, power and network conditions), due at
    /// `earliest` or now: what an operator's `refreshd ctl submit` and a load's first request
    /// submit. The operator chooses when, never what: a job that needs the network still
    /// waits for it.
    package static func forJob(_ definition: TaskDefinition, earliest: Instant?) -> TaskRequest {
        TaskRequest(identifier: definition.identifier, kind: definition.kind, earliestBeginDate: earliest,
                    requiresExternalPower: definition.requiresExternalPower,
                    requiresNetworkConnectivity: definition.requiresNetworkConnectivity)
    }
}

extension ActivityRequest {
    /// The owner of an activity an operator started (`refreshd ctl activity`, the socket's
    /// `activity`): the operator, named so logs, snapshots and `why` say who started it.
    ///
    /// No job's end ends it (an owner's end ends only that owner's activities, and no job is
    /// named `operator`: job files need a reverse-DNS identifier of two labels or more, and the
    /// runtime never reports this owner as a job's end); it ends by an operator's `end`, its
    /// stale date and the 8-hour limit, like any activity.
    package static let operatorOwner = "operator"
}
