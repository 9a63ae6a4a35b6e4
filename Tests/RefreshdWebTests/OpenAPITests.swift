import Foundation
import RefreshdTestSupport
import Testing

/// The JSON API against its OpenAPI document (`/api/openapi.json`), on a real
/// `refreshd run --http` with a token: real responses of every endpoint validated with
/// jsonschema (`Tests/Browser/api_check.py`), then a bounded schemathesis fuzz of every operation
/// but the event stream and the simulation (actions included, with the token) while a 1 s job runs; the job's launches during the fuzz
/// must stay on time (p99 lateness, printed). The Python tools come from the venv
/// `Scripts/bootstrap` makes (`.build/python-tools`, pinned).
@Suite(.serialized) struct OpenAPITests {
    static let token = "openapi-token-0123456789"
    static var python: String { DashboardBrowserTests.repository + "/.build/python-tools/bin/python" }
    static var schemathesis: String { DashboardBrowserTests.repository + "/.build/python-tools/bin/schemathesis" }

    /// A tick job (every second), a failing job whose webhook receiver is down (its
    /// notification is held and retried), a template with instances (one failing), a widget.
    static func project() throws -> Project {
        let project = Project()
        try project.write("Jobs/tick.yaml", Fixture.tick)
        try project.write("Jobs/failing.yaml", Fixture.failing + "\non-failure: {webhook: \"http://127.0.0.1:9/hook\", timeout: 1s}\n")
        try project.write("Jobs/feed.yaml", Fixture.template)
        try project.write("provider.sh", Fixture.provider(rendition: "pictures/check.png"), mode: 0o755)
        try project.write("Jobs/picture.yaml", Fixture.widgetJob(project.root + "/provider.sh"))
        try project.write("token", token + "\n", mode: 0o600)
        return project
    }

