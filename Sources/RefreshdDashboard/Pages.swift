import RefreshdCore
import RefreshdRuntime

/// The pages, server-rendered: everything is in the HTML, so they work without JavaScript;
/// `dashboard.js` only refreshes `<main>` when an event comes and ticks the countdowns.
package enum Pages {
    /// Whether the page is served by a cluster node (set per request by `Routes.page`): the
    /// Cluster tab is shown only there.
    @TaskLocal package static var onNode = false

    /// `live`: false for a page whose answer is costly to make again (the replay): the script
    /// does not reload it at each event.
    static func layout(_ title: String, active: String, api: String? = nil, live: Bool = true, _ body: HTML) -> HTML {
        let api = api ?? (active.isEmpty ? "/api/openapi.json" : "/api" + (active == "/" ? "/overview" : active))
        var tabs: [(String, String)] = [("/", "Overview"), ("/jobs", "Jobs"), ("/failures", "Failures"), ("/runs", "Runs"), ("/widgets", "Widgets"), ("/activities", "Activities"), ("/simulate", "Simulate")]
        if onNode { tabs.append(("/cluster", "Cluster")) }
        let nav = HTML.join(tabs.map { path, name in
            path == active ? "<a href=\"\(path)\" aria-current=\"page\">\(name)</a>" : "<a href=\"\(path)\">\(name)</a>"
        })
        return """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(title) · refreshd</title>
        <link rel="stylesheet" href="/static/dashboard.css">
        <link rel="icon" href="/static/favicon.svg" type="image/svg+xml">
        <script src="/static/dashboard.js" defer></script>
        </head><body>
        <header><strong>refreshd</strong><nav>\(nav)</nav><span id="live" class="muted">live updates off</span></header>
        <div id="stream-down" class="banner" role="alert" hidden>Live updates stopped at <span class="since"></span>: refreshd does not answer (stopped, or the network is down). The page shows what was true then; times no longer count. It reconnects by itself.</div>
        \(messagesMarker)
        <main id="main"\(live ? "" : HTML(" data-keep"))>
        \(body)
        </main>
        <footer class="muted">Read-only without a token; actions send <code>Authorization: Bearer</code>. JSON: <a href="\(api)">\(api)</a> · <a href="/metrics">/metrics</a> · <a href="/healthz">/healthz</a></footer>
        </body></html>
        """
    }

    /// Where action results go: outside `<main>`, so live updates never touch them; each stays
    /// until dismissed. `Routes.page` fills it with the result of a form sent without JavaScript.
    package static let messagesMarker: HTML = "<div id=\"messages\" role=\"status\" aria-live=\"polite\"></div>"

    /// The result of an action sent as a plain form (no JavaScript, so no bearer token): the
    /// refusal's code, told in fixed words (the query names a code, never free text).
    package static func refusal(_ code: String, page: String) -> HTML? {
        let words: String
        switch code {
        case "no-token": words = "Not done: actions need the bearer token, which only the page's script sends (JavaScript is off). Use curl -X POST -H 'Authorization: Bearer TOKEN' with the action's address, or turn JavaScript on."
        case "actions-off": words = "Not done: actions are off (refreshd runs without --http-token-file), so the dashboard is read-only."
        default: return nil
        }
        return HTML("<div id=\"messages\" role=\"status\" aria-live=\"polite\"><p class=\"message refused\"><span>\(words)</span> <a class=\"dismiss\" href=\"\(page)\" title=\"Dismiss\">×</a></p></div>")
    }

    static func outcome(_ name: String) -> HTML { "<span class=\"outcome \(name)\">\(name)</span>" }

    static func when(_ t: Instant?, now: Instant) -> HTML {
        guard let t else { return "<span class=\"muted\">—</span>" }
        return "<time datetime=\"\(t.iso8601)\" data-countdown=\"\(t.milliseconds)\" title=\"\(t.iso8601)\">\(Words.relative(t, now: now))</time>"
    }

    /// A job's link; a provider run's identifier (`JOB#FAMILY`) links to its timeline job.
    static func jobLink(_ id: String) -> HTML {
        let job = id.split(separator: "#", maxSplits: 1).first.map(String.init) ?? id
        return "<a href=\"/jobs/\(HTML.segment(job))\">\(id)</a>"
    }

    static func runLink(_ run: StatusReport.Run) -> HTML {
        let job = run.identifier.split(separator: "#").first.map(String.init) ?? run.identifier
        return "<a href=\"/jobs/\(HTML.segment(job))#run-\(run.runID)\">run \(run.runID)</a>"
    }

    // MARK: Overview

    package static func overview(_ d: OverviewData) -> HTML {
        let order = ["success", "failure", "expired", "crashed", "interrupted", "running"]
        let counts = HTML.join(order.map { name in
            "<div class=\"count \(name)\"><span class=\"n\">\(d.last24h[name] ?? 0)</span> \(name)</div>"
        })
        let running = d.running.isEmpty ? "<p class=\"muted\">Nothing is running.</p>" : HTML("""
            <div class="table"><table><tr><th>run</th><th>job</th><th>started</th><th>deadline</th><th>attempt</th></tr>\(d.running.map { r in
                HTML("<tr class=\"running-run\" data-run=\"\(r.runID)\"><td>run \(r.runID)</td><td>\(jobLink(r.identifier))</td><td>\(when(r.started, now: d.now))</td><td>\(when(r.deadline, now: d.now))</td><td>\(r.attempt)</td></tr>")
            })</table></div>
            """)
        // A template's failing instances are one row (its page lists them), counted by the store.
        let templateRows = d.templates.filter { $0.instances.failing > 0 }.map { t in
            HTML("<tr class=\"failing-template\"><td>\(jobLink(t.identifier))<br><span class=\"muted\">template</span></td><td><a href=\"/jobs/\(HTML.segment(t.identifier))?state=failing#instances\">\(PageInfo.grouped(t.instances.failing)) instance\(t.instances.failing == 1 ? "" : "s") failing</a></td><td>up to \(t.longestStreak)</td></tr>")
        }
        let failing = d.failing.isEmpty && templateRows.isEmpty ? "<p class=\"muted\">No job is failing.</p>" : HTML("""
            <div class="table"><table><tr><th>job</th><th>last outcome</th><th>retry streak</th></tr>\(templateRows)\(d.failing.map { f in
                HTML("<tr><td>\(jobLink(f.identifier))</td><td><a href=\"/jobs/\(HTML.segment(String(f.identifier.split(separator: "#", maxSplits: 1).first ?? "")))#run-\(f.lastRunID)\">\(outcome(f.lastOutcome))</a></td><td>\(f.retryStreak)</td></tr>")
            })</table></div>
            """)
        let templates = d.templates.isEmpty ? "" : HTML("""
            <section class="wide"><h2>Templates</h2><div class="table"><table class="templates"><tr><th>template</th><th>instances</th><th>pending</th><th>running</th><th>failing</th><th>paused</th></tr>\(d.templates.map { t in
                HTML("<tr class=\"template\"><td>\(jobLink(t.identifier))</td>\(countCells(t.identifier, t.instances))</tr>")
            })</table></div></section>
            """)
        let next = d.next.isEmpty ? "<p class=\"muted\">Nothing is pending.</p>" : HTML("""
            <div class="table"><table><tr><th>job</th><th>due</th><th>where it waits</th></tr>\(d.next.map { p in
                HTML("<tr><td>\(jobLink(p.identifier))</td><td>\(when(p.earliest, now: d.now))</td><td>\(p.place?.rawValue ?? "nowhere")</td></tr>")
            })</table></div>
            """)
        let stale = d.staleWidgets.isEmpty ? "<p class=\"muted\">No widget is stale.</p>" : HTML("""
            <ul>\(d.staleWidgets.map { w in
                HTML("<li><a href=\"/widgets#\(HTML.segment(w.kind))-\(w.family.rawValue)\">\(w.kind) / \(w.family.rawValue)</a>: stale since \(when(w.staleSince, now: d.now)) (\(w.staleReason?.rawValue ?? "unknown"))</li>")
            })</ul>
            """)
        let activities = d.liveActivities.isEmpty ? "<p class=\"muted\">No live activity.</p>" : HTML("""
            <ul>\(d.liveActivities.map { a in
                HTML("<li><a href=\"/activities#\(HTML.segment(a.id))\">\(a.id)</a> (\(a.type)): \(a.state.rawValue)\(a.progressPercent.map { HTML(" <meter min=\"0\" max=\"100\" value=\"\(Int($0))\"></meter> \(Int($0))%") } ?? "")</li>")
            })</ul>
            """)
        let recent = d.recentRuns.isEmpty ? "<p class=\"muted\">No run yet.</p>" : HTML("""
            <div class="table"><table><tr><th>run</th><th>job</th><th>started</th><th>outcome</th></tr>\(d.recentRuns.map { r in
                HTML("<tr><td>\(runLink(r))</td><td>\(jobLink(r.identifier))</td><td>\(when(r.started, now: d.now))</td><td>\(outcome(r.outcome))</td></tr>")
            })</table></div>
            """)
        let verdict: HTML = d.violations.isEmpty ? "" : HTML("<p class=\"outcome failure\">Invariant violated: \(d.violations.map(\.description).joined(separator: "; "))</p>")
        return layout("Overview", active: "/", """
            <h1>Overview</h1>
            \(verdict)
            <section><h2>Last 24 hours: \(d.runsLast24h) run\(d.runsLast24h == 1 ? "" : "s")\(d.truncated ? " (at least)" : "")</h2><div class="counts">\(counts)</div>
            <p><img class="picture" src="/overview.svg?minute=\(d.now.milliseconds / 60_000)" alt="The last 24 hours of runs: one lane per job or template, each half hour coloured by its worst outcome, with its number of runs"></p></section>
            <div class="grid">
            <section><h2>Running now</h2>\(running)</section>
            \(templates)
            <section><h2>Failing jobs</h2>\(failing)<p><a href="/failures">Failures: retrying, exhausted, expired, notifications →</a></p></section>
            <section><h2>What runs next</h2>\(next)</section>
            <section><h2>Recent runs</h2>\(recent)</section>
            <section><h2>Stale widgets</h2>\(stale)</section>
            <section><h2>Live activities</h2>\(activities)</section>
            <section class="wide"><h2>Failure notifications</h2>\(notifications(d.notifications, now: d.now))</section>
            </div>
            <section><h2>Events</h2><ol id="events" class="events" data-keep><li class="muted">Events appear here as they happen (JavaScript on).</li></ol></section>
            """)
    }

    // MARK: Jobs

    static func jobRowCells(_ j: JobRow, now: Instant) -> HTML {
        let last: HTML = j.lastRun.map { r in HTML("\(runLink(r)) \(outcome(r.outcome)) \(when(r.ended ?? r.started, now: now))") } ?? "<span class=\"muted\">never ran</span>"
        if let c = j.instances {
            // A template: its instances, counted.
            let paused: HTML = j.paused.map { HTML("<span class=\"outcome paused\">paused</span> <span class=\"muted\">since \(when($0.since, now: now))</span><br>") } ?? ""
            let next: HTML = c.pending == 0 ? HTML("\(paused)<span class=\"muted\">none pending</span>")
                : HTML("\(paused)\(PageInfo.grouped(c.pending)) pending\(c.paused > 0 && j.paused == nil ? " · \(PageInfo.grouped(c.paused)) paused" : "")")
            let last: HTML = j.lastRun.map { r in HTML("\(runLink(r)) \(jobLink(r.identifier)) \(outcome(r.outcome)) \(when(r.ended ?? r.started, now: now))") }
                ?? "<span class=\"muted\">no instance ran</span>"
            let failing: HTML = c.failing == 0 ? "0 failing" : HTML("<span class=\"outcome failure\">\(PageInfo.grouped(c.failing)) failing</span>\(j.retryStreak > 0 ? HTML("<br><span class=\"muted\">longest streak \(j.retryStreak)</span>") : "")")
            return "<td>\(jobLink(j.identifier))<br><span class=\"muted\">template · \(PageInfo.grouped(c.count)) instance\(c.count == 1 ? "" : "s") · \(PageInfo.grouped(c.running)) running</span></td><td>\(j.schedule)</td><td>\(next)</td><td>\(last)</td><td>\(failing)</td><td>—</td><td class=\"why\">\(j.why.paragraph)</td>"
        }
        let paused: HTML = j.paused.map { HTML("<span class=\"outcome paused\">paused</span> <span class=\"muted\">since \(when($0.since, now: now))</span><br>") } ?? ""
        let next: HTML = j.running != nil ? "<span class=\"outcome running\">running now</span>"
            : j.next.map { HTML("\(when($0, now: now))\(j.nextPlace.map { HTML(" <span class=\"muted\">(\($0))</span>") } ?? "")") } ?? "<span class=\"muted\">none pending</span>"
        let unmet: HTML = j.unmet.isEmpty ? "<span class=\"muted\">—</span>" : HTML("<span class=\"outcome failure\">needs \(j.unmet.joined(separator: " and "))</span>")
        return "<td>\(jobLink(j.identifier))<br><span class=\"muted\">\(j.kindName)</span></td><td>\(j.schedule)</td><td>\(paused)\(next)</td><td>\(last)</td><td>\(j.retryStreak)</td><td>\(unmet)</td><td class=\"why\">\(j.why.paragraph)</td>"
    }

    package static func jobs(_ d: JobsData) -> HTML {
        let rows = HTML.join(d.jobs.map { j in HTML("<tr id=\"job-\(HTML.segment(j.identifier))\">\(jobRowCells(j, now: d.now))</tr>") })
        let base = queryBase("/jobs", [("q", d.search.q), ("state", d.search.state?.rawValue)])
        return layout("Jobs", active: "/jobs", api: "/api" + String(base.dropLast()), """
            <h1>Jobs</h1>
            \(searchForm("jobs", action: "/jobs", d.search, textLabel: "job", keys: false))\(pager("jobs", d.page, base: base))
            <div class="table"><table class="jobs"><tr><th>job</th><th>schedule</th><th>next run</th><th>last run</th><th>retry streak</th><th>unmet conditions</th><th>why</th></tr>
            \(rows)</table></div>
            """)
    }

    // MARK: Simulate

    /// The form, and with `days` the report and its picture.
    package static func simulate(_ d: SimulateData?, days: String?) -> HTML {
        let chosen = d.map { String($0.days) } ?? days ?? "7"
        let form: HTML = """
            <form class="simulate" method="get" action="/simulate">
            <label>days <input name="days" type="number" min="1" max="\(SimulationRunner.maxDays)" value="\(chosen)" required></label>
            <label>start <input name="start" size="26" placeholder="the coming midnight" value="\(d.map { $0.start.iso8601 } ?? "")"></label>
            <label>seed <input name="seed" size="22" placeholder="from the start" value="\(d.map { String($0.seed) } ?? "")"></label>
            <button type="submit">Simulate</button></form>
            <p class="muted">The jobs folder refreshd runs from, simulated by the code of <code>refreshd simulate</code>: at most \(SimulationRunner.maxDays) days, one simulation at a time, stopped after \(SimulationRunner.timeLimit.components.seconds) s or \(SimulationRunner.maxSteps) events.</p>
            <p><a href="/simulate/replay" id="replay-link">Replay what ran</a>: a recorded period as it ran, replayed, and what if with other job files.</p>
            """
        guard let d else {
            return layout("Simulate", active: "/simulate", api: "/api/openapi.json", "<h1>Simulate</h1><section>\(form)</section>")
        }
        let query = "days=\(d.days)&start=\(HTML.segment(d.start.iso8601))&seed=\(d.seed)"
        let stopped: HTML = d.stopped.map { HTML("<p class=\"outcome failure\">Stopped early: \($0); the report covers the time simulated until then.</p>") } ?? ""
        let differs: HTML = d.notInFolder.isEmpty && d.notInForce.isEmpty ? "" : HTML("<p class=\"why\">The folder differs from the jobs in force (an edit refused or not yet applied): \(d.notInFolder.isEmpty ? "" : "in force, not in the folder: " + d.notInFolder.joined(separator: ", ") + ". ")\(d.notInForce.isEmpty ? "" : "in the folder, not in force: " + d.notInForce.joined(separator: ", ") + ".") The folder is what is simulated.</p>")
        let verdict: HTML = d.violations.isEmpty ? "" : HTML("<p class=\"outcome failure\">Invariant violated: \(d.violations.map(\.message).joined(separator: "; "))</p>")
        return layout("Simulate", active: "/simulate", api: "/api/simulate?" + query, """
            <h1>Simulate</h1>
            <section>\(form)</section>
            <section class="simulation"><h2>\(d.days) day\(d.days == 1 ? "" : "s") of \(d.jobsFolder) from \(Words.time(d.start)), seed \(d.seed) <span class="muted">(\(d.steps) steps in \(Words.milliseconds(d.elapsedMilliseconds)))</span></h2>
            \(stopped)\(verdict)\(differs)
            <p><img class="picture" id="simulation-picture" src="/simulate.svg?\(query)" alt="The simulated days drawn: one lane per job, each run coloured by outcome" width="1100"></p>
            <pre class="report">\(d.text)</pre>
            <p class="muted">The same on the command line: <code>refreshd simulate --jobs \(d.jobsFolder) --start \(d.start.iso8601) --days \(d.days) --seed \(d.seed)</code></p></section>
            """)
    }

    // MARK: Widgets

    package static func widgets(_ d: WidgetsData) -> HTML {
        // A timeline template's instances' widgets are one card a template (issue 23), with
        // counts; `/api/widgets` keeps every widget.
        let (unfolded, folds) = InstanceWidgetFold.fold(d.widgets.map(\.widget))
        let kept = Set(unfolded.map { "\($0.kind)/\($0.family.rawValue)" })
        let rows = d.widgets.filter { kept.contains("\($0.widget.kind)/\($0.widget.family.rawValue)") }
        let foldCards = HTML.join(folds.map { f in
            let lowest: HTML = f.lowestBudgetLeft.map { HTML(" · lowest budget left \($0) (\(f.lowestBudgetWidget ?? ""))") } ?? ""
            let stale: HTML = f.staleWidgets.isEmpty ? "" : HTML("<p class=\"outcome failure\">stale: \(f.staleWidgets.joined(separator: ", "))\(f.stale > f.staleWidgets.count ? ", ..." : "")</p>")
            return HTML("""
                <article class="widget"><h2>\(f.template)[*] <span class="muted">template \(jobLink(f.template))</span></h2>
                <p>\(f.instances) instances, \(f.widgets) widgets · \(f.stale) stale · \(f.reloading) reloading\(lowest)</p>\(stale)
                </article>
                """)
        })
        let cards = d.widgets.isEmpty ? "<p class=\"muted\">No job declares a widget.</p>" : HTML.join(rows.map { row in
            let w = row.widget
            let image: HTML = row.rendition.map {
                HTML("<img class=\"rendition\" src=\"/widgets/\(HTML.segment(w.kind))/\(w.family.rawValue)/rendition\" alt=\"\(w.kind) \(w.family.rawValue): \($0)\">")
            } ?? "<p class=\"muted\">The shown entry names no image.</p>"
            let shown: HTML = w.shown.map { HTML("<p>Shown since \(when(w.shownSince, now: d.now)): <code>\($0.content)</code></p>") } ?? "<p class=\"muted\">Nothing shown yet.</p>"
            let budget: HTML = w.budgetLimit.map { limit in
                HTML("<meter min=\"0\" max=\"\(max(1, limit))\" high=\"\(limit * 8 / 10)\" optimum=\"0\" value=\"\(w.budgetUsed ?? 0)\"></meter> \(w.budgetUsed ?? 0) of \(limit) reloads used in the last \(w.windowSeconds % 3600 == 0 ? "\(w.windowSeconds / 3600) h" : Words.milliseconds(w.windowSeconds * 1000))")
            } ?? "unlimited budget"
            let entries = row.entries.isEmpty ? "<p class=\"muted\">No timeline.</p>" : HTML("<ol class=\"timeline\">\(row.entries.prefix(48).map { e in HTML("<li><time>\(Words.time(e.date))</time> <code>\(e.content)</code></li>") })</ol>")
            let spans = w.staleSpans.isEmpty ? "<p class=\"muted\">Never stale.</p>" : HTML("<ul>\(w.staleSpans.suffix(10).map { s in HTML("<li>\(Words.time(s.start)) → \(s.end.map(Words.time) ?? "now"): \(s.reason.rawValue)\(s.detail.map { " (\($0))" } ?? "")</li>") })</ul>")
            let stale: HTML = w.staleSince.map { HTML("<p class=\"outcome failure\">stale since \(when($0, now: d.now)): \(w.staleReason?.rawValue ?? "")</p>") } ?? ""
            return HTML("""
                <article class="widget" id="\(HTML.segment(w.kind))-\(w.family.rawValue)"><h2>\(w.kind) / \(w.family.rawValue) <span class="muted">job \(jobLink(w.job))</span></h2>
                \(stale)<div class="widget-body"><div>\(image)</div><div>\(shown)
                <p>Next entry \(when(w.nextEntrySwitch, now: d.now)) · next reload \(when(w.nextReload, now: d.now)) (\(w.nextReloadWhy.rawValue)) · \(w.entries) entries</p>
                <p>Budget: \(budget)</p>
                <p>Reloads in the window:</p>\(reloadChart(row.ledger, now: d.now, window: w.windowSeconds))
                \(actionForm("/api/widgets/" + HTML.segment(w.kind) + "/reload", "Reload \(w.kind)", enabled: d.actionsEnabled))
                </div></div>
                <details><summary>Timeline (\(row.entries.count) entries)</summary>\(entries)</details>
                <details><summary>Stale spans</summary>\(spans)</details>
                </article>
                """)
        })
        return layout("Widgets", active: "/widgets", "<h1>Widgets</h1>\(cards)\(foldCards)")
    }

    /// The counted reloads of the trailing window as ticks on a line (inline SVG: no script,
    /// no style attribute, so the Content-Security-Policy allows it).
    static func reloadChart(_ ledger: [Instant], now: Instant, window: Int64) -> HTML {
        let span = Double(max(1, window * 1000)), width = 480.0
        let ticks = HTML.join(ledger.map { t in
            let x = 10 + width * (1 - Double(now.milliseconds - t.milliseconds) / span)
            return HTML("<line x1=\"\(Int(x))\" y1=\"6\" x2=\"\(Int(x))\" y2=\"26\" stroke=\"#2e9e44\" stroke-width=\"2\"><title>\(Words.time(t))</title></line>")
        })
        return "<svg class=\"chart\" width=\"500\" height=\"44\" viewBox=\"0 0 500 44\" role=\"img\" aria-label=\"\(ledger.count) counted reloads\"><line x1=\"10\" y1=\"26\" x2=\"490\" y2=\"26\" stroke=\"#999\"/>\(ticks)<text x=\"10\" y=\"40\" font-size=\"10\">\(Words.milliseconds(window * 1000)) ago</text><text x=\"460\" y=\"40\" font-size=\"10\">now</text></svg>"
    }

    // MARK: Activities

    package static func activities(_ d: ActivitiesData) -> HTML {
        let rows = d.activities.activities.isEmpty ? "<p class=\"muted\">No activity.</p>" : HTML("""
            <div class="table"><table><tr><th>activity</th><th>state</th><th>progress</th><th>stale date</th><th>ends by (8 h)</th><th>dismissal</th><th>next deadline</th><th>updates</th><th></th></tr>\(d.activities.activities.map { a in
                let progress: HTML = a.progressPercent.map { HTML("<meter min=\"0\" max=\"100\" value=\"\(Int($0))\"></meter> \(Int($0))%") } ?? "—"
                let held: HTML = a.held.map { _ in HTML(" · 1 held") } ?? ""
                let end: HTML = a.state.isLive ? actionForm("/api/activities/" + HTML.segment(a.id) + "/end", "End", enabled: d.actionsEnabled) : ""
                return HTML("<tr id=\"\(HTML.segment(a.id))\"><td>\(a.id)<br><span class=\"muted\">\(a.type) · \(a.owner ?? "—") · \(a.namespace)</span></td><td>\(a.state.rawValue)</td><td>\(progress)</td><td>\(when(a.staleDate, now: d.now))</td><td>\(when(a.endsBy, now: d.now))</td><td>\(when(a.dismissal, now: d.now))</td><td>\(a.nextDeadlineKind ?? "") \(when(a.nextDeadline, now: d.now))</td><td>\(a.updatesApplied) applied · \(a.updatesIgnored) ignored\(held) · budget \(a.budgetUsed)/\(a.budget)</td><td>\(end)</td></tr>")
            })</table></div>
            """)
        let dismissed = d.activities.recentlyDismissed.isEmpty ? "" : HTML("<h2>Recently dismissed</h2><ul>\(d.activities.recentlyDismissed.map { HTML("<li>\($0.id)</li>") })</ul>")
        return layout("Activities", active: "/activities", "<h1>Activities</h1>\(rows)\(dismissed)")
    }

    /// The cluster as this node reads it from the database (issue 32).
    package static func cluster(_ d: ClusterData) -> HTML {
        let items = HTML.join(d.nodes.map { n in
            let this = n.name == d.cluster.node ? " (this node)" : ""
            return HTML("<li><strong>\(n.name)</strong>\(this) leads \(n.shards.count) shard\(n.shards.count == 1 ? "" : "s"): \(n.shards.map(String.init).joined(separator: ", "))</li>")
        })
        let nodes: HTML = d.nodes.isEmpty ? "<p class=\"outcome failure\">No node leads a shard.</p>" : HTML("<ul>\(items)</ul>")
        let unled: HTML = d.unled.isEmpty ? "" : HTML("<p class=\"outcome failure\">Not led now: shard\(d.unled.count == 1 ? "" : "s") \(d.unled.map(String.init).joined(separator: ", ")) (their jobs wait for a node to take them).</p>")
        let rows = HTML.join(d.cluster.shards.map { s in
            let state: HTML = s.led ? "led" : HTML("<span class=\"outcome failure\">\(s.owner == nil ? "never led" : "lapsed")</span>")
            let commands: HTML = s.pendingCommands > 0 ? HTML("\(s.pendingCommands)") : "—"
            return HTML("<tr><td>\(s.shard)</td><td>\(s.owner ?? "—")</td><td>\(s.epoch)</td><td>\(state)</td><td>\(when(s.expiresAt, now: d.cluster.databaseNow))</td><td>\(commands)</td></tr>")
        })
        let lines = HTML.join(d.events.map { HTML("<li>\(when($0.at, now: d.now)) \($0.line)</li>") })
        let events: HTML = d.events.isEmpty ? "<p class=\"muted\">No lease event on this node yet.</p>" : HTML("<ul class=\"events\">\(lines)</ul>")
        return layout("Cluster", active: "/cluster", """
            <h1>Cluster</h1>
            <p class="muted">Read by node \(d.cluster.node) from the database at \(d.cluster.databaseNow.iso8601) (database time); every node shows the same leases.</p>
            <section><h2>Nodes</h2>\(nodes)\(unled)</section>
            <section><h2>Shards</h2><div class="table"><table><tr><th>shard</th><th>leader</th><th>epoch</th><th>lease</th><th>until</th><th>commands queued</th></tr>\(rows)</table></div></section>
            <section><h2>This node's lease events</h2>\(events)</section>
            """)
    }

    /// An error page (also for 401/403/404), escaped like any page.
    package static func error(_ status: Int, _ message: String) -> HTML {
        layout("Error \(status)", active: "", "<h1>\(status)</h1><p>\(message)</p>")
    }
}
