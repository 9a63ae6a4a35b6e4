import Foundation
import RefreshdTestSupport
import Testing

/// Issue 33: the Failures page and its Retry now, one and in bulk, against a real
/// `refreshd run --http` with a token: a job retrying (its next attempt), a job and a
/// template's instance with retries exhausted, a run that expired, a notification held.
@Suite(.serialized) struct FailuresPageTests {
    static let token = "failures-token-0123456789"

    /// Fails, with a retry an hour later (at most 3).
    static let flaky = """
        identifier: web.flaky
        kind: processing
        command: ["sh", "-c", "exit 4"]
        earliest: +1s
        allowance: 10s
        retry: {initial: 1h, limit: 3}
        """

    /// Overruns its 1 s allowance: expired (a failure; no retry policy, so exhausted at once).
    static let slow = """
        identifier: web.slow
        kind: processing
        command: ["sleep", "30"]
        earliest: +1s
        allowance: 1s
        grace: 1s
        """

    static func json(_ text: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(HTTP.body(text).utf8)) as? [String: Any]) ?? [:]
    }

    static func identifiers(_ failures: [String: Any], _ list: String) -> [String] {
        (failures[list] as? [[String: Any]] ?? []).compactMap { $0["identifier"] as? String }
    }

    @Test func failuresAreListedAndRetriedOneAndInBulk() throws {
        let project = Project()
        defer { project.remove() }
        try project.write("Jobs/flaky.yaml", Self.flaky)
        try project.write("Jobs/slow.yaml", Self.slow)
        try project.write("Jobs/failing.yaml", Fixture.failing + "\non-failure: {webhook: \"http://127.0.0.1:9/hook\", timeout: 1s}\n")
        try project.write("Jobs/feed.yaml", Fixture.template)
        try project.write("token", Self.token + "\n", mode: 0o600)
        let daemon = try Daemon(["run", "--jobs", project.jobs, "--state", project.state,
                                 "--http", "127.0.0.1:0", "--http-token-file", project.root + "/token"])
        defer { daemon.cleanUp() }
        let port = try #require(daemon.dashboardPort(), "\(daemon.errors())")
        for key in ["alice", "bob"] {
            let added = try Daemon.run(["ctl", "instance", "add", "web.feed", key, "--state", project.state])
            #expect(added.0 == 0, "\(added.1)")
        }
        var failures: [String: Any] = [:]
        #expect(waitFor(timeout: 20) {
            failures = Self.json(HTTP.request(port, "/api/failures").text)
            return Self.identifiers(failures, "retrying") == ["web.flaky"]
                && Set(Self.identifiers(failures, "exhausted")) == ["web.failing", "web.feed[bob]", "web.slow"]
                && (failures["expiredOrCrashed"] as? [[String: Any]] ?? []).contains { $0["identifier"] as? String == "web.slow" }
                && !((failures["notifications"] as? [String: Any])?["held"] as? [Any] ?? []).isEmpty
        }, "\(failures)\n\(daemon.errors())")
        // The retry has its next attempt; nothing retries the others.
        let flaky = try #require((failures["retrying"] as? [[String: Any]])?.first)
        #expect(flaky["retryStreak"] as? Int == 1 && flaky["next"] != nil, "\(flaky)")

        let page = HTTP.request(port, "/failures").text
        #expect(page.contains("<h2>Retrying (1)</h2>") && page.contains("<h2>Retries exhausted (3)</h2>"), "\(page)")
        #expect(page.contains("<form class=\"action\" method=\"post\" action=\"/api/jobs/web.flaky/run\"><button type=\"submit\">Retry now</button></form>"))
        #expect(page.contains("action=\"/api/jobs/web.feed%5Bbob%5D/run\""), "an instance's Retry now")
        #expect(page.contains("action=\"/api/failures/retry?list=exhausted\" data-confirm=\"Retry all 3 exhausted jobs now? Each gets a request due now.\""))
        #expect(page.contains("<tr class=\"broken-run\"") && page.contains(">web.slow</a>"))
        #expect(page.contains("<a href=\"/failures\" aria-current=\"page\">Failures</a>"))

        // Retry now, one: the control server's submit; the job runs again and fails again.
        let bearer = ["Authorization: Bearer \(Self.token)"]
        let one = HTTP.request(port, "/api/jobs/web.flaky/run", method: "POST", headers: bearer)
        #expect(one.status == 200 && (Self.json(one.text)["message"] as? String)?.hasPrefix("submitted web.flaky earliest ") == true, "\(one.text)")
        #expect(waitFor(timeout: 10) {
            let row = (Self.json(HTTP.request(port, "/api/failures").text)["retrying"] as? [[String: Any]])?.first
            return row?["retryStreak"] as? Int == 2
        }, "web.flaky did not run again")

        // In bulk: refused without the token; with it, each exhausted one is submitted.
        #expect(HTTP.request(port, "/api/failures/retry?list=exhausted", method: "POST").status == 401)
        #expect(HTTP.request(port, "/api/failures/retry?list=some", method: "POST", headers: bearer).status == 400)
        let bulk = HTTP.request(port, "/api/failures/retry?list=exhausted", method: "POST", headers: bearer)
        #expect(bulk.status == 200 && Self.json(bulk.text)["message"] as? String == "submitted 3 of 3 now", "\(bulk.text)")
        #expect(waitFor(timeout: 10) {
            let rows = Self.json(HTTP.request(port, "/api/failures").text)["exhausted"] as? [[String: Any]] ?? []
            return rows.count == 3 && rows.allSatisfy { $0["retryStreak"] as? Int == 2 }
        }, "the exhausted ones did not run again")
        let named = HTTP.request(port, "/api/failures/retry?id=web.failing&id=web.nope", method: "POST", headers: bearer)
        #expect(named.status == 409, "\(named.text)")
        let error = Self.json(named.text)["error"] as? [String: Any]
        #expect(error?["code"] as? String == "not-declared" && (error?["message"] as? String)?.hasPrefix("submitted 1 of 2 now; refused 1: web.nope: ") == true, "\(named.text)")
    }

    /// Fails for the keys that start with `bad`.
    static let many = """
        identifier: web.many
        kind: processing
        template: true
        parameters: [user]
        command: ["sh", "-c", "case {user} in bad*) exit 5;; esac"]
        allowance: 10s
        resubmit: {after: 1h}
        """

    /// Templates folded (issue 33, item 6): a template of 300 instances, 60 failing, is one row
    /// with its counts (the stores', as the other pages'), its first 50 failing instances
    /// listed in key order and the other 10 counted as not listed; nothing read is every
    /// instance or request (`StoredFailures`).
    @Test func aTemplateOfManyInstancesIsOneRowAndItsFirstFailing() throws {
        let project = Project()
        defer { project.remove() }
        try project.write("Jobs/many.yaml", Self.many)
        let daemon = try Daemon(["run", "--jobs", project.jobs, "--state", project.state, "--http", "127.0.0.1:0"])
        defer { daemon.cleanUp() }
        let port = try #require(daemon.dashboardPort(), "\(daemon.errors())")
        let bad = (0..<60).map { String(format: "bad%02d", $0) }
        let keys = (0..<240).map { String(format: "u%03d", $0) } + bad
        let added = try Daemon.run(["ctl", "instance", "add", "web.many"] + keys + ["--state", project.state])
        #expect(added.0 == 0, "\(added.1)")
        var failures: [String: Any] = [:]
        let counts: [String: Int] = ["count": 300, "pending": 300, "running": 0, "failing": 60, "paused": 0]
        #expect(waitFor(timeout: 90) {
            failures = Self.json(HTTP.request(port, "/api/failures").text)
            return (failures["templates"] as? [[String: Any]])?.first?["instances"] as? [String: Int] == counts
        }, "\(failures)\n\(daemon.errors())")
        let templates = try #require(failures["templates"] as? [[String: Any]])
        #expect(templates.count == 1 && templates[0]["identifier"] as? String == "web.many" && templates[0]["listed"] as? Int == 50,
                "\(templates)")
        // No retry policy: exhausted, the first 50 failing by key, each with its streak and next run.
        let exhausted = failures["exhausted"] as? [[String: Any]] ?? []
        #expect(Self.identifiers(failures, "exhausted") == bad.prefix(50).map { "web.many[\($0)]" }, "\(exhausted)")
        #expect(exhausted.allSatisfy { $0["retryStreak"] as? Int == 1 && $0["next"] != nil
                && ($0["lastRun"] as? [String: Any])?["outcome"] as? String == "failure" }, "\(exhausted)")
        #expect(Self.identifiers(failures, "retrying").isEmpty && failures["more"] as? Int == 10, "\(failures)")

        let page = HTTP.request(port, "/failures").text
        #expect(page.contains("<tr class=\"failing-template\" id=\"template-web.many\" data-job=\"web.many\"><td><a href=\"/jobs/web.many\">web.many</a></td>")
                && page.contains("<td>50 of 60 <a href=\"/jobs/web.many?state=failing#instances\">all failing</a></td>")
                && page.contains("<h2>Retries exhausted (50)</h2>") && page.contains("(10 more failing not listed)"), "\(page)")
        #expect(daemon.wait(timeout: 0.1) == nil, "refreshd exited: \(daemon.errors())")
    }
}
