import Foundation
import Testing

/// refreshd killed at the exact instants where a run's processes are hardest to find: no job
/// process survives, whatever instant refreshd dies at.
@Suite(.serialized) struct CrashPointTests {
    func writeJob(_ box: Sandbox) throws {
        try box.write("sleepy.yaml", """
            identifier: test.sleepy
            kind: processing
            command: ["/bin/sh", "-c", "echo $$ >> \(box.root)/job.pid; sleep 60 & wait"]
            allowance: 2m
            """)
    }

    /// Killed right after the spawn, before the process group is recorded: the run's processes
    /// are found by the REFRESH_INSTANCE and REFRESH_RUN_ID they carry, and killed at the restart.
    @Test func killedBetweenSpawnAndRecordingTheGroup() throws {
        let box = Sandbox()
        defer { box.remove() }
        try writeJob(box)
        let first = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state],
                                  environment: ["REFRESHD_CRASH_AT": "spawned"])
        defer { first.cleanUp() }
        #expect(first.wait() == 128 + SIGKILL)
        let jobPID = try #require(box.waitForPID("job.pid"))
        defer { kill(-jobPID, SIGKILL) }
        #expect(!processIsGone(jobPID))  // its own session: it outlived refreshd

        let second = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { second.cleanUp() }
        #expect(waitFor { second.errors().contains("interrupted test.sleepy run 1") })
        #expect(waitFor(timeout: 3) { processIsGone(jobPID) })
        #expect(second.errors().contains("reaped 2 leftover processes of test.sleepy run 1"))
        second.signal(SIGTERM)
        #expect(second.wait() == 0)
    }

    /// Killed after the launch is committed and before the spawn: nothing to reap; the run is
    /// recorded interrupted and requested again.
    @Test func killedBetweenCommitAndSpawn() throws {
        let box = Sandbox()
        defer { box.remove() }
        try writeJob(box)
        let first = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state],
                                  environment: ["REFRESHD_CRASH_AT": "launch-committed"])
        defer { first.cleanUp() }
        #expect(first.wait() == 128 + SIGKILL)
        #expect(box.read("job.pid") == nil)

        let second = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { second.cleanUp() }
        #expect(waitFor { box.read("job.pid") != nil })
        #expect(second.errors().contains("interrupted test.sleepy run 1"))
        #expect(!second.errors().contains("reaped"))
        second.signal(SIGTERM)
        #expect(second.wait() == 0)
        #expect(box.runs().map(\.1) == ["interrupted", "interrupted"])
    }
}
