/// Where a Live Activity is in its life, as ActivityKit names it.
///
/// `pending` waits for its start date; `active` and `stale` are shown and take updates (`stale`
/// once its stale date passed with no newer update); `ended` is still shown but takes no update;
/// `dismissed` is gone. The only moves are the ones `canMove(to:)` allows, and the machine's
/// invariant check and tests hold it to them.
package enum ActivityState: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    case pending, active, stale, ended, dismissed

    /// Counts against the namespace's concurrency limit (pending, active, stale).
    package var isLive: Bool { self == .pending || self == .active || self == .stale }

    /// On screen: started and not yet dismissed (active, stale, ended).
    package var isVisible: Bool { self == .active || self == .stale || self == .ended }

    /// The allowed transitions:
    /// - pending → active, stale (its stale date had passed at start), dismissed (ended before
    ///   it started: it was never shown);
    /// - active → stale, ended; stale → active (an update), ended;
    /// - ended → dismissed.
    /// An immediate dismissal goes active/stale → ended → dismissed in two steps at one instant.
    package func canMove(to next: ActivityState) -> Bool {
        switch (self, next) {
        case (.pending, .active), (.pending, .stale), (.pending, .dismissed),
             (.active, .stale), (.active, .ended),
             (.stale, .active), (.stale, .ended),
             (.ended, .dismissed):
            true
        default:
            false
        }
    }

    package var description: String { rawValue }
}
