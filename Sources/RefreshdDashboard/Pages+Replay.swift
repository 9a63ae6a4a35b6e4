import RefreshdCore
import RefreshdSimulation

/// The Simulate page's replay (issue 34): a recorded period as it ran, replayed with the same
/// files and, with a folder named, what if; per job, per day, the widgets and activities, the
/// paired lanes' picture and the simulator's error line.
/// What a replay request asks for (`/simulate/replay?from=&to=&jobs=&seed=`), as typed; the
/// runner's settings when `from` is given and the rest reads (the page shows its form otherwise).
package struct ReplayQuery {
    package var from = "", to = "", jobs = "", seed = ""
    package var settings: ReplayRunner.Settings?

    package init(from: String = "", to: String = "", jobs: String = "", seed: String = "") {
        (self.from, self.to, self.jobs, self.seed) = (from, to, jobs, seed)
    }
}

extension Pages {
    /// The form (by default the last day), and the comparison, or `problem` in words.
    package static func replay(_ d: ReplayData?, query: ReplayQuery, now: Instant, actionsEnabled: Bool, problem: String?) -> HTML {
        let from = query.from.isEmpty ? (now - .seconds(86_400)).iso8601 : query.from
        let to = query.to.isEmpty && query.from.isEmpty ? now.iso8601 : query.to
        let form: HTML = """
            <form class="simulate replay" method="get" action="/simulate/replay">
            <label>from <input name="from" size="26" value="\(from)" required></label>
            <label>to <input name="to" size="26" placeholder="now" value="\(to)"></label>
            <label>what if with <input name="jobs" size="26" placeholder="a folder beside the jobs folder" value="\(query.jobs)"></label>
            <label>seed <input name="seed" size="22" placeholder="from the start" value="\(query.seed)"></label>
            <button type="submit">Replay</button></form>
            <p class="muted">What ran between the two instants (ISO 8601, or a span back from now like <code>1d</code>), replayed by the code of <code>refreshd simulate --replay</code> with the jobs folder refreshd runs from, and with the folder named for a what-if (a folder under the one that holds the jobs folder; it needs the bearer token\(actionsEnabled ? "" : HTML(", and actions are off"))). At most \(ReplayRunner.maxDays) days, one replay at a time, stopped after \(SimulationRunner.timeLimit.components.seconds) s.</p>
            """
        let told: HTML = problem.map { HTML("<p class=\"message refused\" id=\"replay-problem\"><span>\($0)</span></p>") } ?? ""
        let api = d.map { "/api/replay?from=\(HTML.segment($0.from.iso8601))&to=\(HTML.segment($0.to.iso8601))" } ?? "/api/openapi.json"
        guard let d else {
            return layout("Replay", active: "/simulate", api: api, live: false, "<h1>Replay what ran</h1><section>\(form)\(told)</section>")
        }
        return layout("Replay", active: "/simulate", api: api, live: false, """
            <h1>Replay what ran</h1>
            <section>\(form)</section>
            \(replayResult(d))
            """)
    }

