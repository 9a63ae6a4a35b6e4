/// Why the activity machine refused an event. Nothing changes when one is returned; each case
/// names the activity, what was wrong and what was expected.
package enum ActivityError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Live Activities are turned off in the settings.
    case disabled(id: String)
    /// Attributes and content together are over the limit.
    case payloadTooLarge(id: String, bytes: Int, limit: Int)
    /// The namespace already has its maximum of pending, active and stale activities.
    case tooManyActivities(id: String, namespace: String, limit: Int)
    /// Activities held across every namespace (pending, active, stale, ended) are at the limit.
    case tooManyInTotal(id: String, limit: Int)
    /// A new namespace, but as many namespaces as allowed already have live activities.
    case tooManyNamespaces(id: String, namespace: String, limit: Int)
    /// An activity with this id is already pending, active, stale or ended.
    case duplicateID(id: String, state: ActivityState)
    /// No activity has this id (or it was dismissed long enough ago to be forgotten).
    case unknownActivity(id: String, event: ActivityEventKind)
    /// The event is not allowed in the activity's state (ending an ended one, updating a pending
    /// one).
    case notAllowed(id: String, state: ActivityState, event: ActivityEventKind)
    /// A field is not what it must be: `field` names it, `expected` says what it must be.
    case invalidField(id: String, field: String, expected: String)
    /// `restore` came after other events or twice: it must be the first event, once.
    case restoreNotFirst
    /// A run's line named an activity an instance of a template owns, and the run is not that
    /// instance's (issue 23): an instance's activities are its own.
    case notOwned(id: String, event: ActivityEventKind, owner: String, writer: String)

    package var description: String {
        switch self {
        case let .disabled(id):
            "activity \(id) refused: Live Activities are disabled"
        case let .payloadTooLarge(id, bytes, limit):
            "activity \(id) refused: attributes and content are \(bytes) bytes together, expected at most \(limit)"
        case let .tooManyActivities(id, ns, limit):
            "activity \(id) refused: namespace '\(ns)' already has \(limit) pending, active or stale activit\(limit == 1 ? "y" : "ies"), the limit"
        case let .tooManyInTotal(id, limit):
            "activity \(id) refused: \(limit) activities are held already (pending, active, stale or ended, in every namespace together), the limit; end some, or wait for ended ones to be dismissed"
        case let .tooManyNamespaces(id, ns, limit):
            "activity \(id) refused: namespace '\(ns)' would be a new one, and \(limit) namespaces already have live activities, the limit"
        case let .duplicateID(id, state):
            "activity \(id) refused: an activity with this id is already \(state), expected a new id"
        case let .unknownActivity(id, event):
            "\(event.rawValue) of activity \(id) refused: no such activity"
        case let .notAllowed(id, state, event):
            "\(event.rawValue) of activity \(id) refused: not allowed while it is \(state)"
        case let .invalidField(id, field, expected):
            "activity \(id) refused: \(field): expected \(expected)"
        case .restoreNotFirst:
            "restore refused: expected once, before any other activity event"
        case let .notOwned(id, event, owner, writer):
            "\(event.rawValue) of activity \(id) by \(writer) refused: the activity is \(owner)'s, and an instance's "
                + "activities are its own; expected a line of \(owner)'s runs"
        }
    }
}

/// An event's kind, named in errors and logs.
package enum ActivityEventKind: String, Sendable, Hashable, Codable, CaseIterable {
    case request, update, end
    case ownerFinished = "owner-finished"
    case timerFired = "timer-fired"
    case restore
    case clockChanged = "clock-changed"
    case settingsChanged = "settings-changed"
}

extension ActivityEvent {
    /// The event's kind.
    package var kind: ActivityEventKind {
        switch self {
        case .request: .request
        case .update: .update
        case .end: .end
        case .ownerFinished: .ownerFinished
        case .timerFired: .timerFired
        case .restore: .restore
        case .clockChanged: .clockChanged
        case .settingsChanged: .settingsChanged
        }
    }
}
