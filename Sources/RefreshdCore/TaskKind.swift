/// The two request kinds of BGTaskScheduler.
///
/// `appRefresh` is short work (default allowance 30 s, at most one pending per namespace);
/// `processing` is longer work that may require external power or network (at most ten pending).
public enum TaskKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// Short work: default allowance 30 s, at most one pending request per namespace.
    case appRefresh = "app-refresh"
    /// Longer work that may wait for power or network: default allowance 10 min, ten pending.
    case processing = "processing"

    /// The allowance a job gets when its config does not name one.
    public var defaultAllowance: Duration {
        switch self {
        case .appRefresh: .seconds(30)
        case .processing: .seconds(600)
        }
    }
}
