import Foundation
import RefreshdCore

/// The widgets side by side in a replay (issue 34): per widget and day, the reload figures as
/// refreshd counted them (its state's `widget-day` rows), as the replay counted them (the
/// simulation's rows, kept by the same timeline machine), and with the other files.
///
/// Both sides are read the same way, from the rows a store kept: whole counter days (UTC, as
/// the daemon counts them; the replay counts so too), plus a stale span still open at the end
/// up to `TO`. The state keeps no finer figures, so on a day the period covers in part the
/// "as it ran" column holds the whole day.
extension ReplayComparison {
    /// One widget's figures over a day or the period, named as in `stats reloads --json`'s rows
    /// but camel-cased like the rest of the comparison.
    package struct WidgetFigures: Sendable, Encodable, Equatable {
        package var reloadsRequested = 0
        package var reloadsPerformed = 0
        package var reloadsDeferred = 0
        package var reloadsExempt = 0
        package var providerCalls = 0
        package var upstreamFetches = 0
        /// Reloads that failed (provider failed, expired or interrupted).
        package var reloadsFailed = 0
        /// The lowest budget left; nil when unlimited.
        package var budgetLow: Int?
        package var staleMilliseconds: Int64 = 0

        /// Stale time in whole minutes, rounded to the nearest.
        package var staleMinutes: Int64 { (staleMilliseconds + 30_000) / 60_000 }

        init(_ rows: [WidgetDayCounter]) {
            for row in rows {
                reloadsRequested += row.requested
                reloadsPerformed += row.performed
                reloadsDeferred += row.deferred
                reloadsExempt += row.exempt
                providerCalls += row.providerCalls
                upstreamFetches += row.upstreamFetches
                reloadsFailed += row.failed
                if let low = row.budgetLow { budgetLow = min(budgetLow ?? low, low) }
                staleMilliseconds += row.staleMilliseconds
            }
        }

        enum CodingKeys: String, CodingKey {
            case reloadsRequested, reloadsPerformed, reloadsDeferred, reloadsExempt, providerCalls, upstreamFetches,
                 reloadsFailed, budgetLow, staleMinutes, staleMilliseconds
        }

        package func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(reloadsRequested, forKey: .reloadsRequested)
            try c.encode(reloadsPerformed, forKey: .reloadsPerformed)
            try c.encode(reloadsDeferred, forKey: .reloadsDeferred)
            try c.encode(reloadsExempt, forKey: .reloadsExempt)
            try c.encode(providerCalls, forKey: .providerCalls)
            try c.encode(upstreamFetches, forKey: .upstreamFetches)
            try c.encode(reloadsFailed, forKey: .reloadsFailed)
            try c.encode(budgetLow, forKey: .budgetLow)  // null when unlimited
            try c.encode(staleMinutes, forKey: .staleMinutes)
            try c.encode(staleMilliseconds, forKey: .staleMilliseconds)
        }

        /// `4 reloads (1 deferred), 4 calls, budget low 0, stale 20 s`.
        package var text: String {
            var parts = ["\(reloadsPerformed + reloadsExempt) reload\(reloadsPerformed + reloadsExempt == 1 ? "" : "s")"]
            var also: [String] = []
            for (n, word) in [(reloadsExempt, "exempt"), (reloadsDeferred, "deferred"), (reloadsFailed, "failed")] where n > 0 {
                also.append("\(n) \(word)")
            }
            if !also.isEmpty { parts[0] += " (" + also.joined(separator: ", ") + ")" }
            parts.append("\(providerCalls) call\(providerCalls == 1 ? "" : "s")")
            if let budgetLow { parts.append("budget low \(budgetLow)") }
            // Seconds under a minute: a short period's stale time is not "0 min".
            parts.append(staleMilliseconds > 0 && staleMilliseconds < 60_000 ? "stale \(staleMilliseconds / 1000) s" : "stale \(staleMinutes) min")
            return parts.joined(separator: ", ")
        }

