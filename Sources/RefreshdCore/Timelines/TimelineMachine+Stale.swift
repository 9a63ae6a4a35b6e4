extension TimelineMachine {
    /// Opens a stale span at `start` (which may be in the past: a reload that fell due while
    /// refreshd was down). A widget already stale keeps its first span and reason.
    mutating func startStale(_ id: WidgetID, _ reason: StaleReason, at start: Instant, detail: String? = nil,
                             into effects: inout [TimelineEffect]) {
        guard var w = widgets[id], w.stale == nil else { return }
        w.stale = StaleSpan(start: start, reason: reason, detail: detail)
        w.staleAccountedUntil = start
        widgets[id] = w
        changed(id)
        effects.append(.log(.staleStarted(id, since: start, reason)))
        // The day of the start gets its first stale instant now, even before any time accrues
        // (`withRow` keeps a clock stepped back from replacing a past day's saved row).
        let day = day(of: start)
        withRow(id, day: day, at: start) { row in
            if row.firstStale == nil {
                row.firstStale = start
                row.staleReason = reason
            }
        }
    }

    /// Closes the open stale span at `now` (a reload succeeded).
    mutating func endStale(_ id: WidgetID, at now: Instant, into effects: inout [TimelineEffect]) {
        guard widgets[id]?.stale != nil else { return }
        accountStale(id, until: now)
        guard var w = widgets[id], var span = w.stale else { return }
        span.end = max(now, span.start)
        w.recentSpans.append(span)
        if w.recentSpans.count > WidgetRecord.recentSpanLimit {
            w.recentSpans.removeFirst(w.recentSpans.count - WidgetRecord.recentSpanLimit)
        }
        w.stale = nil
        w.staleAccountedUntil = nil
        widgets[id] = w
        changed(id)
        effects.append(.log(.staleEnded(id, since: span.start, lasted: now.duration(since: span.start))))
    }

    /// Puts the open span's time up to `until` into the day rows, split at the counter days' midnights.
    mutating func accountStale(_ id: WidgetID, until: Instant) {
        guard let w = widgets[id], let span = w.stale else { return }
        var from = max(w.staleAccountedUntil ?? span.start, span.start)
        guard until > from else { return }
        while from < until {
            let day = day(of: from)
            let midnight = startOfDay(day + 1)
            let to = min(until, midnight)
            let start = from
            withRow(id, day: day, at: from) { row in
                row.staleMilliseconds += to.milliseconds - start.milliseconds
                if row.firstStale == nil {
                    row.firstStale = start
                    row.staleReason = span.reason
                }
            }
            from = to
        }
        widgets[id]?.staleAccountedUntil = until
        changed(id)
    }
}
