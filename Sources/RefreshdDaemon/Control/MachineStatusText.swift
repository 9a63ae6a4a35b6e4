import RefreshdCore
import RefreshdRuntime

/// The widget and activity parts of `refreshd status`, as lines of text: per widget the entry
/// shown now and since when, the next entry switch, the policy, the next reload and why, the
/// budget used and left in the window, stale since when and why; per activity its state and
/// since when, progress, stale date, dismissal time and any held update. Pure (the instant is
/// given), shared by the live and the offline status.
package enum MachineStatusText {
    /// The widgets of a timeline template's instances are folded, one line a template
    /// (`InstanceWidgetFold`); `status --json` keeps every widget.
    package static func widgets(_ snapshot: TimelineSnapshot, now: Instant) -> [String] {
        var lines = ["Widgets (\(snapshot.widgets.count)):"]
        let (rows, folds) = InstanceWidgetFold.fold(snapshot.widgets)
        for w in rows {
            lines.append("  \(w.kind)/\(w.family.rawValue)  (job \(w.job))")
            if let shown = w.shown {
                let since = w.shownSince.map { " since \($0) (\(ago($0, now)))" } ?? ""
                lines.append("    shown: \(summary(shown.content)) dated \(shown.date)\(since)")
            } else {
                lines.append("    shown: nothing yet (no timeline)")
            }
            var timeline = "    timeline: \(w.entries) entr\(w.entries == 1 ? "y" : "ies"), policy \(w.policy.map(policy) ?? "none")"
            if let next = w.nextEntrySwitch { timeline += "; next entry \(next) (\(until(next, now)))" }
            lines.append(timeline)
            let reload: String
            switch w.nextReloadWhy {
            case .policy: reload = w.nextReload.map { "at \($0) (\(until($0, now))), by the policy" } ?? "by the policy"
            case .retry: reload = w.nextReload.map { "at \($0) (\(until($0, now))), retrying after a failed reload" } ?? "retry"
            case .deferred:
                reload = w.nextReload.map { "deferred for the budget until \($0) (\(until($0, now)))" }
                    ?? "deferred: the budget is 0, nothing may reload"
            case .spaced:
                reload = w.nextReload.map { "spaced: the minimum interval since the last reload ends at \($0) (\(until($0, now)))" }
                    ?? "spaced by the minimum interval since the last reload"
            case .lowPower: reload = "held while Low Power Mode is on"
            case .afterProviderRun: reload = "queued behind the provider call in flight"
            case .onRequest: reload = "only when asked (explicit or exempt reload)"
            }
            lines.append("    next reload: \(reload)")
            if let since = w.providerRunningSince { lines.append("    provider running since \(since) (\(ago(since, now)))") }
            if let limit = w.budgetLimit, let used = w.budgetUsed {
                lines.append("    budget: \(used) used, \(w.budgetLeft ?? max(limit - used, 0)) left of \(limit) in \(windowText(w.windowSeconds))")
            } else {
                lines.append("    budget: unlimited")
            }
            if let since = w.staleSince {
                lines.append("    STALE since \(since) (\(ago(since, now))): \(w.staleReason?.description ?? "stale")")
            } else if let last = w.lastSuccess {
                lines.append("    fresh: last reload \(last) (\(ago(last, now)))")
            }
            if let failure = w.lastFailure { lines.append("    last failure: \(failure)") }
        }
        for fold in folds { lines.append("  " + fold.line) }
        return lines
    }

    /// When an activity leaves the screen: once ended, the instant its dismissal policy set;
    /// before that only the 12 h limit is known (an end may come sooner), so it says "at the latest".
    package static func dismissal(_ at: Instant, state: ActivityState) -> String {
        state == .ended || state == .dismissed ? "dismissed at \(at)" : "on screen until \(at) at the latest"
    }

    package static func activities(_ snapshot: ActivitySnapshot, now: Instant) -> [String] {
        var lines = ["Activities (\(snapshot.activities.count)):"]
        for a in snapshot.activities {
            var head = "  \(a.id)  \(a.type)  \(a.state.rawValue) since \(a.since) (\(ago(a.since, now)))"
            if let p = a.progressPercent { head += "  progress \(percent(p))" }
            lines.append(head)
            var details: [String] = []
            if let stale = a.staleDate { details.append("stale date \(stale)") }
            if let ends = a.endsBy { details.append("ended by the system at \(ends)") }
            if let dismissal = a.dismissal { details.append(Self.dismissal(dismissal, state: a.state)) }
            details.append("high-priority updates \(a.budgetUsed)/\(a.budget) this hour")
            lines.append("    " + details.joined(separator: ", "))
            if let held = a.held {
                lines.append("    throttled: an update is held until \(held.release) (\(held.coalesced) coalesced)")
            }
            if a.updatesIgnored > 0 { lines.append("    \(a.updatesIgnored) late update\(a.updatesIgnored == 1 ? "" : "s") ignored") }
        }
        if let last = snapshot.recentlyDismissed.last {
            lines.append("  (\(snapshot.recentlyDismissed.count) recently dismissed; latest \(last.id))")
        }
        return lines
    }

    /// `42%` or `42.5%`.
    package static func percent(_ p: Double) -> String {
        let rounded = (p * 10).rounded() / 10
        return rounded == rounded.rounded() ? "\(Int(rounded))%" : "\(rounded)%"
    }

    static func policy(_ p: TimelinePolicy) -> String {
        switch p {
        case .atEnd: "atEnd"
        case .never: "never"
        case let .after(date): "after \(date)"
        }
    }

    /// An entry's content, shortened for one line.
    static func summary(_ content: String) -> String {
        content.count > 60 ? String(content.prefix(57)) + "..." : content
    }

    static func windowText(_ seconds: Int64) -> String {
        seconds % 3600 == 0 ? "\(seconds / 3600) h" : Duration.seconds(seconds).compactText
    }

    static func ago(_ t: Instant, _ now: Instant) -> String {
        t > now ? "in \(WatchView.countdown(t.duration(since: now)))" : "\(WatchView.countdown(now.duration(since: t))) ago"
    }

    static func until(_ t: Instant, _ now: Instant) -> String {
        t > now ? "in \(WatchView.countdown(t.duration(since: now)))" : "due"
    }
}
