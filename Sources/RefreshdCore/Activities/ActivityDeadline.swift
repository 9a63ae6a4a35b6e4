/// One kind of an activity's deadline. When several fall on the same instant they apply in this
/// order: a start, a held update's release, the stale date, the 8 h end, the dismissal, the 12 h
/// limit.
package enum ActivityDeadline: Int, Sendable, Hashable, Comparable, CaseIterable {
    case start, release, stale, activeLimit, dismissal, visibleLimit

    package static func < (lhs: ActivityDeadline, rhs: ActivityDeadline) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A deadline heap entry: valid while it equals its activity's next deadline.
struct DeadlineEntry: Comparable, Sendable {
    var at: Instant
    var kind: ActivityDeadline
    var id: String

    static func < (lhs: DeadlineEntry, rhs: DeadlineEntry) -> Bool {
        if lhs.at != rhs.at { return lhs.at < rhs.at }
        if lhs.kind != rhs.kind { return lhs.kind < rhs.kind }
        return lhs.id < rhs.id
    }
}
