import Foundation
import Testing

/// `refreshd run` end to end: real binary, real signals, real state file.
@Suite(.serialized) struct RunCommandTests {
    @Test func killDashNineMidRunThenRestart() throws {
        let box = Sandbox()
        defer { box.remove() }
        // First run: records its pid and hangs. After a restart the retry finds the marker and succeeds.
        try box.write("sleepy.yaml", """
            identifier: test.sleepy
            kind: processing
            command: ["/bin/sh", "-c", "if [ -e \(box.root)/marker ]; then echo second; exit 0; fi; touch \(box.root)/marker; echo $$ > \(box.root)/job.pid; exec sleep 60"]
            allowance: 2m
            retry: {backoff: linear, initial: 200ms, max: 1s, limit: 3}
            """)
        let first = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { first.cleanUp() }
        let jobPID = try #require(box.waitForPID("job.pid"))
        first.signal(SIGKILL)
        first.wait()
        defer { kill(jobPID, SIGKILL) }
        #expect(!processIsGone(jobPID))  // its own session: it outlived refreshd

        let second = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { second.cleanUp() }
        #expect(waitFor { box.runs().map(\.1) == ["interrupted", "success"] })
        #expect(waitFor(timeout: 3) { processIsGone(jobPID) })
        #expect(second.errors().contains("reaped 1 leftover process of test.sleepy run 1"))
        #expect(second.errors().contains("interrupted test.sleepy run 1"))
        second.signal(SIGTERM)
        #expect(second.wait() == 0)
    }

    @Test func sigtermStopsGracefullyAndDeliversTheExpiration() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("worker.yaml", """
            identifier: test.worker
            kind: processing
            command: ["/bin/sh", "-c", "trap 'echo got-term > \(box.root)/term; exit 0' TERM; echo ready > \(box.root)/ready; while :; do sleep 0.05; done"]
            allowance: 1m
            grace: 2s
            """)
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { daemon.cleanUp() }
        #expect(waitFor { box.read("ready") != nil })
        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)
        #expect(box.read("term") == "got-term\n")
        #expect(box.runs().map(\.1) == ["interrupted"])
        #expect(daemon.errors().contains("received SIGTERM: stopping gracefully"))
        #expect(daemon.errors().contains("stopped"))
    }

    /// The shipped Jobs/ (tracked in git: not a job a user added) in a sandboxed copy of the
    /// project (Scripts linked, a one-image library where Scripts/run would make the sample one):
    /// the wallpaper job stages today and tomorrow in process within seconds.
    @Test func exampleJobsLaunchWithinSeconds() throws {
        let box = try Repository.sandboxWithShippedJobs()
        defer { box.remove() }
        let files = FileManager.default
        try files.createDirectory(atPath: box.root + "/.refreshd/library", withIntermediateDirectories: true)
        // A 1x1 RGBA PNG: the renditions are upscaled from it.
        let dot = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
        #expect(files.createFile(atPath: box.root + "/.refreshd/library/dot.png", contents: Data(base64Encoded: dot)))
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { daemon.cleanUp() }
        #expect(waitFor(timeout: 20) { box.runs().contains { $0 == ("design.example.wallpaper.refresh", "success") } })
        #expect(daemon.errors().contains("submitted design.example.wallpaper.refresh"))
        let staged = try files.contentsOfDirectory(atPath: box.state + "/shared/wallpaper/playlists")
        #expect(staged.count == 2, "today (missing) and tomorrow: \(staged)")
        daemon.signal(SIGINT)
        #expect(daemon.wait() == 0)
    }

    @Test func refusesToStartOnInvalidConfig() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("bad.yaml", """
            identifier: test.bad
            command: ["/bin/true"]
            allowance: thirty
            """)
        let r = try CLI.run(["run", "--jobs", box.jobs, "--state", box.state])
        #expect(r.status == 1)
        #expect(r.stderr.contains("bad.yaml:3:12: allowance: expected a duration"))
        #expect(r.stderr.contains("refusing to start"))
    }

    @Test func keepRunsTakesDaysFrom0To36500() throws {
        let box = Sandbox()
        defer { box.remove() }
        for bad in ["-1", "36501", "a month"] {
            let r = try CLI.run(["run", "--jobs", box.jobs, "--state", box.state, "--keep-runs", bad])
            #expect(r.status == 64, "\(bad): \(r.stderr)")
            #expect(r.stderr.contains("keep-runs"), "\(bad): \(r.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: box.state), "nothing was created")
    }

    @Test func keepOutputTakesLinesFrom0To2000() throws {
        let box = Sandbox()
        defer { box.remove() }
        for bad in ["-1", "2001", "lots"] {
            let r = try CLI.run(["run", "--jobs", box.jobs, "--state", box.state, "--keep-output", bad])
            #expect(r.status == 64, "\(bad): \(r.stderr)")
            #expect(r.stderr.contains("keep-output"), "\(bad): \(r.stderr)")
        }
        let r = try CLI.run(["run", "--jobs", box.jobs, "--state", box.state, "--keep-output", "2001"])
        #expect(r.stderr.contains("--keep-output must be 0 (keep no output) to 2000 lines"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: box.state), "nothing was created")
    }

    @Test func refusesACorruptStateFileAndLeavesItAlone() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("ok.yaml", "identifier: test.ok\ncommand: [\"/bin/true\"]\n")
        try FileManager.default.createDirectory(atPath: box.state, withIntermediateDirectories: true)
        let garbage = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try garbage.write(to: URL(fileURLWithPath: box.state + "/state.sqlite"))
        let r = try CLI.run(["run", "--jobs", box.jobs, "--state", box.state])
        #expect(r.status == 1)
        #expect(r.stderr.contains("state.sqlite"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: box.state + "/state.sqlite")) == garbage)
        let s = try CLI.run(["status", "--state", box.state])
        #expect(s.status == 1)
    }
}
