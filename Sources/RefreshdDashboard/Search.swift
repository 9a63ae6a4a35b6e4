import Foundation
import RefreshdCore
import RefreshdRuntime

/// Search and filter (issue 33, item 5): the jobs (`/jobs?q=&state=`), a template's instances
/// (`/jobs/TEMPLATE?q=&state=`) and the runs (`/runs?job=&outcome=&since=&until=`), each
/// answered server-side a page at a time with its position and the cursors of the pages beside
/// it, the same in `/api/...`. Instances and runs are searched by the stores (`StateReader`'s
/// `searchInstances`, `searchRuns`: one machine's store or every shard's); the jobs in force
/// are few and in memory, filtered by the same states on their rows.

/// Where a page of results stands: "201-250 of 12,345", and the cursors of the pages beside it
/// (nil: there is none that way).
package struct PageInfo: Codable, Sendable {
    /// 1-based position of the first result shown and of the last (0 and 0 when none).
    var first: Int
    var last: Int
    var total: Int
    /// Ask with `?before=` (instances: `?beforeKey=`) this for the previous page.
    var previous: String?
    /// Ask with `?after=` this for the next page.
    var next: String?

    init<T>(_ page: SearchPage<T>, cursor: (T) -> String) {
        first = page.items.isEmpty ? 0 : page.position + 1
        last = page.position + page.items.count
        total = page.total
        previous = page.hasPrevious ? page.items.first.map(cursor) : nil
        next = page.hasNext ? page.items.last.map(cursor) : nil
    }

    /// "201-250 of 12,345".
    var words: String {
        total == 0 ? "none" : "\(Self.grouped(first))-\(Self.grouped(last)) of \(Self.grouped(total))"
    }

    static func grouped(_ n: Int) -> String {
        let digits = String(n)
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0, (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return out
    }
}

/// What a search asked, as the page's form shows it again.
package struct SearchQuery: Codable, Sendable {
    package var q: String
    package var state: SearchState?

    /// No text, any state: everything.
    package init(q: String = "", state: SearchState? = nil) { (self.q, self.state) = (q, state) }
}

/// `/api/runs`: a page of the runs a search finds, newest start first.
package struct RunsData: Codable, Sendable {
    var now: Instant
    var job: String?
    var outcome: String?
    var since: Instant?
    var until: Instant?
    var runs: [RunRow]
    var page: PageInfo
}

/// `/api/jobs/TEMPLATE/instances`: a page of a template's instances a search finds, and
/// nothing else of the template's page (whose other facts read every pending request): what a
/// client paging through a million instances asks.
package struct InstancesData: Codable, Sendable {
    var template: String
    var search: SearchQuery
    var instances: [InstanceRecord]
    var page: PageInfo
}

extension Views {
    /// Results a page of the jobs list holds, and of a template's instances.
    package static let jobsPageSize = 100
    package static let instancesPageSize = 50
    /// The failing instances a template's page lists before its list (`?state=failing` pages them all).
    static let failingShown = 50
    package static let runsPageSize = 50

    /// Whether a job's row is in `state`: its facts as the row shows them, a template's for
    /// its instances (`SearchState`'s definition: a pending request, a run without an end, a
    /// failure streak above zero, a pause of its own or its template's).
    static func row(_ row: JobRow, isIn state: SearchState) -> Bool {
        switch state {
        case .pending: row.next != nil || (row.instances?.pending ?? 0) > 0
        case .running: row.running != nil || (row.instances?.running ?? 0) > 0
        case .failing: row.retryStreak > 0 || (row.instances?.failing ?? 0) > 0
        case .paused: row.paused != nil
        }
    }

    /// A page of the jobs' rows (in identifier order) that match the query.
    package static func searchJobs(_ rows: [JobRow], _ query: SearchQuery, cursor: SearchCursor<String>?, limit: Int) -> SearchPage<JobRow> {
        let matches = rows.filter { row in
            (query.q.isEmpty || row.identifier.localizedCaseInsensitiveContains(query.q)) && (query.state.map { Self.row(row, isIn: $0) } ?? true)
        }.sorted { $0.identifier.utf8.lexicographicallyPrecedes($1.identifier.utf8) }
        let precedes = { (a: String, b: String) in a.utf8.lexicographicallyPrecedes(b.utf8) }
        return SearchPage.of(matches, cursor: cursor, limit: limit,
                             precedes: { precedes($0.identifier, $1) }, follows: { precedes($1, $0.identifier) })
    }
}

extension Pages {
    /// A GET form (it works without JavaScript); its fields keep their `id`s, so a live update
    /// morphs around them and leaves what is typed and the focus alone.
    static func searchForm(_ id: String, action: String, _ query: SearchQuery, textLabel: String, keys: Bool) -> HTML {
        let options = HTML.join([HTML("<option value=\"\">any state</option>")] + SearchState.allCases.map { s in
            HTML("<option value=\"\(s.rawValue)\"\(query.state == s ? " selected" : "")>\(s.rawValue)</option>")
        })
        let pattern: HTML = keys ? " pattern=\"[A-Za-z0-9._@\\-]{0,128}\"" : ""
        return """
            <form class="search" id="\(id)-form" method="get" action="\(action)" role="search"><label>\(textLabel) <input type="search" id="\(id)-q" name="q" value="\(query.q)" size="18" maxlength="128"\(pattern) autocomplete="off"></label> <label>state <select id="\(id)-state" name="state">\(options)</select></label> <button type="submit">Search</button>\(query.q.isEmpty && query.state == nil ? "" : HTML(" <a href=\"\(action)\">clear</a>"))</form>
            """
    }

    /// "201-250 of 12,345" with the links to the pages beside it (`base` ends in `?...&` or `?`).
    static func pager(_ id: String, _ page: PageInfo, base: String, beforeName: String = "before", fragment: String = "") -> HTML {
        let previous: HTML = page.previous.map { HTML("<a rel=\"prev\" href=\"\(base)\(beforeName)=\(HTML.segment($0))\(fragment)\">← Previous</a>") }
            ?? "<span class=\"muted\">← Previous</span>"
        let next: HTML = page.next.map { HTML("<a rel=\"next\" href=\"\(base)after=\(HTML.segment($0))\(fragment)\">Next →</a>") }
            ?? "<span class=\"muted\">Next →</span>"
        return "<p class=\"pager\" id=\"\(id)-pager\">\(previous) <span class=\"position\">\(page.words)</span> \(next)</p>"
    }

    /// A query string of the search's fields, ready for a cursor (`?q=..&state=..&`).
    static func queryBase(_ path: String, _ fields: [(String, String?)]) -> String {
        let parts = fields.compactMap { name, value in value.flatMap { $0.isEmpty ? nil : name + "=" + HTML.segment($0) } }
        return path + "?" + parts.map { $0 + "&" }.joined()
    }

    package static func runs(_ d: RunsData) -> HTML {
        let options = HTML.join([HTML("<option value=\"\">any outcome</option>")] + RunSearch.endingNames.map { name in
            HTML("<option value=\"\(name)\"\(d.outcome == name ? " selected" : "")>\(name == "failed" ? "failed (any but success)" : name)</option>")
        })
        let form: HTML = """
            <form class="search" id="runs-form" method="get" action="/runs" role="search"><label>job <input type="search" id="runs-job" name="job" value="\(d.job)" size="22" maxlength="512" autocomplete="off"></label> <label>outcome <select id="runs-outcome" name="outcome">\(options)</select></label> <label>since <input id="runs-since" name="since" value="\(d.since?.iso8601)" size="20" placeholder="2026-12-01T00:00Z"></label> <label>until <input id="runs-until" name="until" value="\(d.until?.iso8601)" size="20" placeholder="now"></label> <button type="submit">Search</button></form>
            """
        let rows = d.runs.isEmpty ? "<p class=\"muted\">No run matches.</p>" : HTML("""
            <div class="table"><table class="runs"><tr><th>run</th><th>job</th><th>started</th><th>outcome</th><th>took</th></tr>\(d.runs.map { row in
                let r = row.run
                return HTML("<tr class=\"run-row\"><td>\(runLink(r))</td><td>\(jobLink(r.identifier))</td><td>\(Words.time(r.started))</td><td>\(outcome(r.outcome))</td><td>\(row.durationMilliseconds.map(Words.milliseconds) ?? "")</td></tr>")
            })</table></div>
            """)
        let base = queryBase("/runs", [("job", d.job), ("outcome", d.outcome), ("since", d.since?.iso8601), ("until", d.until?.iso8601)])
        let api = queryBase("/api/runs", [("job", d.job), ("outcome", d.outcome), ("since", d.since?.iso8601), ("until", d.until?.iso8601)])
        return layout("Runs", active: "/runs", api: String(api.dropLast()), """
            <h1>Runs</h1>
            <section>\(form)\(pager("runs", d.page, base: base))\(rows)</section>
            """)
    }
}
