/// A durable change of the timeline machine, for the runtime to commit before acting on the
/// effects that follow it (as `StateChange.putRecord`/`.deleteRecord`, values as JSON text).
///
/// | change | table | key | value |
/// |---|---|---|---|
/// | `putWidget(r)` | `widget` | `kind/family` | `r` (a `WidgetRecord`) |
/// | `deleteWidget(id)` | `widget` | `kind/family` | (deleted) |
/// | `putCounters(c)` | `widget-day` | `YYYY-MM-DD kind/family` | `c` (a `WidgetDayCounter`) |
package enum TimelineChange: Sendable, Hashable, Codable {
    case putWidget(WidgetRecord)
    case deleteWidget(WidgetID)
    case putCounters(WidgetDayCounter)

    package static let widgetTable = "widget"
    package static let counterTable = "widget-day"

    /// The store table the change belongs to.
    package var table: String {
        switch self {
        case .putWidget, .deleteWidget: Self.widgetTable
        case .putCounters: Self.counterTable
        }
    }

    /// The record's key within its table.
    package var key: String {
        switch self {
        case let .putWidget(record): record.widget.description
        case let .deleteWidget(id): id.description
        case let .putCounters(counter): counter.key
        }
    }
}
