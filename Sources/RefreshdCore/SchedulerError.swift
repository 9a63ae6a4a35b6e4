/// Why a submit was refused; mirrors `BGTaskScheduler.Error.Code`.
public enum SchedulerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The namespace already holds its limit of pending requests of this kind.
    case tooManyPendingTaskRequests(identifier: String, kind: TaskKind, namespace: String, limit: Int)
    /// The identifier was not declared.
    case notPermitted(identifier: String)
    /// The scheduler is stopping and accepts no new requests.
    case unavailable
    /// The request could not be committed to the state file; the scheduler stops. Nothing of it
    /// was kept or acted on.
    case notSaved(reason: String)

    /// One line saying why, naming the identifier and the limit where there is one.
    public var description: String {
        switch self {
        case let .tooManyPendingTaskRequests(id, kind, ns, limit):
            "tooManyPendingTaskRequests: \(id): namespace '\(ns)' already has \(limit) pending \(kind.rawValue) request\(limit == 1 ? "" : "s")"
        case let .notPermitted(id):
            "notPermitted: \(id) is not a declared task identifier"
        case .unavailable:
            "unavailable: the scheduler is stopping"
        case let .notSaved(reason):
            "notSaved: the request could not be committed (\(reason)); refreshd is stopping"
        }
    }
}
