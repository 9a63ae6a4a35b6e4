import Foundation
import Testing

/// `user:` end to end (issue 35): `refreshd run` (as root) reads the job file, resolves the
/// user and runs the command as it, whose output and results are kept with the run as any run's;
/// `refreshd simulate` accepts the fields for a user this machine does not have (it runs no
/// process as anyone).
@Suite(.serialized) struct RunAsDaemonTests {
    @Test(.enabled(if: geteuid() == 0, "switching users needs refreshd to run as root"))
    func theDaemonRunsTheJobAsItsUser() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("job.yaml", #"""
            identifier: test.asnobody
            kind: processing
            command: ["/bin/sh", "-c", "echo \"$(id -u) $(id -g) $(id -G) $HOME $USER $LOGNAME\"; printf '{\"uid\": %s}\\n' $(id -u) >&3"]
            user: nobody
            allowance: 1m
            """#)
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { daemon.cleanUp() }
        #expect(waitFor(timeout: 30) { box.runs().map(\.1) == ["success"] }, "\(daemon.errors())")
        let run = try #require((box.status()?["runs"] as? [[String: Any]])?.first)
        #expect(run["output"] as? [String] == ["65534 65534 65534 /nonexistent nobody nobody"], "\(run)")
        #expect(run["results"] as? [String] == [#"{"uid": 65534}"#], "\(run)")
        #expect(daemon.errors().contains("test.asnobody[1] runs as nobody (uid 65534, gid 65534, groups 65534)"), "\(daemon.errors())")
        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)
    }

    @Test func theSimulatorAcceptsAUserThisMachineHasNot() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("job.yaml", "identifier: test.elsewhere\ncommand: [\"/bin/true\"]\nresubmit: {after: 6h}\nuser: somebody-elsewhere\ngroup: staff-elsewhere\n")
        let r = try CLI.run(["simulate", "--jobs", box.jobs, "--days", "1", "--start", "2026-11-23T00:00:00Z"])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("test.elsewhere"), "\(r.stdout)")
    }
}
