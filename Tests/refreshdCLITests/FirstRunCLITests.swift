import Foundation
import Testing
@_spi(Benchmarks) import RefreshdCore
@_spi(Benchmarks) import RefreshdStore

/// What a new user met (issue 36), each where the user met it: `why` after Ctrl-C and on a job
/// whose runs are old, `calendar`'s errors, `check`'s next elapse on a UTC machine, `watch`
/// without a terminal.
@Suite(.serialized) struct FirstRunCLITests {
    static func json(_ text: String) -> [String: Any]? {
        try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
    }

    /// Ctrl-C during a run: `why` said "It is a retry: backoff after 1 failure in a row". The
    /// interruption is not the job's fault: the attempt runs again at once, no backoff.
    @Test func whyAfterCtrlCSaysTheInterruptedAttemptRunsAgainWithoutBackoff() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("slow.yaml", """
            identifier: test.slow
            kind: processing
            command: ["/bin/sh", "-c", "exec sleep 30"]
            retry: {initial: 10m}
            grace: 1s
            """)
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { daemon.cleanUp() }
        #expect(waitFor { daemon.errors().contains("test.slow[1] started pid") }, "\(daemon.errors())")
        daemon.signal(SIGINT)
        #expect(daemon.wait(timeout: 15) == 0, "\(daemon.errors())")
        #expect(daemon.errors().contains("retry test.slow attempt 1 at"), "\(daemon.errors())")
        let r = try CLI.run(["why", "test.slow", "--state", box.state, "--jobs", box.jobs, "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let report = try #require(Self.json(r.stdout), "\(r.stdout)")
        let paragraph = report["paragraph"] as? String ?? ""
        #expect(!paragraph.contains("backoff after"), "\(paragraph)")
        #expect(paragraph.contains("It runs again the attempt run 1 was, interrupted when refreshd stopped or died"), "\(paragraph)")
        #expect((report["reasons"] as? [String])?.contains("interrupted") == true, "\(report)")
        let status = try #require(box.status())
        #expect((status["pending"] as? [[String: Any]])?.first?["origin"] as? String == "retry")
    }

    /// A job failing 4 times in a row, then 600 runs of a busy job: `why` read "It has not run
    /// yet", its runs being past the 500 latest of all jobs it looked among.
    @Test func whyShowsTheLastRunsOfAJobWhoseRunsAreOld() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("flaky.yaml", "identifier: test.flaky\nkind: processing\ncommand: [\"/bin/false\"]\nretry: {initial: 1h}\n")
        try box.write("busy.yaml", "identifier: test.busy\nkind: processing\ncommand: [\"/bin/true\"]\nresubmit: {after: 1m}\n")
        try FileManager.default.createDirectory(atPath: box.state, withIntermediateDirectories: true)
        chmod(box.state, 0o700)
        let store = try StateStore.open(directory: box.state)
        let t0 = Instant(milliseconds: Int64(Date().timeIntervalSince1970 * 1000) - 86_400_000)
        var changes: [StateChange] = []
        for (n, identifier) in (Array(repeating: "test.flaky", count: 4) + Array(repeating: "test.busy", count: 600)).enumerated() {
            let runID = Int64(n + 1)
            let started = t0 + .seconds(Int64(n) * 60)
            changes.append(.runStarted(RunRecord(runID: runID, identifier: identifier, kind: .processing, submitted: started,
                                                 earliest: started, started: started, deadline: started + .seconds(600),
                                                 attempt: identifier == "test.flaky" ? n + 1 : 1)))
            let failed = identifier == "test.flaky"
            changes.append(.runEnded(runID: runID, identifier: identifier, ended: started + .seconds(1),
                                     outcome: failed ? .failure : .success, exitStatus: failed ? 1 : 0, signal: nil))
        }
        changes.append(.failureStreak(identifier: "test.flaky", count: 4))
        try store.apply(changes)
        store.close()
        let r = try CLI.run(["why", "test.flaky", "--state", box.state, "--jobs", box.jobs])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(!r.stdout.contains("It has not run yet"), "\(r.stdout)")
        #expect(r.stdout.contains("Last runs: run 4 failure"), "\(r.stdout)")
    }
}
