import RefreshdCore

/// The widgets of a timeline template's instances folded into one row a template (issue 23),
/// for `status`, `watch` and the dashboard: a thousand users' widgets are one line with counts,
/// never a thousand rows. Pure. A widget belongs to an instance when its job is `T[K]`; a
/// template with a single instance widget keeps its row (nothing to fold).
package struct InstanceWidgetFold: Sendable, Hashable, Codable {
    /// The template.
    package var template: String
    /// Its instances that have a widget on screen.
    package var instances: Int
    /// Their widgets (one per instance and family).
    package var widgets: Int
    /// How many are stale now.
    package var stale: Int
    /// How many have a provider call in flight.
    package var reloading: Int
    /// The lowest budget left of any of them (nil: every budget unlimited), and whose.
    package var lowestBudgetLeft: Int?
    package var lowestBudgetWidget: String?
    /// The stale ones first, at most `FailingInstances.top`, as `kind/family`.
    package var staleWidgets: [String]

    /// The widgets not folded (jobs' own, and templates with one instance widget), in the
    /// snapshot's order, and one fold a template, in the order of its first widget.
    package static func fold(_ widgets: [TimelineSnapshot.Widget]) -> (rows: [TimelineSnapshot.Widget], folds: [InstanceWidgetFold]) {
        var of: [String: [TimelineSnapshot.Widget]] = [:]
        var order: [String] = []
        for w in widgets {
            guard let split = InstanceName.split(w.job) else { continue }
            if of[split.template] == nil { order.append(split.template) }
            of[split.template, default: []].append(w)
        }
        var rows: [TimelineSnapshot.Widget] = []
        for w in widgets {
            if let split = InstanceName.split(w.job), let all = of[split.template], all.count > 1 { continue }
            rows.append(w)
        }
        let folds = order.compactMap { template -> InstanceWidgetFold? in
            guard let all = of[template], all.count > 1 else { return nil }
            var fold = InstanceWidgetFold(template: template, instances: Set(all.map(\.job)).count, widgets: all.count,
                                          stale: 0, reloading: 0, staleWidgets: [])
            for w in all {
                if w.staleSince != nil {
                    fold.stale += 1
                    if fold.staleWidgets.count < FailingInstances.top { fold.staleWidgets.append("\(w.kind)/\(w.family.rawValue)") }
                }
                if w.providerRunningSince != nil { fold.reloading += 1 }
                if let left = w.budgetLeft, fold.lowestBudgetLeft.map({ left < $0 }) ?? true {
                    fold.lowestBudgetLeft = left
                    fold.lowestBudgetWidget = "\(w.kind)/\(w.family.rawValue)"
                }
            }
            return fold
        }
        return (rows, folds)
    }

    /// `t.widget[*]  3 instances, 6 widgets  1 stale  0 reloading  lowest budget left 2 (w.bob/systemSmall)`.
    package var line: String {
        var text = "\(template)[*]  \(instances) instance\(instances == 1 ? "" : "s"), \(widgets) widgets  \(stale) stale  \(reloading) reloading"
        if let left = lowestBudgetLeft, let whose = lowestBudgetWidget { text += "  lowest budget left \(left) (\(whose))" }
        if !staleWidgets.isEmpty { text += "  stale: " + staleWidgets.joined(separator: ", ") + (stale > staleWidgets.count ? ", ..." : "") }
        return text
    }
}
