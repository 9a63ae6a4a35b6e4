/// Decides whether a due request may launch now, or is held back until a later instant.
///
/// The earliest begin date is only a lower bound: iOS launches app refreshes at its own
/// discretion, a widget reload waits for its budget, a fleet node for its lease. The core asks
/// the policy for every due request it is about to launch; a held request is looked at again at
/// the instant the policy names (it is one of the core's deadlines, so the single wake-up timer
/// covers it). Policies must be deterministic functions of their inputs so that simulations repeat.
package protocol AdmissionPolicy: Sendable {
    func admission(for request: PendingRequest, at now: Instant) -> Admission
}

/// An admission policy's answer.
package enum Admission: Sendable, Hashable {
    /// Launch now.
    case admit
    /// Not before this instant; asked again then.
    case hold(until: Instant)
}
