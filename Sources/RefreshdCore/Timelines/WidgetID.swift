/// One widget on screen: a kind in one family.
///
/// The unit the timeline machine keeps state for: its own timeline, reload budget, stale spans
/// and counters. Ordered by kind then family so every listing and every batch of effects comes
/// out in the same order. Text form `kind/family` (`photos/systemSmall`), used in logs and as the
/// record key in the store.
package struct WidgetID: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    package var kind: String
    package var family: WidgetFamily

    package init(kind: String, family: WidgetFamily) {
        self.kind = kind
        self.family = family
    }

    package static func < (lhs: WidgetID, rhs: WidgetID) -> Bool {
        lhs.kind != rhs.kind ? lhs.kind < rhs.kind : lhs.family < rhs.family
    }

    /// `photos/systemSmall`.
    package var description: String { "\(kind)/\(family.rawValue)" }
}
