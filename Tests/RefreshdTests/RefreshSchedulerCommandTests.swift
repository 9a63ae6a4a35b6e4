import Foundation
import Testing
@testable import Refreshd
import RefreshdCore

/// The shell with real processes at short allowances (tens of milliseconds).
@Suite(.serialized) struct RefreshSchedulerCommandTests {
    func job(_ id: String, _ script: String, allowance: Duration = .seconds(5), grace: Duration = .milliseconds(100),
             retry: RetryPolicy? = nil) -> (TaskDefinition, CommandJob) {
        (TaskDefinition(identifier: id, kind: .processing, allowance: allowance, grace: grace, retry: retry),
         CommandJob(argv: ["/bin/sh", "-c", script]))
    }

    @Test func successAndFailureFromExitStatus() throws {
        let h = try LoopHarness { s in
            let ok = job("t.ok", "echo hello from $REFRESH_TASK_IDENTIFIER run $REFRESH_RUN_ID; exit 0")
            let bad = job("t.bad", "echo oops >&2; exit 3")
            s.register(ok.0, command: ok.1)
            s.register(bad.0, command: bad.1)
        }
        defer { h.removeDirectory() }
        try h.scheduler.submit(TaskRequest(identifier: "t.ok", kind: .processing))
        try h.scheduler.submit(TaskRequest(identifier: "t.bad", kind: .processing))
        h.start()
        #expect(h.wait { h.outcomes()["t.ok"] == [.success] && h.outcomes()["t.bad"] == [.failure] })
        #expect(h.stop())
        #expect(h.lines.contains("t.ok[1] stdout: hello from t.ok run 1"))
        #expect(h.lines.contains("t.bad[2] stderr: oops"))
        #expect(h.runs().first { $0.identifier == "t.bad" }?.exitStatus == 3)
    }

    @Test func expirationKillsAJobThatIgnoresSIGTERMAndItsChild() throws {
        let dir = TempDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let pidFile = dir + "/child.pid"
        let script = "trap '' TERM; sleep 30 & echo $! > \(pidFile); echo $$ >> \(pidFile); wait"
        let h = try LoopHarness(directory: dir) { s in
            let j = job("t.stubborn", script, allowance: .milliseconds(150), grace: .milliseconds(100))
            s.register(j.0, command: j.1)
        }
        try h.scheduler.submit(TaskRequest(identifier: "t.stubborn", kind: .processing))
        h.start()
        #expect(h.wait { h.outcomes()["t.stubborn"] == [.expired] })
        #expect(h.stop())
        let pids = (try String(contentsOfFile: pidFile, encoding: .utf8)).split(separator: "\n").compactMap { Int32($0) }
        #expect(pids.count == 2)
        #expect(h.wait(timeout: 2) { pids.allSatisfy(processIsGone) })
        #expect(h.lines.contains("expired t.stubborn run 1"))
        #expect(h.lines.contains("killed t.stubborn run 1"))
        #expect(h.runs().first?.signal == SIGKILL)
    }

    @Test func leftoverChildIsKilledWhenTheJobExits() throws {
        let dir = TempDirectory.make()
        let pidFile = dir + "/bg.pid"
        let h = try LoopHarness(directory: dir) { s in
            let j = job("t.leaky", "sleep 30 & echo $! > \(pidFile); exit 0")
            s.register(j.0, command: j.1)
        }
        defer { h.removeDirectory() }
        try h.scheduler.submit(TaskRequest(identifier: "t.leaky", kind: .processing))
        h.start()
        #expect(h.wait { h.outcomes()["t.leaky"] == [.success] })
        #expect(h.stop())
        let pid = Int32((try String(contentsOfFile: pidFile, encoding: .utf8)).trimmingCharacters(in: .whitespacesAndNewlines))!
        #expect(h.wait(timeout: 2) { processIsGone(pid) })
    }

    /// Embedded (the scheduler shares its process: the command is moved into its cgroup after
    /// the spawn, no subreaper): a child in a session of its own is still killed at the run's
    /// end, by its cgroup or by the environment sweep, and the log says so.
    @Test func detachedChildIsKilledWhenTheJobExits() throws {
        let dir = TempDirectory.make()
        let pidFile = dir + "/detached.pid"
        let script = "setsid /bin/sh -c 'echo $$ > \(pidFile); exec sleep 30' </dev/null >/dev/null 2>&1 3>&- &"
            + " while [ ! -s \(pidFile) ]; do sleep 0.01; done; exit 0"
        let h = try LoopHarness(directory: dir) { s in
            let j = job("t.detach", script)
            s.register(j.0, command: j.1)
        }
        defer { h.removeDirectory() }
        try h.scheduler.submit(TaskRequest(identifier: "t.detach", kind: .processing))
        h.start()
        #expect(h.wait { h.outcomes()["t.detach"] == [.success] })
        #expect(h.stop())
        let pid = Int32((try String(contentsOfFile: pidFile, encoding: .utf8)).trimmingCharacters(in: .whitespacesAndNewlines))!
        defer { if !processIsGone(pid) { kill(pid, SIGKILL) } }
        #expect(h.wait(timeout: 2) { processIsGone(pid) })
        #expect(h.lines.contains("t.detach[1] killed 1 leftover process at the run's end"))
    }

