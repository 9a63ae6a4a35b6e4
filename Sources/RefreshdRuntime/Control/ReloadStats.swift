import RefreshdCore

/// What `refreshd stats reloads` shows: per UTC day and widget, reloads requested, performed,
/// deferred and exempt, provider calls, upstream fetches and stale minutes, from the
/// `widget-day` counters the timeline machine commits. The counter developers of budget-burning
/// widgets had to build by hand.
///
/// JSON keys are the simulation report's (`reloads_requested`, `stale_minutes`, ...), so a
/// script reads a live refreshd and a simulated week the same way.
package struct ReloadStats: Codable, Sendable, Equatable {
    /// One widget on one day.
    package struct Row: Codable, Sendable, Equatable {
        package var day: String
        package var kind: String
        package var family: String
        package var requested: Int
        package var performed: Int
        package var deferred: Int
        package var coalesced: Int
        package var exempt: Int
        package var providerCalls: Int
        package var upstreamFetches: Int
        package var failed: Int
        /// The lowest budget left that day; nil for an unlimited budget.
        package var budgetLow: Int?
        package var staleMinutes: Int64
        package var firstStale: Instant?
        package var staleReason: StaleReason?
        /// For the widgets of a timeline template's instances folded into one row (`kind`
        /// `T[*]`): how many widgets it sums.
        package var instances: Int?

        package init(_ c: WidgetDayCounter) {
            day = c.day
            kind = c.kind
            family = c.family.rawValue
            requested = c.requested
            performed = c.performed
            deferred = c.deferred
            coalesced = c.coalesced
            exempt = c.exempt
            providerCalls = c.providerCalls
            upstreamFetches = c.upstreamFetches
            failed = c.failed
            budgetLow = c.budgetLow
            staleMinutes = c.staleMinutes
            firstStale = c.firstStale
            staleReason = c.staleReason
        }

        enum CodingKeys: String, CodingKey {
            case day, kind, family, coalesced, failed
            case requested = "reloads_requested"
            case performed = "reloads_performed"
            case deferred = "reloads_deferred"
            case exempt = "reloads_exempt"
            case providerCalls = "provider_calls"
            case upstreamFetches = "upstream_fetches"
            case budgetLow = "budget_low"
            case staleMinutes = "stale_minutes"
            case firstStale = "first_stale"
            case staleReason = "stale_reason"
            case instances
        }
    }

    /// The first and last UTC day covered, `YYYY-MM-DD`.
    package var from: String
    package var to: String
    /// Newest day first; within a day by kind, then family.
    package var rows: [Row]

    /// The rows of the `days` UTC days ending with `now`'s (days < 1 count as 1; the span
    /// saturates at year 1, so no `days` can overflow the day arithmetic).
    package init(counters: [WidgetDayCounter], days: Int, now: Instant) {
        let last = now.milliseconds / 86_400_000
        let firstDay = Instant.earliest.milliseconds / 86_400_000
        let span = Int64(max(days, 1)) - 1
        let first = last - firstDay < span ? firstDay : last - span
        from = ISO8601.day(Instant.clamped(first * 86_400_000))
        to = ISO8601.day(now)
        rows = counters
            .filter { c in ISO8601.dayNumber(c.day).map { $0 >= first && $0 <= last } ?? false }
            .sorted { a, b in a.day != b.day ? a.day > b.day : a.widget < b.widget }
            .map(Row.init)
    }

    /// The rows with the widgets of each timeline template's instances folded (issue 23): one
    /// row a day per template and family, kind `T[*]`, at its first widget's place, counts
    /// summed, the lowest budget left, stale minutes summed from the earliest stale instant (a
    /// million users' widgets are one row a day, as in `status` and the simulation report).
    /// `templateOfKind`: each instance's widget kind and its template (`RefreshRuntime.instanceWidgetTemplates`).
    package func folding(_ templateOfKind: [String: String]) -> ReloadStats {
        guard !templateOfKind.isEmpty else { return self }
        var folded = self
        folded.rows = []
        var at: [String: Int] = [:]
        for row in rows {
            guard let template = templateOfKind[row.kind] else {
                folded.rows.append(row)
                continue
            }
            let key = "\(row.day) \(template) \(row.family)"
            guard let index = at[key] else {
                at[key] = folded.rows.count
                var first = row
                first.kind = template + "[*]"
                first.instances = 1
                folded.rows.append(first)
                continue
            }
            var sum = folded.rows[index]
            sum.requested += row.requested
            sum.performed += row.performed
            sum.deferred += row.deferred
            sum.coalesced += row.coalesced
            sum.exempt += row.exempt
            sum.providerCalls += row.providerCalls
            sum.upstreamFetches += row.upstreamFetches
            sum.failed += row.failed
            sum.budgetLow = [sum.budgetLow, row.budgetLow].compactMap { $0 }.min()
            sum.staleMinutes += row.staleMinutes
            if let first = row.firstStale, sum.firstStale.map({ first < $0 }) ?? true {
                sum.firstStale = first
                sum.staleReason = row.staleReason
            }
            sum.instances = (sum.instances ?? 1) + 1
            folded.rows[index] = sum
        }
        return folded
    }

    /// The table `refreshd stats reloads` prints.
    package var lines: [String] {
        guard !rows.isEmpty else { return ["No widget reloads recorded from \(from) to \(to)."] }
        var out = ["day         widget                               req  perf  defer  exempt  calls  fetches  stale"]
        for r in rows {
            let widget = "\(r.kind)/\(r.family)" + (r.instances.map { " (\($0))" } ?? "")
            var line = "\(r.day)  \(Self.pad(widget, 35))  \(Self.left(r.requested, 3))  \(Self.left(r.performed, 4))"
            line += "  \(Self.left(r.deferred, 5))  \(Self.left(r.exempt, 6))  \(Self.left(r.providerCalls, 5))"
            line += "  \(Self.left(r.upstreamFetches, 7))  \(r.staleMinutes) min"
            if let first = r.firstStale {
                let time = String(first.description.dropFirst(11).prefix(5))
                line += " (from \(time) UTC, \(r.staleReason?.description ?? "stale"))"
            }
            out.append(line)
        }
        return out
    }

    static func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
    static func left(_ n: Int, _ width: Int) -> String {
        let s = String(n)
        return s.count >= width ? s : String(repeating: " ", count: width - s.count) + s
    }
}
