/// One log line about activities, as data; the text is built only when it is read.
package enum ActivityLog: Sendable, Hashable, CustomStringConvertible {
    /// A state change; `activity` is the activity after it.
    case transition(ActivityTransition, Activity)
    /// An event refused (the error says why).
    case refused(ActivityError)
    /// New content applied without a change of state (`activity` is the activity after it).
    case updated(Activity)
    /// An update not applied, and why.
    case updateIgnored(id: String, timestamp: Instant, reason: IgnoredReason)
    /// A high-priority update held by the spent budget until `release`.
    case updateHeld(id: String, timestamp: Instant, release: Instant, coalesced: Int, budget: Int)
    /// Final content older than the last applied update: the end happened with the last content.
    case endContentDropped(id: String, timestamp: Instant, lastApplied: Instant)
    /// Saved activities loaded at start; `overdue` deadlines passed while refreshd was down.
    case restored(count: Int)
    /// The wall clock changed; budget uses after the new clock were forgotten.
    case clockChanged(now: Instant, expected: Instant, forgottenUses: Int)

    /// Why an update was not applied.
    package enum IgnoredReason: Sendable, Hashable {
        /// Its timestamp is older than the last applied update's.
        case outOfOrder(lastApplied: Instant)
        /// The activity no longer takes updates.
        case notUpdatable(ActivityState)
        /// A newer update (by timestamp) replaced this held one.
        case superseded(by: Instant)
        /// The activity ended while this update was held.
        case endedWhileHeld
    }

    package var description: String {
        switch self {
        case let .transition(t, a):
            transitionText(t, a)
        case let .refused(error):
            error.description
        case let .updated(a):
            "activity \(a.id) (\(a.typeName)) updated\(ActivityJSON.progressPercent(in: a.content).map { ": \(Int($0.rounded()))%" } ?? "")"
                + (a.staleDate.map { ", stale at \($0.iso8601)" } ?? "")
        case let .updateIgnored(id, timestamp, reason):
            switch reason {
            case let .outOfOrder(last):
                "activity \(id) update of \(timestamp) ignored: older than the last applied update (\(last))"
            case let .notUpdatable(state):
                "activity \(id) update of \(timestamp) ignored: the activity is \(state)"
            case let .superseded(newer):
                "activity \(id) held update of \(timestamp) dropped: superseded by the update of \(newer)"
            case .endedWhileHeld:
                "activity \(id) held update of \(timestamp) dropped: the activity ended"
            }
        case let .updateHeld(id, timestamp, release, coalesced, budget):
            "activity \(id) high-priority update of \(timestamp) held: budget of \(budget) an hour spent, applied at \(release)"
                + (coalesced > 1 ? " (\(coalesced) updates coalesced, latest wins)" : "")
        case let .endContentDropped(id, timestamp, last):
            "activity \(id) final content of \(timestamp) dropped: older than the last applied update (\(last)); ended with the last content"
        case let .restored(count):
            "restored \(count) activit\(count == 1 ? "y" : "ies")"
        case let .clockChanged(now, expected, forgotten):
            "activities: wall clock changed by \(formatDuration(now.duration(since: expected)))"
                + (forgotten > 0 ? ", \(forgotten) high-priority budget use\(forgotten == 1 ? "" : "s") after the new clock forgotten" : "")
        }
    }

    private func transitionText(_ t: ActivityTransition, _ a: Activity) -> String {
        let subject = "activity \(t.id) (\(a.typeName))"
        var text: String
        switch t.cause {
        case .requested:
            text = "\(subject) requested\(a.owner.map { " by \($0)" } ?? ""): \(t.to)"
            if t.to == .stale, let stale = a.staleDate { text += ", stale date \(stale) already passed" }
        case .scheduled:
            text = "\(subject) requested\(a.owner.map { " by \($0)" } ?? ""): pending until \(a.start)"
        case .startDateReached:
            text = "\(subject) started at its start date: \(t.to)"
        case .staleDatePassed:
            text = "\(subject) stale: no update since \(a.lastUpdateTimestamp ?? a.start), stale date \(a.staleDate.map(\.iso8601) ?? "?") passed"
        case .updated:
            text = "\(subject) \(t.to): updated"
        case .heldUpdateReleased:
            text = "\(subject) \(t.to): held update applied, budget returned"
        case .endedByRequest:
            text = t.to == .ended
                ? "\(subject) ended, policy \(a.dismissalPolicy.map(\.description) ?? "default")"
                : "\(subject) dismissed: ended with the immediate policy"
        case .cancelledBeforeStart:
            text = "\(subject) dismissed: ended before its start date, never shown"
        case .ownerFailed:
            text = t.to == .ended
                ? "\(subject) ended: its job \(a.owner ?? "?") finished without ending it (failure recorded in the content)"
                : "\(subject) dismissed"
        case .activeLimit:
            text = "\(subject) ended by the system: active since \(a.start), the limit passed"
        case .visibleLimit:
            text = "\(subject) \(t.to == .ended ? "ended and " : "")dismissed: visible since \(a.start), the limit passed"
        case .dismissalPolicy:
            text = "\(subject) dismissed: policy \(a.dismissalPolicy.map(\.description) ?? "default"), ended \(a.ended.map(\.iso8601) ?? "?")"
        }
        if t.applied > t.due { text += " (due \(t.due), applied \(formatDuration(t.applied.duration(since: t.due))) late)" }
        return text
    }
}
