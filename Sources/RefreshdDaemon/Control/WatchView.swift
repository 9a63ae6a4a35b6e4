import RefreshdCore
import RefreshdRuntime

/// `refreshd watch`'s screen, as lines: the next due requests with countdowns, the runs in
/// flight with their elapsed time against their allowance as bars, each widget's current entry
/// and budget gauge, the live activities with their state and progress, and the latest events.
/// Pure (the instant is given), so the screen is a unit test and the terminal code only draws.
package enum WatchView {
    /// The screen. Instances of a template are folded into their template (issue 23): one
    /// "next due" row a template (how many instances are pending, and the next), one running row
    /// when several of its instances run, and a "Templates" section with counts and the most
    /// failing instances (`FailingInstances`). `instance` (`template[key]`) shows that one
    /// instance instead: its requests, runs, failure streak and events, nothing folded.
    /// `eventsFollow`: the screen is printed once, on no terminal, and the events follow it a
    /// line each, the latest ones first: it ends with their heading, not "(none yet)".
    package static func render(snapshot: SchedulerSnapshot, events: [RuntimeObservation], now: Instant,
                              timelines: TimelineSnapshot? = nil, activities: ActivitySnapshot? = nil,
                              width: Int = 80, maxPending: Int = 8, maxEvents: Int = 8, instance: String? = nil,
                              eventsFollow: Bool = false) -> [String] {
        var lines: [String] = []
        let state = snapshot.isStopping ? "stopping" : "running"
        lines.append("refreshd \(state) at \(now)  \(snapshot.pending.count) pending, \(snapshot.runs.count) in flight")
        if let instance {
            let streak = snapshot.failureStreaks.first { $0.identifier == instance }?.count ?? 0
            let known = InstanceName.split(instance).flatMap { split in snapshot.templates?.first { $0.identifier == split.template } } != nil
            lines.append("instance \(instance)" + (known ? "" : " (no such template is declared)")
                + (streak > 0 ? "  failing: \(streak) consecutive failed attempt\(streak == 1 ? "" : "s")" : ""))
        }
        lines.append("")
        lines.append("Next due")
        let pending = instance.map { id in snapshot.pending.filter { $0.identifier == id } } ?? snapshot.pending
        let (pendingRows, pendingOf) = nextDue(pending, now: now, folding: instance == nil, maxPending: maxPending)
        lines += pendingRows
        lines.append("")
        lines.append("Running")
        let runs = instance.map { id in snapshot.runs.filter { $0.identifier == id } } ?? snapshot.runs
        let (runRows, runningOf) = running(runs, now: now, folding: instance == nil)
        lines += runRows
        if instance == nil, let templates = snapshot.templates, !templates.isEmpty {
            lines.append("")
            lines.append("Templates")
            lines += templateLines(snapshot, templates: templates, pendingOf: pendingOf, runningOf: runningOf.mapValues(\.count))
        }
        if let timelines, !timelines.widgets.isEmpty {
            // Instances' widgets folded a template; `--instance` shows that instance's, unfolded.
            let (rows, folds) = instance.map { id in (timelines.widgets.filter { $0.job == id }, []) }
                ?? InstanceWidgetFold.fold(timelines.widgets)
            if !rows.isEmpty || !folds.isEmpty {
                lines.append("")
                lines.append("Widgets")
                for w in rows { lines.append("  " + widgetLine(w, now: now)) }
                for fold in folds { lines.append("  " + fold.line) }
            }
        }
        if let activities, !activities.activities.isEmpty {
            let shown = instance.map { id in activities.activities.filter { $0.owner == id } } ?? activities.activities
            if !shown.isEmpty {
                lines.append("")
                lines.append("Activities")
                for a in shown { lines.append("  " + activityLine(a)) }
            }
        }
        lines.append("")
        if eventsFollow {
            lines.append("Events (the latest first, then each as it happens)")
            return lines.map { $0.count > width ? String($0.prefix(width)) : $0 }
        }
        lines.append("Latest events")
        let latest = instance.map { id in events.filter { $0.identifier == id } } ?? events
        if latest.isEmpty { lines.append("  (none yet)") }
        for event in latest.suffix(maxEvents) { lines.append("  " + eventLine(event)) }
        return lines.map { $0.count > width ? String($0.prefix(width)) : $0 }
    }

    /// "Next due"'s rows: each request with its countdown, or one a template of which several
    /// instances are pending (with `folding`); at most `maxPending`, then how many more.
    /// Also how many are pending of each template, for the "Templates" section.
    static func nextDue(_ pending: [SchedulerSnapshot.Pending], now: Instant, folding: Bool,
                        maxPending: Int) -> (lines: [String], pendingOf: [String: Int]) {
        var lines: [String] = []
        if pending.isEmpty { lines.append("  (nothing pending)") }
        var pendingRows: [String] = []
        // Pending instances a template, counted once (a million instances: one pass).
        var pendingOf: [String: Int] = [:]
        if folding {
            for p in pending { if let split = InstanceName.split(p.identifier) { pendingOf[split.template, default: 0] += 1 } }
        }
        var folded: Set<String> = []
        for p in pending {
            let when = p.earliest > now ? "in \(countdown(p.earliest.duration(since: now)))" : "due"
            if folding, let split = InstanceName.split(p.identifier), let count = pendingOf[split.template], count > 1 {
                guard folded.insert(split.template).inserted else { continue }
                pendingRows.append("  \(pad(when, 12)) \(split.template)[*]  \(count) instances pending, next \(split.key)")
            } else {
                let place = p.place.map { $0 == .queued ? "" : "  \($0.rawValue)" } ?? ""
                pendingRows.append("  \(pad(when, 12)) \(p.identifier)  \(p.kind.rawValue)\(place)")
            }
        }
        lines += pendingRows.prefix(maxPending)
        if pendingRows.count > maxPending { lines.append("  ... and \(pendingRows.count - maxPending) more") }
        return (lines, pendingOf)
    }

    /// "Running"'s rows: each run's elapsed time against its allowance as a bar, or one a
    /// template of which several instances run (with `folding`), naming the longest running.
    /// Also the runs of each template, for the "Templates" section.
    static func running(_ runs: [SchedulerSnapshot.Run], now: Instant,
                        folding: Bool) -> (lines: [String], runningOf: [String: [SchedulerSnapshot.Run]]) {
        var lines: [String] = []
        if runs.isEmpty { lines.append("  (nothing running)") }
        var runningOf: [String: [SchedulerSnapshot.Run]] = [:]
        if folding {
            for run in runs { if let split = InstanceName.split(run.identifier) { runningOf[split.template, default: []].append(run) } }
        }
        var foldedRuns: Set<String> = []
        for run in runs {
            if let split = InstanceName.split(run.identifier), let several = runningOf[split.template], several.count > 1 {
                guard foldedRuns.insert(split.template).inserted else { continue }
                let oldest = several.min { $0.started < $1.started }!
                lines.append("  \(split.template)[*]  \(several.count) instances running, the longest \(split.template)[\(InstanceName.split(oldest.identifier)?.key ?? "")] "
                    + "for \(countdown(now.duration(since: oldest.started)))")
                continue
            }
            let elapsed = now.duration(since: run.started)
            let allowance = run.deadline.duration(since: run.started)
            let phase = switch run.phase {
            case .running: ""
            case .expiring: "  expiring"
            case .killed: "  killed"
            }
            lines.append("  \(run.identifier) run \(run.runID)  \(bar(elapsed, of: allowance, width: 20)) \(countdown(elapsed)) / \(countdown(allowance))\(phase)")
        }
        return (lines, runningOf)
    }

    /// Each template: `t.feed  1000 instances  998 pending  2 running  25 failing`, and when
    /// some fail, `  most failing: u24 (25), u23 (24), ...` (at most `FailingInstances.top`).
    static func templateLines(_ snapshot: SchedulerSnapshot, templates: [SchedulerSnapshot.Template],
                              pendingOf: [String: Int], runningOf: [String: Int]) -> [String] {
        var failingOf: [String: [(key: String, count: Int)]] = [:]
        for streak in snapshot.failureStreaks {
            if let split = InstanceName.split(streak.identifier) { failingOf[split.template, default: []].append((split.key, streak.count)) }
        }
        var lines: [String] = []
        for t in templates {
            let failing = failingOf[t.identifier] ?? []
            lines.append("  \(t.identifier)  \(t.instances) instance\(t.instances == 1 ? "" : "s")  \(pendingOf[t.identifier] ?? 0) pending  "
                + "\(runningOf[t.identifier] ?? 0) running  \(failing.count) failing")
            if !failing.isEmpty {
                lines.append("    most failing: " + FailingInstances.most(failing).map { "\($0.key) (\($0.count))" }.joined(separator: ", "))
            }
        }
        return lines
    }

    /// `wallpaper/systemSmall  budget [####......] 2/5  shown {"asset":"a"}`, and `STALE (why)`.
    package static func widgetLine(_ w: TimelineSnapshot.Widget, now: Instant) -> String {
        var text = "\(w.kind)/\(w.family.rawValue)  budget "
        if let limit = w.budgetLimit, let used = w.budgetUsed {
            text += "\(gauge(used, of: limit, width: 10)) \(used)/\(limit)"
        } else {
            text += "unlimited"
        }
        if w.providerRunningSince != nil { text += "  reloading" }
        if w.nextReloadWhy == .deferred, let release = w.nextReload { text += "  deferred \(countdown(release.duration(since: now)))" }
        if w.nextReloadWhy == .spaced, let release = w.nextReload { text += "  spaced \(countdown(release.duration(since: now)))" }
        if let stale = w.staleReason { text += "  STALE (\(stale))" }
        text += "  shown " + (w.shown.map { $0.content.count > 40 ? String($0.content.prefix(37)) + "..." : $0.content } ?? "nothing")
        return text
    }

    /// `pack  Download  active  [#####.....] 50%`, and `held` when an update is throttled.
    package static func activityLine(_ a: ActivitySnapshot.Entry) -> String {
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
    package static func eventLine(_ event: RuntimeObservation) -> String {
        let text = event.time.iso8601
        let time = text.count >= 23 ? String(text.dropFirst(11).prefix(12)) : text
        return "\(time) \(event.message)"
    }

    /// `[#######.............]`: the elapsed share of the allowance, capped at full.
    package static func bar(_ elapsed: Duration, of total: Duration, width: Int) -> String {
        let t = max(1, total.wholeMilliseconds)
        let filled = min(width, max(0, Int(elapsed.wholeMilliseconds * Int64(width) / t)))
        return "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "]"
    }

    /// Whole seconds (or milliseconds under a second), as `1h2m3s`.
    package static func countdown(_ d: Duration) -> String {
        let ms = d.wholeMilliseconds
        if ms < 1000 { return "\(max(0, ms))ms" }
        return Duration.milliseconds(ms / 1000 * 1000).compactText
    }

    static func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
}
