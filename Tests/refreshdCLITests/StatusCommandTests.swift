import Foundation
import Testing

@Suite(.serialized) struct StatusCommandTests {
    @Test func jsonHasPendingAndRunsWithOutcomes() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("ok.yaml", """
            identifier: test.ok
            kind: processing
            command: ["/bin/true"]
            resubmit: {after: 1h}
            """)
        try box.write("fail.yaml", """
            identifier: test.fail
            kind: processing
            command: ["/bin/false"]
            """)
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { daemon.cleanUp() }
        #expect(waitFor { box.runs().count == 2 })
        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)
        let status = try #require(box.status())
        let pending = try #require(status["pending"] as? [[String: Any]])
        #expect(pending.map { $0["identifier"] as? String } == ["test.ok"])
        let outcomes = Dictionary(box.runs().map { ($0.0, $0.1) }, uniquingKeysWith: { a, _ in a })
        #expect(outcomes == ["test.ok": "success", "test.fail": "failure"])
        let text = try CLI.run(["status", "--state", box.state])
        #expect(text.stdout.contains("test.ok  processing  earliest"))
        #expect(text.stdout.contains("failure"))
    }

    @Test func missingStateIsAClearError() throws {
        let r = try CLI.run(["status", "--state", "/nonexistent/refreshd-state"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("/nonexistent/refreshd-state"))
    }
}
