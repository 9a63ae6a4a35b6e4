import Foundation
import RefreshdCore

extension SimulationReport {
    /// One widget's reload figures on one day, read from the `widget-day` rows the timeline
    /// machine counts (the report's local days). JSON keys are snake_case, as `refreshd stats reloads` writes.
    package struct WidgetDay: Codable, Sendable, Equatable {
        package var kind: String
        package var family: String
        package var reloadsRequested: Int
        package var reloadsPerformed: Int
        package var reloadsDeferred: Int
        package var reloadsExempt: Int
        /// Counted reloads that waited for the minimum interval since the last one.
        package var reloadsSpaced: Int = 0
        package var providerCalls: Int
        package var upstreamFetches: Int
        /// The lowest budget left that day; nil when unlimited.
        package var budgetLow: Int?
        package var staleMinutes: Int64
        package var firstStale: Instant?
        package var staleReason: String?
        /// Playlist widgets only (nil otherwise): minutes of the day showing an earlier staged
        /// day's playlist because the day's own was not staged (missed or expired staging).
        package var fallbackMinutes: Int64?
        /// The staged day shown instead (the first of the day), and from when.
        package var fallbackFrom: String?
        package var fallbackSince: Instant?
        /// A timeline template's instances' widgets folded into one row (issue 23): `kind` is
        /// `TEMPLATE[*]`, the figures the instances' sums (`budget_low` the lowest), and this
        /// how many instances' widgets it holds. Nil (not written) for a widget's own row.
        package var instances: Int?

        enum CodingKeys: String, CodingKey {
            case kind, family, instances
            case reloadsRequested = "reloads_requested", reloadsPerformed = "reloads_performed"
            case reloadsDeferred = "reloads_deferred", reloadsExempt = "reloads_exempt", reloadsSpaced = "reloads_spaced"
            case providerCalls = "provider_calls", upstreamFetches = "upstream_fetches", budgetLow = "budget_low"
            case staleMinutes = "stale_minutes", firstStale = "first_stale", staleReason = "stale_reason"
            case fallbackMinutes = "fallback_minutes", fallbackFrom = "fallback_from", fallbackSince = "fallback_since"
        }

        package func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(kind, forKey: .kind)
            try c.encode(family, forKey: .family)
            try c.encodeIfPresent(instances, forKey: .instances)
            try c.encode(reloadsRequested, forKey: .reloadsRequested)
            try c.encode(reloadsPerformed, forKey: .reloadsPerformed)
            try c.encode(reloadsDeferred, forKey: .reloadsDeferred)
            try c.encode(reloadsExempt, forKey: .reloadsExempt)
            try c.encode(reloadsSpaced, forKey: .reloadsSpaced)
            try c.encode(providerCalls, forKey: .providerCalls)
            try c.encode(upstreamFetches, forKey: .upstreamFetches)
            try c.encode(budgetLow, forKey: .budgetLow)  // null when unlimited
            try c.encode(staleMinutes, forKey: .staleMinutes)
            try c.encode(firstStale, forKey: .firstStale)
            try c.encode(staleReason, forKey: .staleReason)
            if let fallbackMinutes {  // playlist widgets only
                try c.encode(fallbackMinutes, forKey: .fallbackMinutes)
                try c.encode(fallbackFrom, forKey: .fallbackFrom)
                try c.encode(fallbackSince, forKey: .fallbackSince)
            }
        }