    @Test func realResponsesMatchTheDocumentAndAFuzzLeavesTheSchedulerOnTime() throws {
        guard FileManager.default.isExecutableFile(atPath: Self.python), FileManager.default.isExecutableFile(atPath: Self.schemathesis) else {
            Issue.record("\(Self.python) or schemathesis is missing: run Scripts/bootstrap (it makes .build/python-tools)")
            return
        }
        let project = try Self.project()
        defer { project.remove() }
        let daemon = try Daemon(["run", "--jobs", project.jobs, "--state", project.state,
                                 "--http", "127.0.0.1:0", "--http-token-file", project.root + "/token"])
        defer { daemon.cleanUp() }
        let port = try #require(daemon.dashboardPort(), "\(daemon.errors())")
        for key in ["alice", "bob", "carol"] {
            let added = try Daemon.run(["ctl", "instance", "add", "web.feed", key, "--state", project.state])
            #expect(added.0 == 0, "\(added.1)")
        }
        // The failing job's notification is held (its receiver is down), and bob has failed.
        #expect(waitFor(timeout: 15) {
            let overview = HTTP.body(HTTP.request(port, "/api/overview").text)
            return overview.contains("\"notifier\":\"webhook http://127.0.0.1:9/hook\"") && overview.contains("web.feed[bob]")
        }, "\(daemon.errors())")

        let targets = [
            "GET /api/overview", "GET /api/jobs", "GET /api/jobs/web.tick", "GET /api/jobs/web.failing",
            "GET /api/jobs/web.feed", "GET /api/jobs/web.feed?after=alice", "GET /api/jobs/web.feed%5Bbob%5D",
            "GET /api/jobs/web.tick?before=1", "GET /api/widgets", "GET /api/activities", "GET /api/cluster", "GET /api/simulate?days=1",
            "GET /api/simulate?days=2&seed=7&start=2026-12-01T00:00:00Z", "GET /healthz",
            // Refusals: documented statuses with the error shape.
            "GET /api/jobs/nope", "GET /api/jobs/web.tick?before=0", "GET /api/jobs/web.feed?after=zed",
            "GET /api/simulate?days=99", "GET /api/simulate?days=2&start=yesterday",
            "POST /api/jobs/web.tick/run", "POST? /api/jobs/web.tick/run",
            // Actions with the token.
            "POST! /api/jobs/web.tick/run", "POST! /api/jobs/web.feed/instances?key=dave",
            "POST! /api/jobs/web.feed/instances/dave/remove", "POST! /api/jobs/web.feed/instances/nobody/remove",
            "POST! /api/jobs/web.feed/instances?key=bad%20key", "POST! /api/jobs/nope/cancel", "POST! /api/widgets/picture/reload",
            // Issue 33: a template paused (its rows and its instances' say so), refused twice, resumed.
            "POST! /api/jobs/web.feed/pause", "GET /api/jobs", "GET /api/jobs/web.feed", "GET /api/jobs/web.feed%5Balice%5D",
            "POST? /api/jobs/web.feed/pause", "POST! /api/jobs/web.feed/resume", "POST! /api/jobs/web.feed/resume",
            // The Failures page's facts and its bulk retry (issue 33).
            "GET /api/failures", "POST! /api/failures/retry?list=all",
            // Search and filter (issue 33, item 5): pages with their position, refusals 400.
            "GET /api/jobs?q=feed&state=failing", "GET /api/jobs/web.feed?q=bo&state=failing", "GET /api/jobs/web.feed?beforeKey=carol",
            "GET /api/runs", "GET /api/runs?job=web.failing&outcome=failed&since=2026-01-01T00:00:00Z", "GET /api/runs?outcome=bogus",
            "GET /api/jobs?state=nope", "GET /api/jobs/web.feed/instances?q=o&state=failing", "GET /api/jobs/web.tick/instances",
            "GET /api/jobs/web.feed/instances?after=alice", "POST! /api/failures/retry?id=web.failing&id=nope",
            "POST! /api/failures/retry?list=bogus", "POST /api/failures/retry?list=all",
            // The replay (issue 34): alone without the token; a what-if folder with it (its own
            // jobs folder: no what-if column), refused without it or outside the allowed place.
            "GET /api/replay?from=1h", "GET /api/replay?from=nope", "GET /api/replay?from=1h&jobs=Jobs",
            "GET! /api/replay?from=1h&jobs=Jobs", "GET! /api/replay?from=1h&jobs=../etc",
        ]
        let output = project.root + "/api.json"
        let status = try DashboardBrowserTests.shell([Self.python, DashboardBrowserTests.repository + "/Tests/Browser/api_check.py",
                                                      "http://127.0.0.1:\(port)", Self.token, Self.schemathesis, "8"] + targets,
                                                     output: output, timeout: 180)
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        let errors = (try? String(contentsOfFile: output + ".err", encoding: .utf8)) ?? ""
        let parsed = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
        let result = try #require(parsed, "api_check said: \(text) \(errors)")
        #expect(status == 0, "\(text)")
        #expect(result["openapi"] as? String == "3.1.0")
        #expect(result["documentValid"] as? Bool == true, "\(result["errors"] ?? "")")
        let checked = result["checked"] as? [[String: Any]] ?? []
        #expect(checked.count == targets.count)
        let statuses = Dictionary(checked.map { ($0["target"] as? String ?? "", $0["status"] as? Int ?? 0) }, uniquingKeysWith: { a, _ in a })
        #expect(statuses["GET /api/jobs/nope"] == 404 && statuses["GET /api/simulate?days=99"] == 400, "\(statuses)")
        // One machine has no cluster: the documented 404, in the error shape.
        #expect(statuses["GET /api/cluster"] == 404, "\(statuses)")
        #expect(statuses["POST /api/jobs/web.tick/run"] == 401 && statuses["POST? /api/jobs/web.tick/run"] == 403, "\(statuses)")
        #expect(statuses["POST! /api/jobs/web.feed/instances?key=dave"] == 200, "\(statuses)")
        #expect(statuses["POST! /api/jobs/web.feed/instances/nobody/remove"] == 404, "\(statuses)")
        #expect(statuses["POST! /api/jobs/web.feed/instances?key=bad%20key"] == 400, "\(statuses)")
        #expect(statuses["POST! /api/failures/retry?list=all"] == 200 && statuses["POST! /api/failures/retry?id=web.failing&id=nope"] == 409
                && statuses["POST! /api/failures/retry?list=bogus"] == 400 && statuses["POST /api/failures/retry?list=all"] == 401, "\(statuses)")
        #expect(statuses["GET /api/runs"] == 200 && statuses["GET /api/runs?outcome=bogus"] == 400 && statuses["GET /api/jobs?state=nope"] == 400
                && statuses["GET /api/jobs/web.feed?q=bo&state=failing"] == 200 && statuses["GET /api/jobs/web.feed/instances?q=o&state=failing"] == 200
                && statuses["GET /api/jobs/web.tick/instances"] == 404, "\(statuses)")
        #expect(statuses["GET /api/replay?from=1h"] == 200 && statuses["GET /api/replay?from=nope"] == 400
                && statuses["GET /api/replay?from=1h&jobs=Jobs"] == 401 && statuses["GET! /api/replay?from=1h&jobs=Jobs"] == 200
                && statuses["GET! /api/replay?from=1h&jobs=../etc"] == 400, "\(statuses)")
        #expect(statuses["POST! /api/jobs/web.feed/pause"] == 200 && statuses["POST? /api/jobs/web.feed/pause"] == 403, "\(statuses)")
        // The second resume finds nothing paused: refused, 409, in the error shape.
        #expect(checked.filter { $0["target"] as? String == "POST! /api/jobs/web.feed/resume" }.compactMap { $0["status"] as? Int } == [200, 409],
                "\(checked)")
        // Every real response is one the document lists, in the shape it gives.
        #expect((result["errors"] as? [String])?.isEmpty == true, "\((result["errors"] as? [String] ?? []).joined(separator: "\n"))")

        // The fuzz ran (bounded) and found nothing.
        let fuzz = result["fuzz"] as? [String: Any] ?? [:]
        let tail = fuzz["tail"] as? String ?? ""
        #expect(fuzz["exit"] as? Int == 0, "schemathesis: \(tail)")
        let seconds = fuzz["seconds"] as? Double ?? 999
        #expect(seconds < 60, "the fuzz took \(seconds) s")

        // The 1 s job during the fuzz: every launch's lateness, p99 printed and bounded.
        let from = Int64((fuzz["started"] as? Double ?? 0) * 1000), to = Int64((fuzz["ended"] as? Double ?? 0) * 1000)
        var lateness: [Int64] = []
        var before: Int64?
        pages: for _ in 0..<20 {
            let page = HTTP.body(HTTP.request(port, "/api/jobs/web.tick" + (before.map { "?before=\($0)" } ?? "")).text)
            guard let object = (try? JSONSerialization.jsonObject(with: Data(page.utf8))) as? [String: Any] else { break }
            for row in object["runs"] as? [[String: Any]] ?? [] {
                guard let run = row["run"] as? [String: Any], let started = HostileRequestTests.milliseconds(run, "started"),
                      let earliest = HostileRequestTests.milliseconds(run, "earliest") else { continue }
                if started < from { break pages }
                if started <= to { lateness.append(started - earliest) }
            }
            guard let next = object["nextBefore"] as? Int64 ?? (object["nextBefore"] as? Int).map(Int64.init) else { break }
            before = next
        }
        lateness.sort()
        let p99 = lateness.isEmpty ? -1 : lateness[min(lateness.count - 1, Int((Double(lateness.count) * 0.99).rounded(.up)) - 1)]
        print("OpenAPITests: fuzz \(seconds) s, \(lateness.count) launches of the 1 s job during it, lateness p50 \(lateness.isEmpty ? -1 : lateness[lateness.count / 2]) ms, p99 \(p99) ms, max \(lateness.last ?? -1) ms")
        #expect(lateness.count >= 3, "\(lateness.count) launches during \(seconds) s")
        #expect(p99 >= 0 && p99 < 500, "p99 lateness \(p99) ms during the fuzz")
        #expect(daemon.wait(timeout: 0.1) == nil, "refreshd exited: \(daemon.errors())")
    }
}
