import Foundation
import RefreshdConfig
import RefreshdCore
import RefreshdRuntime

extension SimulationReport {
    /// Checks a widget or activity expectation against the days and lanes.
    func evaluateSide(_ e: Expectation) -> ExpectationResult? {
        switch e {
        case let .widget(kind, family, day, figure, comparison, bound):
            let rows = widgetRows(kind: kind, family: family, day: day)
            let value = rows.reduce(0) { sum, w in sum + Self.figure(figure, of: w) }
            let what = "\(kind)/\(family ?? "*")" + (day.map { " day \($0)" } ?? "") + " \(figure.rawValue)"
            return .init(expectation: "\(what) \(comparison.rawValue) \(bound)", passed: !rows.isEmpty && comparison.holds(value, bound),
                         found: rows.isEmpty ? "no such widget" : "\(value)")
        case let .widgetFirstStale(kind, family, day, before):
            let rows = widgetRows(kind: kind, family: family, day: day)
            let first = rows.compactMap(\.firstStale).min()
            let what = "\(kind)/\(family ?? "*")" + (day.map { " day \($0)" } ?? "")
            guard let before else {
                return .init(expectation: "\(what) never stale", passed: !rows.isEmpty && first == nil,
                             found: rows.isEmpty ? "no such widget" : first.map { "stale from \($0.iso8601)" } ?? "never stale")
            }
            let minute = first.map { Int(($0.milliseconds / 60_000) % 1440) }
            let label = TimelineModel.label(before)
            return .init(expectation: "\(what) first stale before \(label) UTC", passed: minute.map { $0 < before } ?? false,
                         found: first.map { "stale from \($0.iso8601)" } ?? "never stale")
        case let .activity(id, state, cause, after, reached):
            let lane = activityLanes.first { $0.id == id }
            let start = lane?.steps.first?.at
            let step = lane?.steps.first { $0.to == state && (cause == nil || $0.cause == cause) }
            var what = "activity \(id) \(reached ? "reaches" : "never reaches") \(state)" + (cause.map { " (\($0))" } ?? "")
            let found = step.map { "\($0.to) (\($0.cause)) at \($0.at.iso8601)" } ?? (lane == nil ? "no such activity" : "not reached")
            guard reached else { return .init(expectation: what, passed: lane != nil && step == nil, found: found) }
            guard let step, let start else { return .init(expectation: what, passed: false, found: found) }
            if let (comparison, limit) = after {
                what += " \(comparison.rawValue) \(formatDuration(limit)) after its start"
                let elapsed = step.at.milliseconds - start.milliseconds
                let holds: Bool = switch comparison {
                case .equal: elapsed == limit.wholeMilliseconds
                case .atMost: elapsed <= limit.wholeMilliseconds
                case .atLeast: elapsed >= limit.wholeMilliseconds
                }
                return .init(expectation: what, passed: holds, found: found + ", \(formatDuration(.milliseconds(elapsed))) after its start")
            }
            return .init(expectation: what, passed: true, found: found)
        case let .activityFinal(id, state):
            let last = activityLanes.first { $0.id == id }?.steps.last?.to
            return .init(expectation: "activity \(id) ends the simulation \(state)", passed: last == state, found: last ?? "no such activity")
        default:
            return nil
        }
    }

    static func figure(_ figure: Expectation.WidgetFigure, of w: WidgetDay) -> Int {
        switch figure {
        case .reloadsRequested: w.reloadsRequested
        case .reloadsPerformed: w.reloadsPerformed
        case .reloadsDeferred: w.reloadsDeferred
        case .reloadsExempt: w.reloadsExempt
        case .reloadsSpaced: w.reloadsSpaced
        case .providerCalls: w.providerCalls
        case .upstreamFetches: w.upstreamFetches
        case .staleMinutes: Int(w.staleMinutes)
        case .fallbackMinutes: Int(w.fallbackMinutes ?? 0)
        }
    }

    func widgetRows(kind: String, family: String?, day: Int?) -> [WidgetDay] {
        days.enumerated().filter { day == nil || $0.offset == day! - 1 }
            .flatMap { $0.element.widgets.filter { $0.kind == kind && (family == nil || $0.family == family) } }
    }
}
