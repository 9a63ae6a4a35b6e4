import RefreshdCore

/// The system's discretion with app-refresh requests, as an admission policy: a due request is
/// admitted only after a seeded delay past its earliest begin date, as iOS launches background
/// refreshes when it sees fit rather than on the dot. Processing requests are admitted at once.
struct DiscretionPolicy: AdmissionPolicy {
    let maximum: Duration
    let random: SeededRandom

    func admission(for request: PendingRequest, at now: Instant) -> Admission {
        guard request.kind == .appRefresh, maximum > .zero else { return .admit }
        let span = max(1, maximum.wholeMilliseconds)
        let delay = Int64(random.bits("discretion", request.identifier, request.earliest.milliseconds) % UInt64(span))
        let release = request.earliest + .milliseconds(delay)
        return now >= release ? .admit : .hold(until: release)
    }
}