        init(_ row: WidgetDayCounter) {
            kind = row.kind
            family = row.family.rawValue
            reloadsRequested = row.requested
            reloadsPerformed = row.performed
            reloadsDeferred = row.deferred
            reloadsExempt = row.exempt
            reloadsSpaced = row.spaced ?? 0
            providerCalls = row.providerCalls
            upstreamFetches = row.upstreamFetches
            budgetLow = row.budgetLow
            staleMinutes = row.staleMinutes
            firstStale = row.firstStale
            staleReason = row.staleReason?.description
        }
    }

    /// One activity on one day: its state at the day's end and the day's transitions.
    package struct ActivityDay: Codable, Sendable, Equatable {
        package var id: String
        package var type: String
        package var state: String
        package var transitions: [ActivityStep]
    }

    /// A state change: when it was due (`at`), when it was applied, from, to, and why.
    package struct ActivityStep: Codable, Sendable, Equatable {
        package var at: Instant
        package var applied: Instant
        package var from: String?
        package var to: String
        package var cause: String

        package func encode(to encoder: any Encoder) throws {
            enum K: String, CodingKey { case at, applied, from, to, cause }
            var c = encoder.container(keyedBy: K.self)
            try c.encode(at, forKey: .at)
            try c.encode(applied, forKey: .applied)
            try c.encode(from, forKey: .from)
            try c.encode(to, forKey: .to)
            try c.encode(cause, forKey: .cause)
        }
    }

    /// Something on a widget's lane in the picture: an entry shown, a reload, a deferral, a
    /// failure, the start or end of a stale span.
    package struct WidgetMark: Codable, Sendable, Equatable {
        package var kind: String
        package var at: Instant
        package var detail: String
        /// In a lane of a template's instances' widgets (issue 23): the instance widget's kind
        /// (its stale spans are its own). Nil (not written) in a widget's own lane.
        package var instance: String? = nil
    }

    /// One widget's marks over the whole simulation.
    package struct WidgetLane: Codable, Sendable, Equatable {
        package var widget: String
        package var marks: [WidgetMark]
        /// A template's instances' widgets of one family folded into one lane (issue 23):
        /// `widget` is `TEMPLATE[*]/family`, the marks every instance's; nil for a widget's own.
        package var instances: Int?
    }

    /// One activity's states over the whole simulation, for its lane.
    package struct ActivityLane: Codable, Sendable, Equatable {
        package var id: String
        package var type: String
        package var steps: [ActivityStep]
    }

    /// The widgets' day rows and the activities' transitions, filled into `days`; the lanes.
    static func sideFigures(_ sim: Simulation, dayLabels: [String], dayIndex: (Instant) -> Int, boundaries: [Instant])
        -> (widgets: [[WidgetDay]], activities: [[ActivityDay]], widgetLanes: [WidgetLane], activityLanes: [ActivityLane]) {
        let decoder = JSONDecoder()
        var rows = ((try? sim.store.records(table: TimelineChange.counterTable)) ?? []).compactMap {
            try? decoder.decode(WidgetDayCounter.self, from: Data($0.value.utf8))
        }
        // An open stale span's time since the machine last accounted it, up to the end.
        let records = ((try? sim.store.records(table: TimelineChange.widgetTable)) ?? []).compactMap {
            try? decoder.decode(WidgetRecord.self, from: Data($0.value.utf8))
        }
        // Rows are the report's local days (the machine counts in the scenario's zone).
        let lastDay = sim.dayLabel(sim.end - .milliseconds(1))
        let lastMidnight = boundaries.last ?? sim.end
        for record in records {
            guard let span = record.stale else { continue }
            let from = max(record.staleAccountedUntil ?? span.start, span.start, lastMidnight)
            guard sim.end > from else { continue }
            if let i = rows.firstIndex(where: { $0.day == lastDay && $0.widget == record.widget }) {
                rows[i].staleMilliseconds += sim.end.milliseconds - from.milliseconds
                if rows[i].firstStale == nil { rows[i].firstStale = from; rows[i].staleReason = span.reason }
            } else {
                var row = WidgetDayCounter(day: lastDay, widget: record.widget)
                row.staleMilliseconds = sim.end.milliseconds - from.milliseconds
                row.firstStale = from
                row.staleReason = span.reason
                rows.append(row)
            }
        }
        var widgets = dayLabels.map { _ in [WidgetDay]() }
        let widgetLanes = sim.side.widgetMarks.sorted { $0.key < $1.key }.map { WidgetLane(widget: $0.key, marks: $0.value.filter { $0.at < sim.end }) }
        let fallbacks = fallbackSpans(widgetLanes, playlists: sim.side.playlistWidgets, end: sim.end)
        for row in rows.sorted(by: { ($0.day, $0.widget) < ($1.day, $1.widget) }) {
            guard let index = dayLabels.firstIndex(of: row.day) else { continue }
            var day = WidgetDay(row)
            if let spans = fallbacks[row.widget.description] {
                let midnight = boundaries[index]
                let next = index + 1 < boundaries.count ? boundaries[index + 1] : sim.nextDay(after: midnight)
                let today = spans.compactMap { span -> (Instant, Instant, String)? in
                    let from = max(span.0, midnight), to = min(span.1, next)
                    return from < to ? (from, to, span.2) : nil
                }
                day.fallbackMinutes = today.reduce(Int64(0)) { $0 + ($1.1.milliseconds - $1.0.milliseconds) } / 60_000
                day.fallbackFrom = today.first?.2
                day.fallbackSince = today.first?.0
            }
            widgets[index].append(day)
        }
        // Activities: transitions by the day they were due.
        let transitions = sim.side.activityTransitions.filter { $0.transition.due < sim.end }
        var activities = dayLabels.map { _ in [ActivityDay]() }
        var lanes: [String: ActivityLane] = [:]
        var firstDay: [String: Int] = [:]
        var lastDayOf: [String: Int] = [:]
        for t in transitions {
            let step = ActivityStep(at: t.transition.due, applied: t.transition.applied, from: t.transition.from?.rawValue,
                                    to: t.transition.to.rawValue, cause: t.transition.cause.rawValue)
            lanes[t.id, default: ActivityLane(id: t.id, type: t.type, steps: [])].steps.append(step)
            let d = dayIndex(t.transition.due)
            firstDay[t.id] = min(firstDay[t.id] ?? d, d)
            lastDayOf[t.id] = max(lastDayOf[t.id] ?? d, d)
        }
        for (id, lane) in lanes.sorted(by: { NaturalOrder.less($0.key, $1.key) }) {
            guard let first = firstDay[id] else { continue }
            var state: String?
            for day in first..<dayLabels.count {
                let today = lane.steps.filter { dayIndex($0.at) == day }
                if let last = today.last { state = last.to }
                // A dismissed activity is listed on the day it was dismissed, not after.
                if today.isEmpty, state == ActivityState.dismissed.rawValue { break }
                activities[day].append(ActivityDay(id: id, type: lane.type, state: state ?? "unknown", transitions: today))
            }
        }
        let kinds = sim.side.templatesOfKinds
        guard !kinds.isEmpty else { return (widgets, activities, widgetLanes, lanes.values.sorted { NaturalOrder.less($0.id, $1.id) }) }
        return (widgets.map { foldInstances($0, templates: kinds) }, activities, foldInstances(widgetLanes, templates: kinds),
                lanes.values.sorted { NaturalOrder.less($0.id, $1.id) })
    }

    /// A day's rows with each timeline template's instances' widgets folded into one row per
    /// template and family (issue 23), at the place of its first: sums of their figures (fallback
    /// minutes too), the lowest budget left, the earliest first stale instant (and its reason),
    /// the earliest fallback (and its day).
    static func foldInstances(_ rows: [WidgetDay], templates: [String: String]) -> [WidgetDay] {
        var folded: [WidgetDay] = []
        var at: [String: Int] = [:]
        for row in rows {
            guard let template = templates[row.kind] else {
                folded.append(row)
                continue
            }
            let key = "\(template)[*]/\(row.family)"
            guard let i = at[key] else {
                var first = row
                first.kind = "\(template)[*]"
                first.instances = 1
                at[key] = folded.count
                folded.append(first)
                continue
            }
            var sum = folded[i]
            sum.instances = (sum.instances ?? 0) + 1
            sum.reloadsRequested += row.reloadsRequested
            sum.reloadsPerformed += row.reloadsPerformed
            sum.reloadsDeferred += row.reloadsDeferred
            sum.reloadsExempt += row.reloadsExempt
            sum.reloadsSpaced += row.reloadsSpaced
            sum.providerCalls += row.providerCalls
            sum.upstreamFetches += row.upstreamFetches
            if let low = row.budgetLow { sum.budgetLow = min(sum.budgetLow ?? low, low) }
            sum.staleMinutes += row.staleMinutes
            if let stale = row.firstStale, sum.firstStale.map({ stale < $0 }) ?? true {
                sum.firstStale = stale
                sum.staleReason = row.staleReason
            }
            // Playlist widgets: the instances' fallback minutes summed (one user's fallback is
            // the row's, never hidden behind the first instance's), the earliest fallback named.
            if let minutes = row.fallbackMinutes {
                sum.fallbackMinutes = (sum.fallbackMinutes ?? 0) + minutes
                if let since = row.fallbackSince, sum.fallbackSince.map({ since < $0 }) ?? true {
                    sum.fallbackSince = since
                    sum.fallbackFrom = row.fallbackFrom
                }
            }
            folded[i] = sum
        }
        return folded
    }

    /// The lanes with each template's instances' widgets of a family in one lane, their marks
    /// merged in time order (a thousand users are one lane, not a thousand).
    static func foldInstances(_ lanes: [WidgetLane], templates: [String: String]) -> [WidgetLane] {
        var folded: [WidgetLane] = []
        var at: [String: Int] = [:]
        for lane in lanes {
            guard let slash = lane.widget.lastIndex(of: "/"), let template = templates[String(lane.widget[..<slash])] else {
                folded.append(lane)
                continue
            }
            let key = "\(template)[*]" + lane.widget[slash...]
            let kind = String(lane.widget[..<slash])
            let marks = lane.marks.map { mark in
                var mark = mark
                mark.instance = kind
                return mark
            }
            if let i = at[key] {
                folded[i].marks += marks
                folded[i].instances = (folded[i].instances ?? 0) + 1
            } else {
                at[key] = folded.count
                folded.append(WidgetLane(widget: key, marks: marks, instances: 1))
            }
        }
        for i in folded.indices where folded[i].instances != nil {
            folded[i].marks.sort { $0.at < $1.at }
        }
        return folded
    }

    /// Each playlist widget's fallback spans (from, to, staged day shown): from an entry shown
    /// with a fallback to the next entry shown without (or the end). Playlist widgets with none
    /// have an empty list, so their rows still carry `fallback_minutes: 0`.
    static func fallbackSpans(_ lanes: [WidgetLane], playlists: Set<String>, end: Instant) -> [String: [(Instant, Instant, String)]] {
        var spans: [String: [(Instant, Instant, String)]] = [:]
        for widget in playlists { spans[widget] = [] }
        for lane in lanes where playlists.contains(lane.widget) {
            var open: (Instant, String)?
            for m in lane.marks where m.kind == "shown" || m.kind == "shown-fallback" {
                let day = m.kind == "shown-fallback" ? m.detail.split(separator: " ").last.map(String.init) : nil
                if let (from, was) = open, was != day {
                    spans[lane.widget, default: []].append((from, m.at, was))
                    open = nil
                }
                if open == nil, let day { open = (m.at, day) }
            }
            if let (from, day) = open { spans[lane.widget, default: []].append((from, end, day)) }
        }
        return spans
    }

    /// `fallback to 2026-11-23's playlist from 00:00`, in the report's zone.
    func fallbackWords(_ w: WidgetDay) -> String? {
        guard let from = w.fallbackFrom, let since = w.fallbackSince, (w.fallbackMinutes ?? 0) > 0 else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: timeZone) ?? TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.hour, .minute], from: Date(timeIntervalSince1970: Double(since.milliseconds) / 1000))
        return "fallback to \(from)'s playlist from " + String(format: "%02d:%02d", c.hour ?? 0, c.minute ?? 0)
    }

    /// `stale from day 2 11:42 (budget spent)`: the first stale instant, in the report's days.
    func staleWords(_ w: WidgetDay) -> String? {
        guard let first = w.firstStale else { return nil }
        let zone = TimeZone(identifier: timeZone) ?? TimeZone(identifier: "UTC")!
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let date = Date(timeIntervalSince1970: Double(first.milliseconds) / 1000)
        let c = calendar.dateComponents([.hour, .minute], from: date)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = zone
        formatter.dateFormat = "yyyy-MM-dd"
        let label = formatter.string(from: date)
        let day = (days.firstIndex { $0.date == label } ?? 0) + 1
        let time = String(format: "%02d:%02d", c.hour ?? 0, c.minute ?? 0)
        return "stale from day \(day) \(time)" + (w.staleReason.map { " (\($0))" } ?? "")
    }

    /// The widgets and activities section of the table.
    var sideText: [String] {
        var out: [String] = []
        if days.contains(where: { !$0.widgets.isEmpty }) {
            out.append("")
            // The spaced column only when a widget waited for the minimum interval.
            let spacing = days.contains { $0.widgets.contains { $0.reloadsSpaced > 0 } }
            let header = ["day", "widget", "requested", "performed", "deferred"] + (spacing ? ["spaced"] : [])
                + ["exempt", "calls", "fetches", "budget low", "stale min"]
            var rows: [[String]] = []
            var words: [String] = []
            var fallbackWords: [String] = []
            for d in days {
                for w in d.widgets {
                    rows.append([d.date, "\(w.kind)/\(w.family)", String(w.reloadsRequested), String(w.reloadsPerformed),
                                 String(w.reloadsDeferred)] + (spacing ? [String(w.reloadsSpaced)] : [])
                                + [String(w.reloadsExempt), String(w.providerCalls),
                                   String(w.upstreamFetches), w.budgetLow.map(String.init) ?? "-", String(w.staleMinutes)])
                    if let text = staleWords(w) { words.append("  \(d.date) \(w.kind)/\(w.family): \(text), \(w.staleMinutes) min") }
                    if let text = self.fallbackWords(w) {
                        fallbackWords.append("  \(d.date) \(w.kind)/\(w.family): \(text), \(w.fallbackMinutes ?? 0) min")
                    }
                }
            }
            out += Self.table(header, rows)
            if !words.isEmpty {
                out.append("stale widgets:")
                out += words
            }
            if !fallbackWords.isEmpty {
                out.append("playlist fallbacks (staging missed or expired):")
                out += fallbackWords
            }
        }
        if days.contains(where: { !$0.activities.isEmpty }) {
            out.append("")
            out.append("activities:")
            for d in days {
                for a in d.activities where !a.transitions.isEmpty {
                    let steps = a.transitions.map { "\($0.to) at \($0.at.iso8601.dropFirst(11).prefix(5)) (\($0.cause))" }
                    out.append("  \(d.date) \(a.id) (\(a.type)): \(steps.joined(separator: ", ")); \(a.state) at day end")
                }
            }
        }
        return out
    }
}
