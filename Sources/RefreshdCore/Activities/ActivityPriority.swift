/// An update's priority, as APNs' `apns-priority` for Live Activities: `high` (10) draws on the
/// activity's hourly budget and is held when it is spent; `low` (5) never counts against it.
package enum ActivityPriority: String, Sendable, Hashable, Codable, CaseIterable {
    case low, high
}
