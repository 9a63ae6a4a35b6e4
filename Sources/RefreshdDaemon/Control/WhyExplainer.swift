import RefreshdCore
import RefreshdRuntime

/// Turns `WhyFacts` into `refreshd why`'s paragraph: why a job is not running now and when it
/// will, naming what holds it (a run in flight, the concurrency cap, conditions, an admission
/// hold, backoff after N failures, the missed-slot policy, refreshd down at the slot) and how its
/// last runs ended; for a timeline job, what each family's widget waits for; for a live
/// activity, where it stands; for an unknown identifier, what it may have meant. Pure: the same
/// facts give the same words.
package enum WhyExplainer {
    package static func explain(_ f: WhyFacts) -> WhyReport {
        var reasons: [WhyReport.Reason] = []
        let parts: [String]
        let subject: WhyReport.Subject
        switch f.subject {
        case .unknown:
            subject = .unknown
            parts = explainUnknown(f, &reasons)
        case let .timeline(kind, families):
            subject = .timeline
            parts = explainTimeline(kind: kind, families: families, f, &reasons)
        case .activity:
            subject = .activity
            parts = explainActivity(f, &reasons)
        case .provider:
            subject = .provider
            parts = explainJob(f, &reasons)
        case .job:
            subject = .job
            parts = explainJob(f, &reasons)
        }
        // Each reason once, in the order first given (a timeline job's families may repeat one).
        let unique = reasons.reduce(into: [WhyReport.Reason]()) { if !$0.contains($1) { $0.append($1) } }
        return WhyReport(identifier: f.identifier, subject: subject, live: f.live, reasons: unique,
                         paragraph: parts.joined(separator: " "))
    }

    /// `(from the state files: refreshd is not running)`, or nothing when live.
    static func fromFiles(_ f: WhyFacts) -> String {
        f.live ? "" : " (from the state files: refreshd is not running)"
    }

    /// Not a job, timeline family or activity: says so, and what it may have meant.
    static func explainUnknown(_ f: WhyFacts, _ reasons: inout [WhyReport.Reason]) -> [String] {
        reasons.append(.notDeclared)
        var text = "\(f.identifier) is not a job refreshd knows\(fromFiles(f)): no loaded job file declares it, "
            + "and it is not a timeline job's family (JOB#FAMILY) or a live activity."
        if !f.suggestions.isEmpty {
            text += " Did you mean \(f.suggestions.joined(separator: ", or "))?"
        }
        return [text]
    }

    /// A job or one family's provider: what holds it, its missed slots, its last runs, its activities.
    static func explainJob(_ f: WhyFacts, _ reasons: inout [WhyReport.Reason]) -> [String] {
        var parts: [String] = []
        let id = f.identifier
        let source = fromFiles(f)

        if let pause = f.paused {
            reasons.append(.paused)
            var text = "\(id) is paused since \(pause.since) (\(human(f.now.duration(since: pause.since))) ago)"
            if pause.identifier != id { text += " with its template \(pause.identifier)" }
            text += ": it keeps its pending request and launches nothing until refreshd ctl resume \(pause.identifier)"
            if f.definition?.schedule != nil, let policy = f.definition?.missed {
                text += "; slots it misses meanwhile then follow missed: \(policy.rawValue), as after downtime"
            }
            parts.append(text + ".")
        }
        if f.isTemplate {
            let count = f.templateInstances.map { "it has \($0) instance\($0 == 1 ? "" : "s")" } ?? "its instances are listed by refreshd ctl instance list \(id)"
            return parts + ["\(id) is a template: it never runs itself, its instances do (\(count)); "
                + "ask about one as refreshd why '\(id)[KEY]'."]
        }
        if let template = f.instanceOf, let key = InstanceName.split(id)?.key {
            parts.append("\(id) is the instance \(key) of template \(template).")
        }
        if f.knownUndeclared && f.definition == nil && f.pending == nil {
            reasons.append(.notDeclared)
            parts.append("\(id) is not a job refreshd knows\(source): no loaded job file declares it.")
        }
        if let run = f.running {
            reasons.append(.running)
            let elapsed = f.now.duration(since: run.started)
            let allowance = run.deadline.duration(since: run.started)
            var text = "\(id) is running now: run \(run.runID) (attempt \(run.attempt)) started \(human(elapsed)) ago"
            switch run.phase {
            case .running: text += " with \(human(allowance)) allowed (expiration at \(run.deadline))"
            case let .expiring(killAt): text += "; its expiration was delivered and it is killed at \(killAt) if still running"
            case .killed: text += "; it was killed and refreshd waits for it to end"
            }
            parts.append(text + ".")
        }
        if let w = f.widget {
            parts.append(contentsOf: explainProvider(w, f, &reasons))
        } else if case let .provider(_, kind, family) = f.subject {
            reasons.append(.widgetProvider)
            parts.append("\(id) provides the timelines of widget \(kind)/\(family): it runs only when that widget reloads. "
                + "Nothing is saved for that widget yet\(source): refreshd asks its provider when it starts.")
        } else if let p = f.pending {
            parts.append(contentsOf: explainPending(p, f, &reasons))
        } else if f.definition != nil || !f.knownUndeclared {
            if f.running == nil || f.definition?.resubmit == ResubmitPolicy.none {
                reasons.append(.notPending)
                var text = "\(id) has no pending request\(source), so nothing will launch it"
                if let retry = f.definition?.retry, f.failureStreak > 0, retry.delay(forAttempt: f.failureStreak) == nil {
                    reasons.append(.retriesExhausted)
                    text += ": its retries are exhausted after \(f.failureStreak) failures in a row (limit \(retry.limit))"
                }
                parts.append(text + " until it is submitted again (refreshd ctl submit \(id)).")
            }
        }
        if let missed = f.missedByDay.first(where: { $0.count > 0 }) {
            reasons.append(.missedSlots)
            let policy = f.definition?.missed
            var text = "\(missed.count) calendar slot\(missed.count == 1 ? " was" : "s were") missed on \(missed.day) (refreshd down, asleep or the clock stepped)"
            switch policy {
            case .once?: text += "; missed: once ran them as one run"
            case .skip?: text += "; missed: skip dropped them and waited for the next slot"
            case .all?: text += "; missed: all replays each, oldest first"
            case nil: break
            }
            parts.append(text + ".")
        }
        for event in f.recentEvents.suffix(3) where event.kind == .missed || event.kind == .retriesExhausted {
            parts.append("Lately: \(event.message).")
        }
        if f.recentRuns.isEmpty && f.failureStreak > 0 {
            parts.append("Its runs are no longer in the history; the last \(f.failureStreak) failed in a row.")
        } else if f.recentRuns.isEmpty {
            parts.append("It has not run yet.")
        } else {
            let runs = f.recentRuns.prefix(3).map { r -> String in
                var t = "run \(r.runID) \(r.outcome)"
                if r.outcome != "running" { t += " \(human(f.now.duration(since: r.started))) ago" }
                if let status = r.exitStatus, r.outcome != "success" { t += " (exit \(status))" }
                if let signal = r.signal { t += " (signal \(signal))" }
                return t
            }
            parts.append("Last runs: " + runs.joined(separator: ", ") + ".")
        }
        parts.append(contentsOf: ownedActivities(f, &reasons))
        return parts
    }

    /// `design.example.wallpaper.widget is a timeline job ...`, then each family's widget as
    /// its provider's answer would say it, the providers' last runs and the job's activities.
    static func explainTimeline(kind: String, families: [String], _ f: WhyFacts,
                                _ reasons: inout [WhyReport.Reason]) -> [String] {
        reasons.append(.timelineJob)
        let id = f.identifier
        let providers = families.map { WidgetSpec.providerIdentifier(job: id, family: $0) }
        let instance = f.instanceOf.flatMap { template in
            InstanceName.split(id).map { "\(id) is the instance \($0.key) of timeline template \(template), a widget of its own. " }
        } ?? ""
        var parts = [instance + "\(id) is a timeline job\(fromFiles(f)): it provides the timelines of widget \(kind) "
            + "(\(families.joined(separator: ", "))) and never runs on a schedule of its own; each family's provider "
            + "(\(providers.joined(separator: ", "))) runs when that family's widget reloads."]
        for family in families {
            guard let w = f.widgets.first(where: { $0.family.rawValue == family }) else {
                parts.append("\(family): nothing is saved for it yet; refreshd asks its provider when it starts.")
                continue
            }
            // The provider's own answer without its first sentence (said once above).
            var provider = f
            provider.identifier = WidgetSpec.providerIdentifier(job: id, family: family)
            var said = explainProvider(w, provider, &reasons).dropFirst()
            if said.isEmpty { said = ["Nothing is due."] }
            parts.append("\(family): " + said.joined(separator: " "))
        }
        if f.recentRuns.isEmpty {
            parts.append("No provider has run yet.")
        } else {
            let runs = f.recentRuns.prefix(3).map { r -> String in
                var t = "\(r.identifier) run \(r.runID) \(r.outcome)"
                if r.outcome != "running" { t += " \(human(f.now.duration(since: r.started))) ago" }
                return t
            }
            parts.append("Last provider runs: " + runs.joined(separator: ", ") + ".")
        }
        parts.append(contentsOf: ownedActivities(f, &reasons))
        return parts
    }

    /// A live activity by its id: its state, who started it, its deadlines; or how it was dismissed.
    static func explainActivity(_ f: WhyFacts, _ reasons: inout [WhyReport.Reason]) -> [String] {
        reasons.append(.activity)
        let id = f.identifier
        let by = { (owner: String?) in
            owner.flatMap { $0 == ActivityRequest.operatorOwner ? nil : "started by job \($0)" } ?? "started with refreshd ctl activity start"
        }
        if let a = f.activities.first(where: { $0.id == id }) {
            var parts = ["\(id) is a live activity\(fromFiles(f)) of type \(a.type), \(by(a.owner)) at \(a.start) "
                + "(namespace \(a.namespace)); it is \(a.state.rawValue) since \(a.since) (\(human(f.now.duration(since: a.since))) ago)."]
            parts.append(activityDetails(a))
            return parts
        }
        if let d = f.dismissed.last(where: { $0.id == id }) {
            var text = "\(id) was a live activity\(fromFiles(f)) of type \(d.typeName), \(by(d.owner)) at \(d.start)"
            if let ended = d.ended { text += ", ended at \(ended)\(d.endCause.map { " (\($0.rawValue))" } ?? "")" }
            text += ", and dismissed at \(d.dismissed) (\(d.cause.rawValue)); it is no longer shown and takes no updates"
            if let progress = d.progressPercent { text += "; its final progress was \(percent(progress))" }
            return [text + "."]
        }
        return ["\(id) is a live activity\(fromFiles(f)), but nothing more is known of it."]
    }

    /// What holds or ends a live activity: progress, stale date, the 8 h end, the dismissal, a held update.
    static func activityDetails(_ a: ActivitySnapshot.Entry) -> String {
        var facts: [String] = []
        if let progress = a.progressPercent { facts.append("progress \(percent(progress))") }
        if let stale = a.staleDate { facts.append("stale date \(stale)") }
        if let ends = a.endsBy { facts.append("the system ends it by \(ends) (8 h after its start)") }
        if let dismissal = a.dismissal {
            facts.append(a.state == .ended ? "it is dismissed at \(dismissal)"
                                           : "it leaves the screen by \(dismissal) at the latest (12 h)")
        }
        facts.append("\(a.updatesApplied) update\(a.updatesApplied == 1 ? "" : "s") applied, \(a.updatesIgnored) ignored")
        facts.append("\(a.budgetUsed) of \(a.budget) high-priority updates used this hour")
        if let held = a.held { facts.append("an update is held until \(held.release) (over the hourly budget)") }
        return "Now: " + facts.joined(separator: "; ") + "."
    }

    /// The live activities a job owns, in one sentence (nothing when it owns none).
    static func ownedActivities(_ f: WhyFacts, _ reasons: inout [WhyReport.Reason]) -> [String] {
        let owned = f.activities.filter { $0.owner == f.identifier }
        guard !owned.isEmpty else { return [] }
        reasons.append(.activity)
        let list = owned.map { a -> String in
            var t = "\(a.id) (\(a.type), \(a.state.rawValue) since \(a.since)"
            if let progress = a.progressPercent { t += ", \(percent(progress))" }
            if a.state == .ended, let dismissal = a.dismissal { t += ", dismissed at \(dismissal)" }
            return t + ")"
        }
        return ["Its live activit\(owned.count == 1 ? "y" : "ies"): \(list.joined(separator: ", ")); "
            + "refreshd why \(owned[0].id) tells more."]
    }

    /// `40%`, `12.5%`.
    static func percent(_ value: Double) -> String {
        value.rounded() == value ? "\(Int(value))%" : "\((value * 10).rounded() / 10)%"
    }

    static func explainPending(_ p: SchedulerSnapshot.Pending, _ f: WhyFacts,
                               _ reasons: inout [WhyReport.Reason]) -> [String] {
        let id = f.identifier
        var parts: [String] = []
        let due = p.earliest <= f.now
        var text = "\(id) has a pending \(p.kind.rawValue) request (\(p.origin.rawValue)) with earliest begin \(p.earliest)"
        text += due ? ", \(human(f.now.duration(since: p.earliest))) ago" : ", in \(human(p.earliest.duration(since: f.now)))"
        parts.append(text + ".")
        if p.origin == .retry, let last = f.recentRuns.first, last.outcome == Outcome.interrupted.rawValue {
            // The core requests an interrupted attempt again at once, streak untouched.
            reasons.append(.interrupted)
            var t = "It runs again the attempt run \(last.runID) was, interrupted when refreshd stopped or died: "
                + "not the job's fault, so no backoff and no retry used up"
            if f.failureStreak > 0 {
                t += " (the \(f.failureStreak) failure\(f.failureStreak == 1 ? "" : "s") in a row before it still count)"
            }
            parts.append(t + ".")
        } else if p.origin == .retry && f.failureStreak > 0 {
            reasons.append(.backoff)
            var t = "It is a retry: backoff after \(f.failureStreak) failure\(f.failureStreak == 1 ? "" : "s") in a row"
            if let retry = f.definition?.retry { t += " (\(retry.backoff.rawValue) from \(human(retry.initial)), at most \(retry.limit) retries)" }
            parts.append(t + ".")
        } else if case let .calendar(schedule)? = f.definition?.resubmit, !due {
            reasons.append(.calendarSlot)
            parts.append("That is the next slot of its calendar \(schedule.text).")
        }
        if f.paused != nil {
            parts.append(due ? "It is due, and waits for the resume." : "If it is still paused when it comes due, it waits for the resume.")
            return parts
        }
        if !due && f.live {
            reasons.append(.earliestBegin)
            parts.append("Nothing holds it: it waits for its earliest begin date, a lower bound.")
            return parts
        }
        if !f.live {
            if due {
                reasons.append(.refreshdDown)
                var t = "refreshd is not running, so it was due while refreshd was down; it runs soon after refreshd starts"
                if f.definition?.schedule != nil, let policy = f.definition?.missed {
                    t += ", and slots missed meanwhile follow missed: \(policy.rawValue)"
                }
                parts.append(t + ".")
            } else {
                reasons.append(.earliestBegin)
                parts.append("refreshd is not running: it launches at that date only if refreshd runs then.")
            }
            return parts
        }
        switch p.place {
        case .blockedByRun?:
            reasons.append(.blockedByRun)
            parts.append("It is due but held by its own run in flight (one run per identifier); it launches when that run ends.")
        case .waitingOnConditions?:
            reasons.append(.conditions)
            var needs: [String] = []
            if p.requiresExternalPower { needs.append("external power (now \(f.conditions?.externalPower == true ? "on" : "off"))") }
            if p.requiresNetworkConnectivity { needs.append("network (now \(f.conditions?.network == true ? "up" : "down"))") }
            parts.append("It is due but waits for its conditions: \(needs.joined(separator: " and ")); it launches when they hold.")
        case .held?:
            reasons.append(.admissionHold)
            let until = p.heldUntil.map { " until \($0) (in \(human($0.duration(since: f.now))))" } ?? ""
            parts.append("It is due but the admission policy (a budget, the system's discretion) holds it\(until).")
        case .paused?:
            reasons.append(.paused)
            parts.append("It is due, and waits for the resume.")
        case .queued?, nil:
            if let cap = f.maxConcurrentRuns, f.runsInFlight.count >= cap {
                reasons.append(.concurrencyCap)
                let names = f.runsInFlight.map { "\($0.identifier) run \($0.runID)" }.joined(separator: ", ")
                parts.append("It is due but the concurrency cap is reached: \(f.runsInFlight.count) of \(cap) runs in flight (\(names)); it launches, in due order, when one ends.")
            } else {
                reasons.append(.due)
                parts.append("It is due and launches at its wake-up\(p.wake.map { " (\($0))" } ?? "").")
            }
        }
        return parts
    }

    /// A widget provider (`<job>#<family>`): it runs when its widget reloads, so what holds it is
    /// the call in flight, the budget, or the policy's next reload.
    static func explainProvider(_ w: TimelineSnapshot.Widget, _ f: WhyFacts,
                                _ reasons: inout [WhyReport.Reason]) -> [String] {
        reasons.append(.widgetProvider)
        var parts = ["\(f.identifier) provides the timelines of widget \(w.kind)/\(w.family.rawValue)\(fromFiles(f)): "
            + "it runs only when that widget reloads."]
        if let since = w.providerRunningSince {
            reasons.append(.providerInFlight)
            parts.append("A provider call is in flight since \(since) (\(human(f.now.duration(since: since)))); a reload asked meanwhile waits for it to end.")
        }
        let budget: String
        if let limit = w.budgetLimit, let used = w.budgetUsed {
            budget = "\(used) of \(limit) reloads used in the last \(human(.seconds(w.windowSeconds))), \(w.budgetLeft ?? 0) left"
        } else {
            budget = "an unlimited budget"
        }
        switch w.nextReloadWhy {
        case .deferred:
            reasons.append(.widgetBudget)
            if let release = w.nextReload {
                parts.append("A reload is deferred for the budget (\(budget)) until \(release) (in \(human(release.duration(since: f.now)))), when the window frees a slot.")
            } else {
                parts.append("A reload waits, but the budget is 0: nothing may reload.")
            }
        case .spaced:
            reasons.append(.widgetSpacing)
            if let release = w.nextReload {
                parts.append("A reload is spaced: at most one every min-reload-interval, and the last was too recent; it is "
                    + "released at \(release) (in \(human(release.duration(since: f.now)))), when the interval ends (budget: \(budget)).")
            }
        case .lowPower:
            reasons.append(.widgetLowPower)
            parts.append("A reload is held while Low Power Mode is on: counted reloads wait for it to end (budget: \(budget)).")
        case .policy, .retry:
            if let next = w.nextReload {
                let what = w.nextReloadWhy == .retry ? "retries after a failed reload" : "asks by its policy"
                let when = next > f.now ? "in \(human(next.duration(since: f.now)))" : "now"
                parts.append("The widget \(what) at \(next) (\(when)); budget: \(budget).")
            }
        case .afterProviderRun:
            parts.append("Budget: \(budget).")
        case .onRequest:
            parts.append("Nothing asks for a reload until an explicit or exempt one (refreshd ctl reload \(w.kind)); budget: \(budget).")
        }
        if let since = w.staleSince {
            parts.append("The widget is stale since \(since) (\(w.staleReason?.description ?? "stale")).")
        }
        return parts
    }

    /// A duration for a sentence: whole seconds once it is over a second.
    static func human(_ d: Duration) -> String {
        let ms = d.wholeMilliseconds
        if abs(ms) >= 1000 { return Duration.milliseconds(ms / 1000 * 1000).compactText }
        return d.compactText
    }
}
