import Foundation
import Testing

/// Signals against the real daemon: the ones whose default action would kill refreshd with no
/// stop sequence are handled; the stop signals behave as before; jobs start with default
/// dispositions whatever refreshd handles or ignores.
@Suite(.serialized) struct SignalTests {
    /// SIGUSR1 logs a status line; SIGUSR2, SIGALRM, SIGVTALRM and SIGPROF are logged and
    /// ignored. refreshd keeps running (and scheduling) through all of them, then stops on
    /// SIGTERM as usual.
    @Test func usrAndTimerSignalsLeaveTheDaemonRunning() throws {
        let box = Sandbox()
        defer { killAll(box); box.remove() }
        try box.write("idle.yaml", """
            identifier: test.idle
            kind: processing
            command: ["/bin/sh", "-c", "echo $$ > \(box.root)/idle.pid; exec sleep 60"]
            allowance: 1m
            grace: 1s
            """)
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { daemon.cleanUp() }
        #expect(waitFor { box.read("idle.pid") != nil })
        let signals: [(Int32, String)] = [
            (SIGUSR1, "received SIGUSR1: 1 run in flight (test.idle[1]), 0 pending"),
            (SIGUSR2, "received SIGUSR2: ignored"),
            (SIGALRM, "received SIGALRM: ignored"),
            (SIGVTALRM, "received SIGVTALRM: ignored"),
            (SIGPROF, "received SIGPROF: ignored"),
        ]
        for (number, line) in signals {
            daemon.signal(number)
            #expect(waitFor(timeout: 3) { daemon.errors().contains(line) }, "no \"\(line)\"")
            #expect(!processIsGone(daemon.pid), "signal \(number) killed refreshd")
        }
        // Still scheduling: a second signal of each kind is handled the same way.
        daemon.signal(SIGUSR1)
        #expect(waitFor(timeout: 3) { daemon.errors().components(separatedBy: "received SIGUSR1").count == 3 })
        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)
        #expect(daemon.errors().contains("received SIGTERM: stopping gracefully"))
        #expect(box.runs().map(\.1) == ["interrupted"])
    }

    /// A second SIGTERM while a job ignores the expiration kills it at once instead of waiting
    /// for its grace.
    @Test func secondSigtermKillsRunningJobsNow() throws {
        let box = Sandbox()
        defer { killAll(box); box.remove() }
        try box.write("stubborn.yaml", """
            identifier: test.stubborn
            kind: processing
            command: ["/bin/sh", "-c", "trap '' TERM; echo $$ > \(box.root)/stubborn.pid; while :; do sleep 0.05; done"]
            allowance: 1m
            grace: 60s
            """)
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { daemon.cleanUp() }
        #expect(waitFor { box.read("stubborn.pid") != nil })
        daemon.signal(SIGTERM)
        #expect(waitFor(timeout: 3) { daemon.errors().contains("received SIGTERM: stopping gracefully") })
        usleep(200_000)
        #expect(!processIsGone(daemon.pid))  // the job ignores SIGTERM: its grace runs
        daemon.signal(SIGTERM)
        #expect(daemon.wait(timeout: 5) == 0)
        #expect(daemon.errors().contains("received SIGTERM again: killing running jobs now"))
        #expect(box.runs().map(\.1) == ["interrupted"])
    }

    /// A job starts with no signal ignored and none blocked, though refreshd ignores SIGPIPE
    /// and handles the others on its loop: an ignored disposition would survive the exec.
    @Test func jobsStartWithDefaultDispositions() throws {
        let box = Sandbox()
        defer { killAll(box); box.remove() }
        try box.write("dispositions.yaml", """
            identifier: test.dispositions
            kind: processing
            command: ["/usr/bin/awk", "/^Sig(Ign|Blk):/ {print $1 $2}", "/proc/self/status"]
            allowance: 1m
            """)
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { daemon.cleanUp() }
        #expect(waitFor { box.runs().map(\.1) == ["success"] })
        let log = daemon.errors()
        #expect(log.contains("test.dispositions[1] stdout: SigBlk:0000000000000000"), "\(log)")
        // Signals 1-31 (libuv leaves glibc's real-time ones, 32 and up, as they were).
        let jobIgnored = log.components(separatedBy: "test.dispositions[1] stdout: SigIgn:").dropFirst().first
            .flatMap { UInt64($0.prefix(16), radix: 16) }
        #expect(jobIgnored.map { $0 & 0x7fff_ffff } == 0, "\(log)")
        // refreshd itself ignores SIGPIPE (bit 13), which the job did not inherit.
        let status = (try? String(contentsOfFile: "/proc/\(daemon.pid)/status", encoding: .utf8)) ?? ""
        let ignored = status.split(separator: "\n").first { $0.hasPrefix("SigIgn:") }
            .flatMap { UInt64($0.dropFirst(7).trimmingCharacters(in: .whitespaces), radix: 16) } ?? 0
        #expect(ignored & (1 << (UInt64(SIGPIPE) - 1)) != 0)
        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)
    }

    func killAll(_ box: Sandbox) {
        for pid in sandboxProcesses(box) where pid > 1 { kill(pid, SIGKILL) }
    }
}