        /// Reloads apart: performed, exempt, deferred and failed.
        func reloadsApart(_ other: Self) -> Int {
            abs(reloadsPerformed - other.reloadsPerformed) + abs(reloadsExempt - other.reloadsExempt)
                + abs(reloadsDeferred - other.reloadsDeferred) + abs(reloadsFailed - other.reloadsFailed)
        }
    }

    /// One widget (`kind/family`) on one day (nil: over the period).
    package struct WidgetRow: Sendable, Encodable, Equatable {
        package var day: String?
        package var widget: String
        package var ran: WidgetFigures
        package var replayed: WidgetFigures
        package var whatIf: WidgetFigures?
    }

    /// The widget rows a store kept for the counter days `from..<to` touches (UTC), each open
    /// stale span counted on to `to` (on its last day), as `stats reloads` and the simulation
    /// report count one.
    package static func widgetCounters(_ store: any StateStoring, from: Instant, to: Instant) -> [WidgetDayCounter] {
        let decoder = JSONDecoder()
        let first = dayLabel(from), last = dayLabel(to - .milliseconds(1))
        var rows = ((try? store.records(table: TimelineChange.counterTable)) ?? []).compactMap {
            try? decoder.decode(WidgetDayCounter.self, from: Data($0.value.utf8))
        }.filter { $0.day >= first && $0.day <= last }
        let widgets = ((try? store.records(table: TimelineChange.widgetTable)) ?? []).compactMap {
            try? decoder.decode(WidgetRecord.self, from: Data($0.value.utf8))
        }
        let lastMidnight = CountingDays.utc.start(of: CountingDays.utc.day(of: to - .milliseconds(1)))
        for record in widgets {
            guard let span = record.stale else { continue }
            let since = max(record.staleAccountedUntil ?? span.start, span.start, lastMidnight)
            guard to > since else { continue }
            let more = to.milliseconds - since.milliseconds
            if let i = rows.firstIndex(where: { $0.day == last && $0.widget == record.widget }) {
                rows[i].staleMilliseconds += more
            } else {
                var row = WidgetDayCounter(day: last, widget: record.widget)
                row.staleMilliseconds = more
                rows.append(row)
            }
        }
        return rows
    }

    /// `2026-12-05`: the UTC counter day of an instant.
    static func dayLabel(_ instant: Instant) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.string(from: Date(timeIntervalSince1970: Double(instant.milliseconds) / 1000))
    }

    /// Adds the widgets: rows per day and widget and over the period, and their part of the
    /// simulator's error (the replay with the same files against what ran).
    package mutating func compareWidgets(ran: [WidgetDayCounter], replayed: [WidgetDayCounter], whatIf: [WidgetDayCounter]?) {
        let sides = [ran, replayed, whatIf ?? []]
        let names = Set(sides.flatMap { $0.map(\.widget.description) }).sorted()
        let dayNames = Set(sides.flatMap { $0.map(\.day) }).sorted()
        func row(_ day: String?, _ widget: String) -> WidgetRow? {
            let pick = sides.map { $0.filter { $0.widget.description == widget && (day == nil || $0.day == day) } }
            guard pick.contains(where: { !$0.isEmpty }) else { return nil }
            return WidgetRow(day: day, widget: widget, ran: WidgetFigures(pick[0]), replayed: WidgetFigures(pick[1]),
                             whatIf: whatIf == nil ? nil : WidgetFigures(pick[2]))
        }
        widgetDays = dayNames.flatMap { d in names.compactMap { row(d, $0) } }
        widgets = names.compactMap { row(nil, $0) }
        for w in widgets {
            error.widgets += 1
            let reloads = w.ran.reloadsApart(w.replayed)
            let calls = abs(w.ran.providerCalls - w.replayed.providerCalls)
            let stale = abs(w.ran.staleMinutes - w.replayed.staleMinutes)
            let budget = w.ran.budgetLow == w.replayed.budgetLow
            error.reloadsApart += reloads
            error.providerCallsApart += calls
            error.staleMinutesApart += stale
            error.staleMillisecondsApart = max(error.staleMillisecondsApart, abs(w.ran.staleMilliseconds - w.replayed.staleMilliseconds))
            if !budget { error.budgetLowApart += 1 }
            if reloads == 0, calls == 0, stale == 0, budget { error.exactWidgets += 1 }
        }
    }

    /// The widgets' lines of the table (none without widgets).
    var widgetText: [String] {
        Self.sectionLines("widgets", days: widgetDays, totals: widgets) {
            ($0.day, $0.widget, [$0.ran.text, $0.replayed.text] + ($0.whatIf.map { [$0.text] } ?? []))
        }
    }

    /// One kind's lines of the table (widgets, activities): each row as `  [DAY  ]NAME: as ran |
    /// replayed[ | what if]`, per UTC day, then over the period; none without rows.
    static func sectionLines<Row>(_ kind: String, days: [Row], totals: [Row],
                                  _ cells: (Row) -> (day: String?, name: String, columns: [String])) -> [String] {
        guard !totals.isEmpty else { return [] }
        func format(_ rows: [Row]) -> [String] {
            rows.map { row in
                let c = cells(row)
                return "  " + (c.day.map { $0 + "  " } ?? "") + c.name + ": " + c.columns.joined(separator: " | ")
            }
        }
        return ["\(kind) per UTC day:"] + format(days) + ["\(kind):"] + format(totals)
    }

    /// The widgets' part of the error line.
    var widgetErrorText: String {
        guard error.widgets > 0 else { return "" }
        return "; widgets: reloads \(error.reloadsApart) apart, provider calls \(error.providerCallsApart) apart, "
            + "stale minutes \(error.staleMinutesApart) apart (stale time at most \(error.staleMillisecondsApart) ms), "
            + "lowest budget \(error.budgetLowApart) apart; \(error.exactWidgets) of \(error.widgets) widgets exact"
    }
}

extension Simulation {
    /// The widget rows this simulation's store kept over `from..<to` (after `run`), read as a
    /// replay reads the state's (`ReplayComparison.widgetCounters`).
    package func widgetCounters(from: Instant, to: Instant) -> [WidgetDayCounter] {
        ReplayComparison.widgetCounters(store, from: from, to: to)
    }
}
