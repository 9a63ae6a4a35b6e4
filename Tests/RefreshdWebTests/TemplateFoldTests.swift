import Foundation
import RefreshdTestSupport
import Testing

/// Issue 33, item 6: a template is one row everywhere, its instances counted by the store (how
/// many, pending, running, failing, paused), against a real `refreshd run --http`: the overview's
/// row, the jobs list's, the template's page (the failing instances first, each listed instance
/// with its state) and the instance's page with its filled command. The live facts hold only
/// failing and paused instances' requests, yet `/healthz` counts every pending request.
@Suite(.serialized) struct TemplateFoldTests {
    static func json(_ port: Int, _ target: String) -> [String: Any] { SearchPageTests.json(port, target) }

    @Test func aTemplateIsOneRowWithItsCounts() throws {
        let project = Project()
        defer { project.remove() }
        try project.write("Jobs/feed.yaml", Fixture.template)
        let daemon = try Daemon(["run", "--jobs", project.jobs, "--state", project.state, "--http", "127.0.0.1:0"])
        defer { daemon.cleanUp() }
        let port = try #require(daemon.dashboardPort(), "\(daemon.errors())")
        let keys = ["alice", "bob", "carol"] + (0..<40).map { "user\($0)" }
        let added = try Daemon.run(["ctl", "instance", "add", "web.feed"] + keys + ["--state", project.state])
        #expect(added.0 == 0, "\(added.1)")
        let paused = try Daemon.run(["ctl", "pause", "web.feed[carol]", "--state", project.state])
        #expect(paused.0 == 0, "\(paused.1)")
        // Every instance ran once (bob failed) and waits an hour for its next run.
        let expected: [String: Int] = ["count": 43, "pending": 43, "running": 0, "failing": 1, "paused": 1]
        func counts() -> [String: Int] {
            ((Self.json(port, "/api/jobs/web.feed")["template"] as? [String: Any])?["counts"] as? [String: Int]) ?? [:]
        }
        #expect(waitFor(timeout: 30) { counts() == expected }, "\(counts())")

        // The template's page: the counts, bob first among the failing, each row with its state.
        let page = try #require(Self.json(port, "/api/jobs/web.feed")["template"] as? [String: Any])
        let failing = try #require(page["failing"] as? [[String: Any]])
        #expect(failing.count == 1 && failing[0]["identifier"] as? String == "web.feed[bob]" && failing[0]["retryStreak"] as? Int == 1
                && failing[0]["lastOutcome"] as? String == "failure", "\(failing)")
        let rows = try #require(page["instances"] as? [[String: Any]])
        let bob = try #require(rows.first { $0["key"] as? String == "bob" })
        #expect(bob["retryStreak"] as? Int == 1 && bob["next"] != nil && (bob["lastRun"] as? [String: Any])?["outcome"] as? String == "failure", "\(bob)")
        #expect(rows.first { $0["key"] as? String == "carol" }?["paused"] as? Bool == true)
        #expect(rows.first { $0["key"] as? String == "alice" }?["paused"] as? Bool == false)
        let html = HTTP.request(port, "/jobs/web.feed").text
        #expect(html.contains("<td class=\"n failing\"><a href=\"/jobs/web.feed?state=failing#instances\"><span class=\"outcome failure\">1</span></a></td>")
                && html.contains("<th>next</th><th>last run</th><th>retry streak</th>"), "\(html)")
        #expect(html.range(of: "failing-instance")!.lowerBound < html.range(of: "<h3>The list</h3>")!.lowerBound)

        // The overview and the jobs list: one row for the template, the same counts.
        let overview = Self.json(port, "/api/overview")
        let templates = try #require(overview["templates"] as? [[String: Any]])
        #expect(templates.count == 1 && templates[0]["instances"] as? [String: Int] == expected && templates[0]["longestStreak"] as? Int == 1,
                "\(templates)")
        #expect((overview["next"] as? [[String: Any]] ?? []).allSatisfy { !(($0["identifier"] as? String) ?? "").hasPrefix("web.feed[") })
        let jobs = try #require(Self.json(port, "/api/jobs")["jobs"] as? [[String: Any]])
        #expect(jobs.count == 1 && jobs[0]["instances"] as? [String: Int] == expected, "\(jobs)")
        #expect(HTTP.request(port, "/").text.contains("<tr class=\"template\"><td><a href=\"/jobs/web.feed\">web.feed</a></td>"))

        // Every pending request counted, though the live facts hold only bob's and carol's.
        let health = Self.json(port, "/healthz")
        #expect(health["pending"] as? Int == 43, "\(health)")
        let metrics = HTTP.body(HTTP.request(port, "/metrics").text)
        #expect(metrics.contains("\nrefreshd_pending_requests 43.0\n"), "\(metrics)")

        // An instance's page: its own pending request (asked for), its filled command.
        let alice = Self.json(port, "/api/jobs/web.feed%5Balice%5D")
        #expect((alice["command"] as? [String])?.suffix(2) == ["-c", "echo feed for alice; test alice != bob"], "\(alice)")
        #expect((alice["job"] as? [String: Any])?["next"] != nil, "\(alice)")
        #expect(daemon.wait(timeout: 0.1) == nil, "refreshd exited: \(daemon.errors())")
    }
}
