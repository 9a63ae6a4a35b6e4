import Foundation
import RefreshdTestSupport
import Testing

/// Issue 33, item 5: search and filter on the dashboard and its API, against a real `refreshd
/// run --http`: a template's instances by key text and state, paged both ways with their
/// position; the jobs by name and state; the runs by job, outcome and time; GET forms that work
/// without JavaScript; bad queries refused with 400 and why.
@Suite(.serialized) struct SearchPageTests {
    static func json(_ port: Int, _ target: String) -> [String: Any] {
        let text = HTTP.body(HTTP.request(port, target).text)
        return ((try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]) ?? ["unreadable": text]
    }

    static func instanceKeys(_ object: [String: Any]) -> [String] {
        ((object["template"] as? [String: Any])?["instances"] as? [[String: Any]] ?? []).compactMap { $0["key"] as? String }
    }

    static func page(_ object: [String: Any], in part: String? = "template") -> [String: Any] {
        let holder = part.map { object[$0] as? [String: Any] ?? [:] } ?? object
        return holder["page"] as? [String: Any] ?? [:]
    }

    @Test func searchFilterAndPageBothWays() throws {
        let project = Project()
        defer { project.remove() }
        try project.write("Jobs/failing.yaml", Fixture.failing)
        try project.write("Jobs/feed.yaml", Fixture.template)
        let daemon = try Daemon(["run", "--jobs", project.jobs, "--state", project.state, "--http", "127.0.0.1:0"])
        defer { daemon.cleanUp() }
        let port = try #require(daemon.dashboardPort(), "\(daemon.errors())")
        let keys = ["alice", "bob", "carol"] + (0..<120).map { "user\($0)" }
        let added = try Daemon.run(["ctl", "instance", "add", "web.feed"] + keys + ["--state", project.state])
        #expect(added.0 == 0, "\(added.1)")
        // bob fails (the template's command says so); the others succeed.
        #expect(waitFor(timeout: 30) { Self.instanceKeys(Self.json(port, "/api/jobs/web.feed?state=failing")) == ["bob"] },
                "\(Self.json(port, "/api/jobs/web.feed?state=failing"))")

