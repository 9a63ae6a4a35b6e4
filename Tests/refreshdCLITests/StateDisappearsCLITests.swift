import Foundation
import Testing

/// Issue 20, "State that disappears is noticed" and "Files refreshd creates", against a real
/// `refreshd run`.
@Suite(.serialized) struct StateDisappearsCLITests {
    /// Commits every second (a one-second resubmitting job).
    static let beat = """
        identifier: test.beat
        kind: processing
        command: ["/bin/true"]
        resubmit: {after: 1s}
        """

    /// Deleting the state file (or its WAL) under a running daemon: the next commit notices, the
    /// daemon logs why and stops with an error instead of committing into an unlinked file.
    @Test(arguments: ["state.sqlite", "state.sqlite-wal"])
    func deletedStateStopsTheDaemon(_ victim: String) throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("beat.yaml", Self.beat)
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { daemon.cleanUp() }
        #expect(waitFor { daemon.errors().contains("finished test.beat") }, "the beat runs")
        #expect(unlink(box.state + "/" + victim) == 0)
        let status = daemon.wait(timeout: 15)
        let log = daemon.errors()
        #expect(status != nil && status != 0, "stops with an error: \(log)")
        #expect(log.contains("\(box.state)/state.sqlite was deleted or replaced while refreshd was running"))
        #expect(!log.contains("launched test.beat", after: "was deleted or replaced"), "nothing launched after")
    }

    /// Deleting the lock file does not let a second daemon in: the lock is on the directory.
    @Test func deletingTheLockFileLetsNoSecondDaemonIn() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("beat.yaml", Self.beat)
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { daemon.cleanUp() }
        #expect(waitFor { daemon.errors().contains("refreshd started") })
        #expect(unlink(box.state + "/lock") == 0)
        let second = try CLI.run(["run", "--jobs", box.jobs, "--state", box.state], timeout: 15)
        #expect(second.status == 1)
        #expect(second.stderr.contains("holds the state directory lock"))
        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)
    }

    /// Under umask 000 the state directory is 0700 and every file in it 0600.
    @Test func stateFilesArePrivateWhateverTheUmask() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("beat.yaml", Self.beat)
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state],
                                   via: ["/bin/sh", "-c", "umask 000; exec \"$@\"", "sh"])
        defer { daemon.cleanUp() }
        #expect(waitFor { daemon.errors().contains("finished test.beat") })
        var info = stat()
        #expect(lstat(box.state, &info) == 0 && info.st_mode & 0o777 == 0o700)
        for name in ["state.sqlite", "state.sqlite-wal", "state.sqlite-shm", "lock"] {
            #expect(lstat(box.state + "/" + name, &info) == 0 && info.st_mode & 0o777 == 0o600,
                    "\(name) is \(String(info.st_mode & 0o777, radix: 8))")
        }
        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)
    }
}

extension String {
    /// Whether `needle` occurs after the first occurrence of `marker`.
    func contains(_ needle: String, after marker: String) -> Bool {
        guard let start = range(of: marker) else { return false }
        return self[start.upperBound...].contains(needle)
    }
}
