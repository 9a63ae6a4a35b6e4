import RefreshdCore
import RefreshdRuntime

// A job's page (its actions, runs, next slots and notifications) and a template's (its
// instances counted, searched and paged, the failing first).
extension Pages {
    static func actionForm(_ path: String, _ label: String, enabled: Bool) -> HTML {
        let off: HTML = enabled ? "" : " disabled title=\"start refreshd with --http-token-file to allow actions\""
        return "<form class=\"action\" method=\"post\" action=\"\(path)\"><button type=\"submit\"\(off)>\(label)</button></form>"
    }

    /// Under a page's action buttons: how to act with the token, or that actions are off.
    static func actionsNote(_ enabled: Bool, example: String) -> HTML {
        enabled ? HTML("<p class=\"muted\">Actions need the token (the page asks once): <code>curl -X POST -H 'Authorization: Bearer TOKEN' http://HOST\(example)</code></p>")
            : "<p class=\"muted\">Read-only: refreshd runs without <code>--http-token-file</code>, so actions are off.</p>"
    }

    package static func job(_ d: JobData) -> HTML {
        let j = d.job
        let base = "/api/jobs/" + HTML.segment(j.identifier)
        // A template never runs (its instances do): the API refuses run, cancel and expire for
        // it; it is paused and resumed whole (issue 33).
        let pausing: HTML = j.paused.map { p in
            p.identifier == j.identifier ? actionForm(base + "/resume", "Resume", enabled: d.actionsEnabled)
                : HTML("<span class=\"muted\">paused with its template \(jobLink(p.identifier))</span>")
        } ?? actionForm(base + "/pause", "Pause", enabled: d.actionsEnabled)
        let pausedNote: HTML = j.paused.map { p in
            HTML("<p class=\"paused\"><span class=\"outcome paused\">paused</span> since \(Words.time(p.since)) (\(when(p.since, now: d.now)))\(p.identifier == j.identifier ? "" : HTML(" with its template \(jobLink(p.identifier))")): it keeps its pending request and launches nothing until resumed.</p>")
        } ?? ""
        let runActions: HTML = d.template != nil ? "" : HTML("\(actionForm(base + "/run", "Run now", enabled: d.actionsEnabled))\(actionForm(base + "/cancel", "Cancel pending request", enabled: d.actionsEnabled))\(actionForm(base + "/expire", "Expire the running run", enabled: d.actionsEnabled))")
        let actions = HTML("""
            <section><h2>Actions</h2>\(pausedNote)<div class="actions">\(runActions)\(pausing)</div>
            \(actionsNote(d.actionsEnabled, example: base + (d.template != nil ? "/pause" : "/run")))</section>
            """)
        let newest = d.runs.first?.run.runID
        let none: HTML = d.template != nil ? "<p class=\"muted\">A template never runs: its instances' runs are on their pages (below).</p>"
            : "<p class=\"muted\">No runs recorded.</p>"
        let runs = d.runs.isEmpty ? none : HTML.join(d.runs.map { row in
            let r = row.run
            // The newest run's output is open, and a failed run's: what an operator came for.
            let failed = !["success", "running"].contains(r.outcome)
            let open: HTML = r.runID == newest || failed ? " open" : ""
            let bar: HTML = row.durationMilliseconds.map { ms in
                HTML("<meter min=\"0\" max=\"\(max(1, row.allowanceMilliseconds))\" low=\"\(row.allowanceMilliseconds * 3 / 4)\" high=\"\(row.allowanceMilliseconds * 9 / 10)\" optimum=\"0\" value=\"\(min(ms, row.allowanceMilliseconds))\"></meter> \(Words.milliseconds(ms)) of \(Words.milliseconds(row.allowanceMilliseconds))")
            } ?? HTML("running, allowance \(Words.milliseconds(row.allowanceMilliseconds))")
            let exit: HTML = r.exitStatus.map { HTML("exit \($0)") } ?? r.signal.map { HTML("signal \($0)") } ?? ""
            let output: HTML = row.output.isEmpty ? "" : HTML("<details\(open)><summary>output (last \(row.output.count) line\(row.output.count == 1 ? "" : "s")\(r.outputEarlier.map { HTML(" of \($0 + row.output.count)") } ?? ""))</summary><pre>\(row.output.joined(separator: "\n"))</pre></details>")
            let results: HTML = row.results.isEmpty ? "" : HTML("<details\(open)><summary>results (\(row.results.count) line\(row.results.count == 1 ? "" : "s"))</summary><pre>\(row.results.joined(separator: "\n"))</pre></details>")
            return HTML("""
                <article class="run" id="run-\(r.runID)"><h3>run \(r.runID) \(outcome(r.outcome)) <span class="muted">attempt \(r.attempt) · started \(Words.time(r.started)) (\(when(r.started, now: d.now)))</span></h3>
                <p>\(bar) \(exit)</p>\(output)\(results)</article>
                """)
        })
        let older: HTML = d.nextBefore.map { HTML("<p><a href=\"/jobs/\(HTML.segment(j.identifier))?before=\($0)\">Older runs →</a></p>") } ?? ""
        let slots = d.nextSlots.isEmpty ? "<p class=\"muted\">Not on a calendar.</p>" : HTML("<ol>\(d.nextSlots.map { HTML("<li>\(Words.time($0)) (\(when($0, now: d.now)))</li>") })</ol>")
        let what: HTML = d.action.map { HTML("built-in action <code>\($0)</code>") } ?? d.command.map { HTML("<code>\($0.joined(separator: " "))</code>") } ?? ""
        let instances = template(d)
        return layout(j.identifier, active: "/jobs", api: "/api/jobs/" + HTML.segment(j.identifier), """
            <h1>\(j.identifier)</h1>
            <p>\(what)</p>
            <div class="table"><table class="jobs"><tr><th>job</th><th>schedule</th><th>next run</th><th>last run</th><th>retry streak</th><th>unmet conditions</th><th>why</th></tr>
            <tr>\(jobRowCells(j, now: d.now))</tr></table></div>
            \(actions)
            <div class="grid">
            <section class="wide"><h2>Run history</h2>\(runs)\(older)</section>
            <section><h2>Next 10 calendar slots</h2>\(slots)</section>
            <section><h2>Failure notifications</h2>\(notifications(d.notifications, now: d.now, counts: false))</section>
            </div>
            \(instances)
            """)
    }