        // Every instance, 50 a page in identifier order (`user10]` before `user1]`), both ways.
        let first = Self.json(port, "/api/jobs/web.feed")
        let firstPage = Self.page(first)
        #expect(firstPage["first"] as? Int == 1 && firstPage["last"] as? Int == 50 && firstPage["total"] as? Int == 123
                && firstPage["previous"] == nil, "\(firstPage)")
        let all = keys.sorted { Array(($0 + "]").utf8).lexicographicallyPrecedes(Array(($1 + "]").utf8)) }
        #expect(Self.instanceKeys(first) == Array(all[0..<50]))
        let next = try #require(firstPage["next"] as? String)
        let second = Self.json(port, "/api/jobs/web.feed?after=\(next)")
        #expect(Self.instanceKeys(second) == Array(all[50..<100]) && Self.page(second)["first"] as? Int == 51)
        let third = Self.json(port, "/api/jobs/web.feed?after=\(try #require(Self.page(second)["next"] as? String))")
        #expect(Self.instanceKeys(third) == Array(all[100...]) && Self.page(third)["next"] == nil
                && Self.page(third)["last"] as? Int == 123, "\(Self.page(third))")
        let back = Self.json(port, "/api/jobs/web.feed?beforeKey=\(try #require(Self.page(third)["previous"] as? String))")
        #expect(Self.instanceKeys(back) == Array(all[50..<100]) && Self.page(back)["first"] as? Int == 51, "\(Self.page(back))")

        // A key's text, with a state: identifier order, the position of what is found.
        let found = Self.json(port, "/api/jobs/web.feed?q=user1")
        #expect(Self.page(found)["total"] as? Int == 31 && Self.instanceKeys(found).allSatisfy { $0.contains("user1") }, "\(Self.page(found))")
        #expect(Self.instanceKeys(Self.json(port, "/api/jobs/web.feed?q=bo&state=failing")) == ["bob"])
        #expect(Self.instanceKeys(Self.json(port, "/api/jobs/web.feed?q=ali&state=failing")).isEmpty)

        // The search alone (`/api/jobs/TEMPLATE/instances`): the same page, without the rest of
        // the template's page; a plain job is no template.
        let alone = Self.json(port, "/api/jobs/web.feed/instances?after=\(next)")
        let aloneKeys = (alone["instances"] as? [[String: Any]] ?? []).compactMap { $0["key"] as? String }
        #expect(aloneKeys == Array(all[50..<100]) && (alone["page"] as? [String: Any])?["first"] as? Int == 51 && alone["template"] as? String == "web.feed",
                "\(alone)")
        #expect(HTTP.request(port, "/api/jobs/web.failing/instances").status == 404)

        // The page: a GET form (no script needed), what was asked kept in its fields, the position.
        let html = HTTP.request(port, "/jobs/web.feed?q=bo&state=failing").text
        #expect(html.contains("<form class=\"search\" id=\"instances-form\" method=\"get\" action=\"/jobs/web.feed#instances\"")
                && html.contains("id=\"instances-q\" name=\"q\" value=\"bo\"") && html.contains("<option value=\"failing\" selected>failing</option>")
                && html.contains("<span class=\"position\">1-1 of 1</span>") && html.contains("web.feed[bob]"), "\(html)")
        let paged = HTTP.request(port, "/jobs/web.feed?after=\(next)").text
        #expect(paged.contains("<span class=\"position\">51-100 of 123</span>") && paged.contains("rel=\"prev\"") && paged.contains("rel=\"next\""))

        // The jobs: by name (any case) and by state, a template by its instances'.
        let jobs = Self.json(port, "/api/jobs?q=FEED")
        #expect((jobs["jobs"] as? [[String: Any]])?.compactMap { $0["identifier"] as? String } == ["web.feed"], "\(jobs)")
        #expect(waitFor(timeout: 15) {
            (Self.json(port, "/api/jobs?state=failing")["jobs"] as? [[String: Any]])?.compactMap { $0["identifier"] as? String } == ["web.failing", "web.feed"]
        }, "\(Self.json(port, "/api/jobs?state=failing"))")
        #expect(HTTP.request(port, "/jobs?state=failing").text.contains("<span class=\"position\">1-2 of 2</span>"))

        // The runs: one instance's failed runs; every run, paged by its cursors.
        let bobs = Self.json(port, "/api/runs?job=web.feed%5Bbob%5D&outcome=failed")
        let bobRuns = (bobs["runs"] as? [[String: Any]] ?? []).compactMap { $0["run"] as? [String: Any] }
        #expect(!bobRuns.isEmpty && bobRuns.allSatisfy { $0["identifier"] as? String == "web.feed[bob]" && $0["outcome"] as? String == "failure" }, "\(bobs)")
        let successes = Self.json(port, "/api/runs?outcome=success")
        #expect((successes["runs"] as? [[String: Any]] ?? []).allSatisfy { ($0["run"] as? [String: Any])?["outcome"] as? String == "success" })
        let runs = Self.json(port, "/api/runs")
        let total = Self.page(runs, in: nil)["total"] as? Int ?? 0
        #expect(total >= 124, "\(Self.page(runs, in: nil))")
        let older = Self.json(port, "/api/runs?after=\(try #require(Self.page(runs, in: nil)["next"] as? String))")
        #expect(Self.page(older, in: nil)["first"] as? Int == 51, "\(Self.page(older, in: nil))")
        let newer = Self.json(port, "/api/runs?before=\(try #require(Self.page(older, in: nil)["previous"] as? String))")
        #expect(Self.page(newer, in: nil)["first"] as? Int == 1 && Self.page(newer, in: nil)["previous"] == nil)
        let window = Self.json(port, "/api/runs?since=2000-01-01T00:00&until=2000-01-02T00:00:00Z")
        #expect(Self.page(window, in: nil)["total"] as? Int == 0, "\(window)")
        #expect(HTTP.request(port, "/runs?outcome=failed").text.contains("<option value=\"failed\" selected>"))

        // Bad queries: 400, saying what is expected.
        for target in ["/api/jobs/web.feed?q=%3Cb%3E", "/api/jobs/web.feed?state=sleeping", "/api/jobs?after=a&before=b",
                       "/api/runs?outcome=bogus", "/api/runs?since=yesterday", "/api/runs?after=nope", "/api/jobs/web.feed?after=bad%20key"] {
            let answer = HTTP.request(port, target)
            #expect(answer.status == 400 && HTTP.body(answer.text).contains("\"code\":\"http-400\""), "\(target): \(answer.text)")
        }
        #expect(daemon.wait(timeout: 0.1) == nil, "refreshd exited: \(daemon.errors())")
    }
}
