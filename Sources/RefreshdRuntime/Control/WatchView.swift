import RefreshdCore

/// `refreshd watch`'s screen, as lines: the next due requests with countdowns, the runs in
/// flight with their elapsed time against their allowance as bars, each widget's current entry
/// and budget gauge, the live activities with their state and progress, and the latest events.
/// Pure (the instant is given), so the screen is a unit test and the terminal code only draws.
public enum WatchView {
    public static func render(snapshot: SchedulerSnapshot, events: [RuntimeObservation], now: Instant,
                              timelines: TimelineSnapshot? = nil, activities: ActivitySnapshot? = nil,
                              width: Int = 80, maxPending: Int = 8, maxEvents: Int = 8) -> [String] {
        var lines: [String] = []
        let state = snapshot.isStopping ? "stopping" : "running"
        lines.append("refreshd \(state) at \(now)  \(snapshot.pending.count) pending, \(snapshot.runs.count) in flight")
        lines.append("")
        lines.append("Next due")
        if snapshot.pending.isEmpty { lines.append("  (nothing pending)") }
        for p in snapshot.pending.prefix(maxPending) {
            let when = p.earliest > now ? "in \(countdown(p.earliest.duration(since: now)))" : "due"
            let place = p.place.map { $0 == .queued ? "" : "  \($0.rawValue)" } ?? ""
            lines.append("  \(pad(when, 12)) \(p.identifier)  \(p.kind.rawValue)\(place)")
        }
        if snapshot.pending.count > maxPending { lines.append("  ... and \(snapshot.pending.count - maxPending) more") }
        lines.append("")
        lines.append("Running")
        if snapshot.runs.isEmpty { lines.append("  (nothing running)") }
        for run in snapshot.runs {
            let elapsed = now.duration(since: run.started)
            let allowance = run.deadline.duration(since: run.started)
            let phase = switch run.phase {
            case .running: ""
            case .expiring: "  expiring"
            case .killed: "  killed"
            }
            lines.append("  \(run.identifier) run \(run.runID)  \(bar(elapsed, of: allowance, width: 20)) \(countdown(elapsed)) / \(countdown(allowance))\(phase)")
        }
        if let timelines, !timelines.widgets.isEmpty {
            lines.append("")
            lines.append("Widgets")
            for w in timelines.widgets { lines.append("  " + widgetLine(w, now: now)) }
        }
        if let activities, !activities.activities.isEmpty {
            lines.append("")
            lines.append("Activities")
            for a in activities.activities { lines.append("  " + activityLine(a)) }
        }
        lines.append("")
        lines.append("Latest events")
        if events.isEmpty { lines.append("  (none yet)") }
        for event in events.suffix(maxEvents) { lines.append("  " + eventLine(event)) }
        return lines.map { $0.count > width ? String($0.prefix(width)) : $0 }
    }

    /// `wallpaper/systemSmall  budget [####......] 2/5  shown {"asset":"a"}`, and `STALE (why)`.
    public static func widgetLine(_ w: TimelineSnapshot.Widget, now: Instant) -> String {
        var text = "\(w.kind)/\(w.family.rawValue)  budget "
        if let limit = w.budgetLimit, let used = w.budgetUsed {
            text += "\(gauge(used, of: limit, width: 10)) \(used)/\(limit)"
        } else {
            text += "unlimited"
        }
        if w.providerRunningSince != nil { text += "  reloading" }
        if w.nextReloadWhy == .deferred, let release = w.nextReload { text += "  deferred \(countdown(release.duration(since: now)))" }
        if let stale = w.staleReason { text += "  STALE (\(stale))" }
        text += "  shown " + (w.shown.map { $0.content.count > 40 ? String($0.content.prefix(37)) + "..." : $0.content } ?? "nothing")
        return text
    }

    /// `pack  Download  active  [#####.....] 50%`, and `held` when an update is throttled.
    public static func activityLine(_ a: ActivitySnapshot.Entry) -> String {
        var text = "\(a.id)  \(a.type)  \(a.state.rawValue)"
        if let p = a.progressPercent {
            text += "  \(gauge(Int(p.rounded()), of: 100, width: 10)) \(MachineStatusText.percent(p))"
        }
        if a.held != nil { text += "  held (throttled)" }
        return text
    }

    /// `[###.......]`: `value` of `total`, capped at full.
    static func gauge(_ value: Int, of total: Int, width: Int) -> String {
        let filled = total <= 0 ? width : min(width, max(0, value * width / total))
        return "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "]"
    }

    /// One event as a plain line: its UTC time of day and message.
    public static func eventLine(_ event: RuntimeObservation) -> String {
        let text = event.time.iso8601
        let time = text.count >= 23 ? String(text.dropFirst(11).prefix(12)) : text
        return "\(time) \(event.message)"
    }

    /// `[#######.............]`: the elapsed share of the allowance, capped at full.
    public static func bar(_ elapsed: Duration, of total: Duration, width: Int) -> String {
        let t = max(1, total.wholeMilliseconds)
        let filled = min(width, max(0, Int(elapsed.wholeMilliseconds * Int64(width) / t)))
        return "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "]"
    }

    /// Whole seconds (or milliseconds under a second), as `1h2m3s`.
    public static func countdown(_ d: Duration) -> String {
        let ms = d.wholeMilliseconds
        if ms < 1000 { return "\(max(0, ms))ms" }
        return Duration.milliseconds(ms / 1000 * 1000).compactText
    }

    static func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
}
