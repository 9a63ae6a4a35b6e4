import RefreshdRuntime

/// The Failures page (issue 33): failing jobs and instances with their next attempt, retries
/// exhausted, runs that expired or crashed, notifications held or given up; Retry now per row
/// and for a whole list (the browser asks for a confirmation first).
extension Pages {
    package static func failures(_ d: FailuresData) -> HTML {
        let failing = d.retrying.count + d.exhausted.count
        let summary: HTML = failing == 0 && d.expiredOrCrashed.isEmpty && d.notifications.held.isEmpty
            ? "<p class=\"muted\">Nothing is failing.</p>"
            : HTML("<p>\(d.retrying.count) retrying · \(d.exhausted.count) with retries exhausted · \(d.expiredOrCrashed.count) runs expired or crashed in 24 h · \(d.notifications.held.count) notifications waiting\(d.more > 0 ? HTML(" <span class=\"muted\">(\(d.more) more failing not listed)</span>") : "")</p>")
        return layout("Failures", active: "/failures", """
            <h1>Failures</h1>
            \(summary)
            \(failingTemplates(d))
            <section id="retrying"><h2>Retrying (\(d.retrying.count))</h2>
            \(failureTable(d.retrying, next: "next attempt", list: "retrying", d))</section>
            <section id="exhausted"><h2>Retries exhausted (\(d.exhausted.count))</h2>
            <p class="muted">Nothing retries these; Retry now submits a request due now (the job's own conditions still hold).</p>
            \(failureTable(d.exhausted, next: "next regular run", list: "exhausted", d))</section>
            <section id="broken"><h2>Expired or crashed, last 24 h (\(d.expiredOrCrashed.count))</h2>
            \(brokenRuns(d))</section>
            <section id="notifications"><h2>Failure notifications</h2>\(notifications(d.notifications, now: d.now))</section>
            \(actionsNote(d.actionsEnabled, example: "/api/failures/retry?list=all"))
            """)
    }

    /// Each template with failing instances, one row: its instances counted by state, how many
    /// of the failing ones the lists below hold (the first by key), a link to them all.
    static func failingTemplates(_ d: FailuresData) -> HTML {
        guard !d.templates.isEmpty else { return "" }
        let rows = HTML.join(d.templates.map { t in
            let all = "/jobs/" + HTML.segment(t.identifier) + "?state=failing#instances"
            return HTML("<tr class=\"failing-template\" id=\"template-\(HTML.segment(t.identifier))\" data-job=\"\(t.identifier)\"><td>\(jobLink(t.identifier))</td>\(countCells(t.identifier, t.instances))<td>\(PageInfo.grouped(t.listed)) of \(PageInfo.grouped(t.instances.failing)) <a href=\"\(all)\">all failing</a></td></tr>")
        })
        return HTML("""
            <section id="templates"><h2>Templates (\(d.templates.count))</h2>
            <p class="muted">A template is one row; the first \(Views.failingShown) of its failing instances are in the lists below.</p>
            <div class="table"><table class="templates"><tr><th>template</th><th>instances</th><th>pending</th><th>running</th><th>failing</th><th>paused</th><th>listed</th></tr>\(rows)</table></div></section>
            """)
    }

    /// A list of failing jobs and instances, a Retry now per row, and one for the whole list.
    static func failureTable(_ rows: [FailureRow], next: String, list: String, _ d: FailuresData) -> HTML {
        guard !rows.isEmpty else { return "<p class=\"muted\">None.</p>" }
        let body = HTML.join(rows.map { r in
            let last: HTML = r.lastRun.map { run in
                HTML("\(runLink(run)) \(outcome(run.outcome)) \(when(run.ended ?? run.started, now: d.now))\(run.exitStatus.map { HTML(" <span class=\"muted\">exit \($0)</span>") } ?? "")")
            } ?? "<span class=\"muted\">no run kept</span>"
            let paused: HTML = r.paused.map { HTML(" <span class=\"outcome paused\">paused</span> <span class=\"muted\">(\(jobLink($0.identifier)))</span>") } ?? ""
            let nextText: HTML = r.next.map { when($0, now: d.now) } ?? "<span class=\"muted\">none pending</span>"
            return HTML("<tr class=\"failure-row\" id=\"\(list)-\(HTML.segment(r.identifier))\" data-job=\"\(r.identifier)\"><td>\(jobLink(r.identifier))</td><td>\(r.retryStreak)</td><td>\(nextText)\(paused)</td><td>\(last)</td><td>\(actionForm("/api/jobs/" + HTML.segment(r.identifier) + "/run", "Retry now", enabled: d.actionsEnabled))</td></tr>")
        })
        let count = rows.count
        let all = HTML("<form class=\"action bulk\" method=\"post\" action=\"/api/failures/retry?list=\(list)\" data-confirm=\"Retry all \(count) \(list == "retrying" ? "retrying" : "exhausted") job\(count == 1 ? "" : "s") now? Each gets a request due now.\"><button type=\"submit\"\(d.actionsEnabled ? "" : HTML(" disabled title=\"start refreshd with --http-token-file to allow actions\""))>Retry all \(count) now</button></form>")
        return HTML("""
            <div class="table"><table class="failures"><tr><th>job</th><th>failures in a row</th><th>\(next)</th><th>last run</th><th></th></tr>\(body)</table></div>
            <div class="actions">\(all)</div>
            """)
    }

    static func brokenRuns(_ d: FailuresData) -> HTML {
        guard !d.expiredOrCrashed.isEmpty else { return "<p class=\"muted\">None.</p>" }
        let rows = HTML.join(d.expiredOrCrashed.map { r in
            let took: HTML = r.ended.map { HTML("after \(Words.milliseconds($0.duration(since: r.started).wholeMilliseconds))") } ?? ""
            let how: HTML = r.signal.map { HTML("signal \($0)") } ?? r.exitStatus.map { HTML("exit \($0)") } ?? ""
            return HTML("<tr class=\"broken-run\" id=\"broken-\(r.runID)\"><td>\(runLink(r))</td><td>\(jobLink(r.identifier))</td><td>\(outcome(r.outcome)) \(how)</td><td>\(when(r.started, now: d.now)) \(took)</td></tr>")
        })
        return HTML("<div class=\"table\"><table class=\"broken\"><tr><th>run</th><th>job</th><th>outcome</th><th>started</th></tr>\(rows)</table></div>")
    }
}
