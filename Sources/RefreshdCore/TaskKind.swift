/// The two request kinds of BGTaskScheduler.
///
/// `appRefresh` is short work (default allowance 30 s, at most one pending per namespace);
/// `processing` is longer work that may require external power or network (at most ten pending).
public enum TaskKind: String, Sendable, Hashable, Codable, CaseIterable {
    case appRefresh = "app-refresh"
    case processing = "processing"

    /// The allowance a job gets when its config does not name one.
    public var defaultAllowance: Duration {
        switch self {
        case .appRefresh: .seconds(30)
        case .processing: .seconds(600)
        }
    }
}
