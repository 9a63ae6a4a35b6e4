import Foundation
import Testing

/// Issue 33: `ctl pause` and `ctl resume` against a real `refreshd run`, and a pause that
/// survives a kill -9 of the daemon (it is a committed record, restored at the next start).
@Suite(.serialized) struct PauseDaemonTests {
    static let beat = """
        identifier: test.beat
        kind: processing
        command: ["/bin/true"]
        resubmit: {after: 1s}
        """

    /// The newest run's id in the state (0: none yet).
    func lastRunID(_ box: Sandbox) -> Int {
        ((box.status()?["runs"] as? [[String: Any]])?.first?["runID"] as? Int) ?? 0
    }

    func json(_ text: String) -> [String: Any]? {
        try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
    }

    @Test func aPauseSurvivesKillNineAndResumeRunsAgain() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("beat.yaml", Self.beat)
        let first = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { first.cleanUp() }
        #expect(waitFor { first.errors().contains("refreshd started") && lastRunID(box) >= 1 })

        let pause = try CLI.run(["ctl", "pause", "test.beat", "--state", box.state])
        #expect(pause.status == 0, "\(pause.stdout)\(pause.stderr)")
        #expect(pause.stdout.hasPrefix("paused test.beat: nothing of it launches until refreshd ctl resume test.beat"), "\(pause.stdout)")
        let again = try CLI.run(["ctl", "pause", "test.beat", "--state", box.state, "--json"])
        #expect(again.status == 1)
        #expect(((json(again.stdout)?["error"] as? [String: Any])?["code"] as? String) == "already-paused")
        // A run in flight at the pause ends on its own; after it, nothing launches.
        usleep(500_000)
        let paused = lastRunID(box)
        usleep(2_500_000)
        #expect(lastRunID(box) == paused, "a 1 s job kept launching while paused")

        // kill -9: the pause was committed, so the restarted refreshd holds it.
        first.signal(SIGKILL)
        first.wait()
        let metrics = box.root + "/metrics.prom"
        let second = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state, "--metrics-file", metrics])
        defer { second.cleanUp() }
        #expect(waitFor { second.errors().contains("refreshd started") })
        usleep(2_500_000)
        #expect(lastRunID(box) == paused, "launched after the restart although paused")
        let status = try CLI.run(["status", "--state", box.state])
        #expect(status.stdout.contains("Paused (1): nothing of these launches until refreshd ctl resume ID\n  test.beat  since "), "\(status.stdout)")
        let statusJSON = json(try CLI.run(["status", "--state", box.state, "--json"]).stdout)
        #expect((statusJSON?["paused"] as? [[String: Any]])?.compactMap { $0["identifier"] as? String } == ["test.beat"])
        let why = json(try CLI.run(["why", "test.beat", "--state", box.state, "--json"]).stdout)
        #expect((why?["reasons"] as? [String])?.first == "paused", "\(String(describing: why))")
        #expect((why?["paragraph"] as? String)?.contains("test.beat is paused since ") == true)
        func metric() -> String? {
            (try? String(contentsOfFile: metrics, encoding: .utf8))?.split(separator: "\n")
                .first { $0.hasPrefix("refreshd_paused{job=\"test.beat\"} ") }.map(String.init)
        }
        #expect(metric()?.hasSuffix(" 1") == true || metric()?.hasSuffix(" 1.0") == true, "\(metric() ?? "no refreshd_paused")")
        let run = try CLI.run(["ctl", "simulate-launch", "test.beat", "--state", box.state, "--json"])
        #expect(((json(run.stdout)?["error"] as? [String: Any])?["code"] as? String) == "paused")

        let resume = try CLI.run(["ctl", "resume", "test.beat", "--state", box.state])
        #expect(resume.status == 0 && resume.stdout.hasPrefix("resumed test.beat"), "\(resume.stdout)\(resume.stderr)")
        #expect(waitFor { lastRunID(box) > paused + 1 }, "it runs again once resumed")
        #expect(second.errors().contains("resumed test.beat after "))
        #expect(waitFor { metric()?.hasSuffix(" 0") == true || metric()?.hasSuffix(" 0.0") == true }, "\(metric() ?? "no refreshd_paused")")
        let notPaused = try CLI.run(["ctl", "resume", "test.beat", "--state", box.state, "--json"])
        #expect(((json(notPaused.stdout)?["error"] as? [String: Any])?["code"] as? String) == "not-paused")
        second.signal(SIGTERM)
        #expect(second.wait() == 0)
        // Stopped: the saved state says nothing is paused.
        #expect((box.status()?["paused"] as? [[String: Any]])?.isEmpty == true)
    }
}