    static func replayResult(_ d: ReplayData) -> HTML {
        let whatIf = d.whatIfJobs != nil
        let stopped: HTML = d.stopped.map { HTML("<p class=\"outcome failure\">Stopped early: \($0); the comparison covers the time replayed until then.</p>") } ?? ""
        let verdict: HTML = d.violations.isEmpty ? "" : HTML("<p class=\"outcome failure\">Invariant violated: \(d.violations.map(\.message).joined(separator: "; "))</p>")
        let notes = HTML.join(d.notes.map { "<li>\($0)</li>" })
        let faults = HTML.join(d.faults.map { f in
            "<li><code>\(f.kind)</code> \(f.at?.iso8601 ?? "")\(f.until.map { ".." + $0.iso8601 } ?? ""): \(f.detail)</li>"
        })
        let heads: HTML = "<th>as it ran</th><th>replayed</th>\(whatIf ? HTML("<th>what if</th>") : "")"
        typealias Line = (day: String?, name: String, ran: String, replayed: String, whatIf: String?, apart: Bool)
        func table(_ id: String, _ name: String, _ rows: [Line], days: Bool) -> HTML {
            guard !rows.isEmpty else { return "" }
            // A replayed cell that differs from what ran is marked (the simulator's error).
            let body = HTML.join(rows.map { r in
                "<tr>\(days ? HTML("<td>\(r.day ?? "whole period")</td>") : "")<td>\(r.name)</td><td>\(r.ran)</td><td\(r.apart ? HTML(" class=\"apart\"") : "")>\(r.replayed)</td>\(whatIf ? HTML("<td>\(r.whatIf ?? "")</td>") : "")</tr>"
            })
            return "<div class=\"table\"><table class=\"replay\" id=\"\(id)\"><tr>\(days ? HTML("<th>day</th>") : "")<th>\(name)</th>\(heads)</tr>\(body)</table></div>"
        }
        // Runs apart by outcome (lateness is timing: within the stated tolerance, not marked).
        func apart(_ a: SimulationReport.Figures, _ b: SimulationReport.Figures) -> Bool {
            [a.launched, a.success, a.failure, a.expired, a.crashed, a.interrupted] != [b.launched, b.success, b.failure, b.expired, b.crashed, b.interrupted]
        }
        let jobRow = { (r: ReplayRow) -> Line in
            (day: r.day, name: r.job, ran: r.ran.text, replayed: r.replayed.text, whatIf: r.whatIf?.text, apart: apart(r.ran, r.replayed))
        }
        let wordsRow = { (r: ReplayWords) -> Line in
            (day: r.day, name: r.name, ran: r.ran, replayed: r.replayed, whatIf: r.whatIf, apart: r.ran != r.replayed)
        }
        let cut: HTML = d.days.count < ReplayData.maxRows ? "" : HTML("<p class=\"muted\">The first \(ReplayData.maxRows) rows; the command line's table below has them all.</p>")
        let command = "refreshd simulate --replay \(d.from.iso8601)..\(d.to.iso8601) --state \(d.state) --ran-jobs \(d.jobsFolder)"
            + (d.whatIfJobs.map { " --jobs \($0)" } ?? "") + " --seed \(d.seed) --svg replay.svg"
        return """
            <section class="simulation" id="replay"><h2>\(d.from.iso8601) to \(d.to.iso8601) of \(d.jobsFolder)\(d.whatIfJobs.map { HTML(", what if with <code>\($0)</code>") } ?? "") <span class="muted">(replayed in \(Words.milliseconds(d.elapsedMilliseconds)))</span></h2>
            \(stopped)\(verdict)
            <p class="why" id="replay-error">\(d.errorLine)</p>
            <h3>Per job</h3>\(table("replay-jobs", "job", d.jobs.map(jobRow), days: false))
            <h3>The lanes paired <span class="muted">(per job: as it ran, replayed\(whatIf ? ", what if" : ""))</span></h3>
            <div class="table picture-box" id="replay-picture">\(HTML(picture: d.svg))</div>
            <h3>Per day</h3>\(table("replay-days", "job", d.days.map(jobRow), days: true))\(cut)
            \(d.widgets.isEmpty ? "" : HTML("<h3>Widgets</h3>"))\(table("replay-widgets", "widget", d.widgets.map(wordsRow), days: true))
            \(d.activities.isEmpty ? "" : HTML("<h3>Activities</h3>"))\(table("replay-activities", "activity", d.activities.map(wordsRow), days: true))
            \(d.faults.isEmpty ? "" : HTML("<h3>The world then, replayed</h3><ul class=\"gone\">\(faults)</ul>"))
            \(d.notes.isEmpty ? "" : HTML("<h3>Notes</h3><ul class=\"gone\">\(notes)</ul>"))
            <details><summary>As the command line prints it</summary><pre class="report">\(d.text)</pre></details>
            <p class="muted">The same on the command line: <code>\(command)</code></p></section>
            """
    }
}
