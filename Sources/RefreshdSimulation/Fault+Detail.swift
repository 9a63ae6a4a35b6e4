import RefreshdConfig
import RefreshdCore

extension Fault {
    /// The words the report uses for the widget and activity faults.
    func detail(start: Instant) -> String {
        switch self {
        case let .providerGarbage(job, run, span):
            if let run { return "\(job) provider run \(run) returns garbage" }
            if let span { return "\(job) provider returns garbage from \(span.start.instant(start: start)) for \(formatDuration(span.duration))" }
            return "\(job) provider returns garbage"
        case let .providerExpires(job, run): return "\(job) provider run \(run) expires"
        case let .budgetEmpty(span): return "widget budgets empty from \(span.start.instant(start: start)) for \(formatDuration(span.duration))"
        case let .activitySilent(job, run, after): return "\(job) run \(run) stops updating its activity after \(formatDuration(after))"
        case let .lowPower(span): return "Low Power Mode from \(span.start.instant(start: start)) for \(formatDuration(span.duration))"
        case let .widgetIntents(at, count): return "\(count) widget intent\(count == 1 ? "" : "s") (button taps) from \(at.instant(start: start))"
        case let .notifierDown(span): return "notification receivers fail from \(span.start.instant(start: start)) for \(formatDuration(span.duration))"
        case let .pause(job, at, length):
            return "\(job) paused at \(at.instant(start: start))" + (length.map { ", resumed after \(formatDuration($0))" } ?? " to the end")
        case let .order(order, at): return order.text(at: at.instant(start: start))
        default: return label
        }
    }
}
