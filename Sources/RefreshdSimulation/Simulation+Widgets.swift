import Foundation
import RefreshdCore
import RefreshdRuntime

/// Widget timelines and live activities in a simulation: modelled providers, the device's
/// reloads, the widget faults, and the end-to-end audits of what was published.
extension Simulation {
    /// The device's widget events: foreground sessions and widget intents (exempt), system reloads and the app's
    /// explicit reloads, each a `reloadAllTimelines` at its instant.
    func addWidgetEvents(_ add: (Instant, ExternalEvent.Action) -> Void) {
        let device = scenario.device
        guard specs.contains(where: { $0.widget != nil }) else { return }
        for span in device.lowPower {
            let t = span.start.instant(start: scenario.start)
            add(t, .lowPower)
            add(t + span.duration, .lowPower)
        }
        for (times, reason) in [(device.foreground, ReloadReason.appForeground), (device.intents, .widgetIntent)] where !times.isEmpty {
            var day = startOfDay(containing: scenario.start)
            while day < end {
                for minute in times.sorted() { add(localMinute(minute, day: day), .reload(reason)) }
                day = nextDay(after: day)
            }
        }
        for (every, reason) in [(device.systemReloads, ReloadReason.system), (device.explicitReloads, .explicitAPI)] {
            guard let every, every > .zero else { continue }
            var t = scenario.start + every
            while t < end {
                add(t, .reload(reason))
                t = t + every
            }
        }
    }

    /// The widget and activity machines' own invariants, then the end-to-end ones: every
    /// published widget entry is one a provider returned; no activity visible past 12 h from
    /// its start; no activity update applied out of order.
    func checkSideMachines(_ runtime: RefreshRuntime) -> (String, String)? {
        if host.publicationCount == publicationsChecked, runtime.sideMachinesIdle { return nil }
        // The machines' own invariants read only their state, which changes only with an event
        // (a new revision); of the checks below only the 12 h limit reads the clock, and it
        // cannot fail before `sideCheckDueAt`. So a step that touched neither machine, published
        // nothing and did not reach that instant cannot break any of them.
        let revision = (runtime: ObjectIdentifier(runtime), revision: runtime.sideMachinesRevision)
        if host.publicationCount == publicationsChecked, let checked = sideChecked,
           checked.runtime == revision.runtime, checked.revision == revision.revision,
           sideCheckDueAt.map({ host.clock <= $0 }) ?? true {
            return nil
        }
        sideChecked = revision
        if let v = runtime.checkTimelineInvariants().first { return ("timeline-\(v.invariant)", v.description) }
        if let v = runtime.checkActivityInvariants().first { return ("activity", v) }
        let now = host.clock
        sideCheckDueAt = nil
        for (id, activity) in runtime.activityRecords().sorted(by: { $0.key < $1.key }) {
            if activity.state != .dismissed {
                let limit = activity.start + Self.visibleLimit
                if now > limit {
                    return ("activity-visible-past-12h", "activity \(id) started \(activity.start) is still \(activity.state) at \(now), past its 12 h limit")
                }
                if sideCheckDueAt.map({ limit < $0 }) ?? true { sideCheckDueAt = limit }
            }
            if let stamp = activity.lastUpdateTimestamp {
                if let seen = lastUpdate[id], stamp < seen {
                    return ("activity-update-out-of-order", "activity \(id) applied an update of \(stamp) after one of \(seen)")
                }
                lastUpdate[id] = stamp
            }
        }
        if host.publicationCount != publicationsChecked {
            publicationsChecked = host.publicationCount
            // Most publications are activities' (one per update). An entry that passed stays
            // passing (returned entries are never forgotten), so the sorted walk below runs
            // only when a widget's entry changed; it names the first failing path as before.
            let publications = host.publications
            var changed = false
            for (path, contents) in publications where checkedWidgetEntries[path] != contents && path.utf8.starts(with: "widgets/".utf8) {
                changed = true
                break
            }
            guard changed else { return nil }
            for (path, contents) in publications.sorted(by: { $0.key < $1.key }) where path.hasPrefix("widgets/") {
                let parts = path.split(separator: "/")
                guard parts.count == 3, let date = Self.field(contents, after: "\"date\":\""),
                      let content = Self.content(contents) else {
                    return ("widget-entry-returned", "\(path) holds \(contents.prefix(120)), which is not a widget entry")
                }
                let widget = "\(parts[1])/\(parts[2].dropLast(".json".count))"
                guard side.wasReturned(SideJournal.entryKey(widget: widget, date: date, content: content)) else {
                    return ("widget-entry-returned", "\(path) shows the entry of \(date) \(content), which no provider of \(widget) returned")
                }
                checkedWidgetEntries[path] = contents
            }
        }
        return nil
    }

    /// How long the system lets an activity stay visible (iOS's 12 h), checked from outside the
    /// activity machine, which has its own copy of the rule.
    static let visibleLimit = Duration.seconds(12 * 3600)

    /// The text after `marker` up to the next quote.
    static func field(_ text: String, after marker: String) -> String? {
        guard let r = text.range(of: marker) else { return nil }
        let rest = text[r.upperBound...]
        guard let q = rest.firstIndex(of: "\"") else { return nil }
        return String(rest[..<q])
    }

    /// The `content` object of a published entry (flat: the simulation's providers write one).
    static func content(_ text: String) -> String? {
        guard let r = text.range(of: ",\"content\":") else { return nil }
        let rest = text[r.upperBound...]
        guard let close = rest.firstIndex(of: "}") else { return nil }
        return String(rest[...close])
    }
}