    /// Held notifications (waiting to be delivered: their attempts, the last failure, the next
    /// attempt) and those given up or dropped since this refreshd started.
    /// `counts`: the counts since start, which are of all jobs (not shown on a job's page).
    static func notifications(_ n: NotificationsData, now: Instant, counts shown: Bool = true) -> HTML {
        let c = n.counts
        let counts: HTML = !shown ? "" : "<p class=\"muted\">Since this refreshd started: \(c.failure) failure, \(c.recovery) recovery; \(c.delivered) delivered, \(c.retries) retries, \(c.givenUp) given up, \(c.dropped) dropped.</p>"
        let held = n.held.isEmpty ? "<p class=\"muted\">None waiting.</p>" : HTML("""
            <div class="table"><table class="held"><tr><th>notification</th><th>run</th><th>to</th><th>failed attempts</th><th>next attempt</th></tr>\(n.held.map { h in
                HTML("<tr class=\"held-notification\"><td>\(h.kind) <span class=\"muted\">\(h.id)</span></td><td>\(jobLink(h.job)) run \(h.runID) \(outcome(h.outcome))</td><td><code>\(h.notifier)</code></td><td>\(h.attempts)\(h.lastFailure.map { HTML("<br><span class=\"why\">\($0)</span>") } ?? "")</td><td>\(h.attempts == 0 && h.nextAttempt == nil ? HTML("being sent") : when(h.nextAttempt, now: now))</td></tr>")
            })</table></div>
            """)
        let gone = n.givenUp.isEmpty ? "" : HTML("""
            <h3>Given up or dropped</h3><ul class="gone">\(n.givenUp.prefix(20).map { g in
                HTML("<li class=\"gone-notification\"><span class=\"outcome failure\">\(g.kind == "notification-dropped" ? "dropped" : "given up")</span> \(Words.time(g.time)): \(g.message)</li>")
            })</ul>
            """)
        return "\(counts)<h3>Waiting (\(n.held.count))</h3>\(held)\(gone)"
    }

    /// A template's counts as table cells, each a link to its instances (in that state).
    static func countCells(_ template: String, _ c: InstanceCounts) -> HTML {
        let path = "/jobs/" + HTML.segment(template)
        func cell(_ n: Int, _ state: String) -> HTML {
            let text: HTML = n > 0 && state == "failing" ? HTML("<span class=\"outcome failure\">\(PageInfo.grouped(n))</span>") : HTML(escaping: PageInfo.grouped(n))
            return HTML("<td class=\"n \(state)\"><a href=\"\(path)?state=\(state)#instances\">\(text)</a></td>")
        }
        return HTML("<td class=\"n count\"><a href=\"\(path)#instances\">\(PageInfo.grouped(c.count))</a></td>\(cell(c.pending, "pending"))\(cell(c.running, "running"))\(cell(c.failing, "failing"))\(cell(c.paused, "paused"))")
    }

