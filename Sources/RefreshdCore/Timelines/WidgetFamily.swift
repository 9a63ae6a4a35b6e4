/// A widget size or placement, as WidgetKit names them.
///
/// The provider is asked once per family on screen per reload (several instances of one family
/// count as one), so a family is the unit of budget, publication and staleness. Raw values are
/// WidgetKit's spellings; they appear in job files, file names and JSON.
package enum WidgetFamily: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    case systemSmall
    case systemMedium
    case systemLarge
    case systemExtraLarge
    case accessoryRectangular
    case accessoryCircular
    case accessoryInline

    /// Declaration order (home screen sizes, then lock screen), so listings read naturally.
    package static func < (lhs: WidgetFamily, rhs: WidgetFamily) -> Bool {
        lhs.order < rhs.order
    }

    private var order: Int {
        switch self {
        case .systemSmall: 0
        case .systemMedium: 1
        case .systemLarge: 2
        case .systemExtraLarge: 3
        case .accessoryRectangular: 4
        case .accessoryCircular: 5
        case .accessoryInline: 6
        }
    }
}
