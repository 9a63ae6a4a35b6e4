import RefreshdCore

/// `refreshd watch`'s screen, as lines: the next due requests with countdowns, the runs in
/// flight with their elapsed time against their allowance as bars, and the latest events.
/// Pure (the instant is given), so the screen is a unit test and the terminal code only draws.
public enum WatchView {
    public static func render(snapshot: SchedulerSnapshot, events: [RuntimeObservation], now: Instant,
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
        lines.append("")
        lines.append("Latest events")
        if events.isEmpty { lines.append("  (none yet)") }
        for event in events.suffix(maxEvents) { lines.append("  " + eventLine(event)) }
        return lines.map { $0.count > width ? String($0.prefix(width)) : $0 }
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