    /// A template's instances, folded: the count, the failing ones, a page of the list, and the
    /// add and remove actions (token).
    static func template(_ d: JobData) -> HTML {
        guard let t = d.template else {
            return d.instanceOf.map { HTML("<p>An instance of template \(jobLink($0)).</p>") } ?? ""
        }
        let id = d.job.identifier
        let base = "/api/jobs/" + HTML.segment(id) + "/instances"
        let failing = t.failing.isEmpty ? "<p class=\"muted\">No instance is failing.</p>" : HTML("""
            <div class="table"><table><tr><th>instance</th><th>last outcome</th><th>retry streak</th></tr>\(t.failing.map { f in
                HTML("<tr class=\"failing-instance\"><td>\(jobLink(f.identifier))</td><td><a href=\"/jobs/\(HTML.segment(f.identifier))#run-\(f.lastRunID)\">\(outcome(f.lastOutcome))</a></td><td>\(f.retryStreak)</td></tr>")
            })</table></div>\(t.failingMore ? HTML("<p class=\"muted\">(the first 50: <a href=\"/jobs/\(HTML.segment(id))?state=failing#instances\">every failing instance</a>)</p>") : "")
            """)
        let rows = t.instances.isEmpty ? "<p class=\"muted\">No instance matches.</p>" : HTML("""
            <div class="table"><table class="instances"><tr><th>instance</th><th>values</th><th>next</th><th>last run</th><th>retry streak</th><th></th></tr>\(t.instances.map { i in
                let name = InstanceName.identifier(template: i.template, key: i.key)
                let paused: HTML = i.paused ? "<span class=\"outcome paused\">paused</span> " : ""
                let next: HTML = i.running.map { HTML("<span class=\"outcome running\">running</span> (run \($0))") }
                    ?? i.next.map { HTML("\(paused)\(when($0, now: d.now))") } ?? HTML("\(paused)<span class=\"muted\">none pending</span>")
                let last: HTML = i.lastRun.map { r in HTML("\(runLink(r)) \(outcome(r.outcome)) \(when(r.ended ?? r.started, now: d.now))") }
                    ?? "<span class=\"muted\">never ran</span>"
                let streak: HTML = i.retryStreak > 0 ? HTML("<span class=\"outcome failure\">\(i.retryStreak)</span>") : "0"
                return HTML("<tr class=\"instance\(i.retryStreak > 0 ? " failing" : "")\"><td>\(jobLink(name))</td><td><code>\(i.valuesText)</code></td><td>\(next)</td><td>\(last)</td><td>\(streak)</td><td>\(actionForm(base + "/" + HTML.segment(i.key) + "/remove", "Remove", enabled: d.actionsEnabled))</td></tr>")
            })</table></div>
            """)
        let path = "/jobs/" + HTML.segment(id)
        let listBase = queryBase(path, [("q", t.search.q), ("state", t.search.state?.rawValue)])
        let search = searchForm("instances", action: path + "#instances", t.search, textLabel: "key contains", keys: true)
        let pages = pager("instances", t.page, base: listBase, beforeName: "beforeKey", fragment: "#instances")
        let fields = HTML.join(t.parameters.count > 1 ? t.parameters.map { p in HTML(" <label>\(p) <input name=\"\(p)\" size=\"10\" required></label>") } : [])
        let add: HTML = """
            <form class="action" method="post" action="\(base)"><label>key <input name="key" size="14" required pattern="[A-Za-z0-9._@\\-]{1,128}"></label>\(fields) <button type="submit"\(d.actionsEnabled ? "" : " disabled")>Add instance</button></form>
            """
        return """
            <section id="instances"><h2>Instances: \(PageInfo.grouped(t.count)) <span class="muted">(parameters: \(t.parameters.joined(separator: ", ")))</span></h2>
            <div class="table"><table class="templates"><tr><th>instances</th><th>pending</th><th>running</th><th>failing</th><th>paused</th></tr><tr class="template">\(countCells(id, t.counts))</tr></table></div>
            <div class="grid"><div><h3>Failing</h3>\(failing)</div><div><h3>Add</h3>\(add)<p class="muted">or <code>refreshd ctl instance add \(id) KEY</code></p></div></div>
            <h3>The list</h3>\(search)\(pages)\(rows)</section>
            """
    }
}