    @Test func replaceOnSubmitAndPendingLimit() throws {
        let h = try LoopHarness { s in
            let a = TaskDefinition(identifier: "t.refresh", allowance: .seconds(5))
            s.register(a, command: CommandJob(argv: ["/bin/true"]))
            s.register(TaskDefinition(identifier: "t.other"), command: CommandJob(argv: ["/bin/true"]))
        }
        defer { h.removeDirectory() }
        let now = Instant(secondsSinceEpoch: Date().timeIntervalSince1970)
        try h.scheduler.submit(TaskRequest(identifier: "t.refresh", earliestBeginDate: now + .seconds(3600)))
        #expect(throws: SchedulerError.self) { try h.scheduler.submit(TaskRequest(identifier: "t.other")) }
        #expect(throws: SchedulerError.notPermitted(identifier: "t.nope")) {
            try h.scheduler.submit(TaskRequest(identifier: "t.nope"))
        }
        try h.scheduler.submit(TaskRequest(identifier: "t.refresh", earliestBeginDate: now + .milliseconds(50)))
        #expect(h.scheduler.pendingTaskRequests().count == 1)
        h.start()
        #expect(h.wait { h.outcomes()["t.refresh"] == [.success] })
        #expect(h.stop())
    }

    @Test func spawnFailureIsAFailureNotACrashOfTheScheduler() throws {
        let h = try LoopHarness { s in
            s.register(TaskDefinition(identifier: "t.missing", kind: .processing),
                       command: CommandJob(argv: ["/nonexistent/program"]))
        }
        defer { h.removeDirectory() }
        try h.scheduler.submit(TaskRequest(identifier: "t.missing", kind: .processing))
        h.start()
        #expect(h.wait { h.outcomes()["t.missing"] == [.failure] })
        #expect(h.stop())
        // A spawn failure is its own exit, not a fake exit 127.
        #expect(h.lines.contains("failure (could not start: /nonexistent/program: no such file or directory)"))
    }
}

/// A job that prints as fast as it can: the log gets a bounded share, the rest is counted and
/// reported, and the expiration is delivered on time (the loop is never starved).
@Suite(.serialized) struct OutputFloodTests {
    @Test func floodIsRateLimitedAndTheExpirationIsOnTime() throws {
        let h = try LoopHarness { s in
            s.register(TaskDefinition(identifier: "t.flood", kind: .processing, allowance: .milliseconds(1500),
                                      grace: .milliseconds(200)),
                       command: CommandJob(argv: ["/usr/bin/yes", "flood"]))
        }
        defer { h.removeDirectory() }
        try h.scheduler.submit(TaskRequest(identifier: "t.flood", kind: .processing))
        h.start()
        #expect(h.wait(timeout: 10) { h.outcomes()["t.flood"] == [.expired] })
        #expect(h.stop())
        let logged = h.lines.all.filter { $0.contains("t.flood[1] stdout: flood") }.count
        // Two one-second windows at most (the run lasts ~1.5 s), 200 lines each.
        #expect(logged > 0 && logged <= 400, "\(logged) lines logged")
        #expect(h.lines.contains("of output not logged: over 200 lines or 256 KiB a second"))
        let run = try #require(h.runs().first)
        let took = run.ended!.duration(since: run.started)
        // SIGTERM kills `yes` at once: the run ends at its deadline, not seconds later.
        #expect(took < .milliseconds(1500 + 500), "ended \(took) after start")
    }

    @Test func limiterCountsWhatItDrops() {
        var limiter = OutputRateLimiter(maxLines: 2, maxBytes: 100)
        let first = limiter.advance(to: 5000)
        #expect(first == nil)
        let admitted = [limiter.admit(length: 10), limiter.admit(length: 10), limiter.admit(length: 10)]
        #expect(admitted == [true, true, false])
        #expect(limiter.isFull)
        limiter.drop(bytes: 65536, lineEnds: 9)
        let sameWindow = limiter.advance(to: 5500)
        #expect(sameWindow == nil)
        let dropped = limiter.advance(to: 6000)
        #expect(dropped?.lines == 10 && dropped?.bytes == 65546)
        #expect(!limiter.isFull)
        let tooLong = limiter.admit(length: 101)
        #expect(!tooLong)  // one line over the byte budget is dropped too
        let rest = limiter.takeDropped()
        #expect(rest?.bytes == 101)
        let none = limiter.takeDropped()
        #expect(none == nil)
    }
}
