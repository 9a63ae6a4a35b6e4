import Foundation
import Testing

/// Issue 20, "State that disappears is noticed": the jobs folder removed and made again, or
/// swapped in by a rename, is watched again without SIGHUP (real `refreshd run`).
@Suite(.serialized) struct JobsFolderReplacedTests {
    static func job(_ identifier: String) -> String {
        """
        identifier: \(identifier)
        kind: processing
        command: ["/bin/true"]
        earliest: +1h
        """
    }

    @Test func aFolderRemovedAndMadeAgainIsWatchedAgain() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("first.yaml", Self.job("test.first"))
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { daemon.cleanUp() }
        #expect(waitFor { daemon.errors().contains("refreshd started") })

        try FileManager.default.removeItem(atPath: box.jobs)
        #expect(waitFor { daemon.errors().contains("reload refused") }, "the missing folder is noticed")
        try FileManager.default.createDirectory(atPath: box.jobs, withIntermediateDirectories: false)
        usleep(300_000)  // the re-created folder's reload settles first: an edit must come after it
        try box.write("second.yaml", Self.job("test.second"))
        #expect(waitFor { daemon.errors().contains("submitted test.second") }, "\(daemon.errors())")

        // Swapped in by a rename, as a deploy does: edits to the new folder are seen.
        let staged = box.root + "/Jobs.new"
        try FileManager.default.createDirectory(atPath: staged, withIntermediateDirectories: false)
        try Self.job("test.third").write(toFile: staged + "/third.yaml", atomically: true, encoding: .utf8)
        #expect(rename(box.jobs, box.root + "/Jobs.old") == 0 && rename(staged, box.jobs) == 0)
        #expect(waitFor { daemon.errors().contains("submitted test.third") }, "\(daemon.errors())")
        usleep(300_000)
        try box.write("fourth.yaml", Self.job("test.fourth"))
        #expect(waitFor { daemon.errors().contains("submitted test.fourth") }, "\(daemon.errors())")
        // The old folder is no longer watched.
        try Self.job("test.stale").write(toFile: box.root + "/Jobs.old/stale.yaml", atomically: true, encoding: .utf8)
        usleep(500_000)
        #expect(!daemon.errors().contains("test.stale"))
        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)
    }

    /// The folder's parent removed and made again: SIGHUP re-arms the watches, and edits are
    /// seen again without another signal.
    @Test func sighupRearmsTheWatchWhenTheParentWasReplaced() throws {
        let box = Sandbox()
        defer { box.remove() }
        let parent = box.root + "/conf", jobs = parent + "/Jobs"
        try FileManager.default.createDirectory(atPath: jobs, withIntermediateDirectories: true)
        try Self.job("test.first").write(toFile: jobs + "/first.yaml", atomically: true, encoding: .utf8)
        let daemon = try CLI.start(["run", "--jobs", jobs, "--state", box.state])
        defer { daemon.cleanUp() }
        #expect(waitFor { daemon.errors().contains("refreshd started") })
        try FileManager.default.removeItem(atPath: parent)
        try FileManager.default.createDirectory(atPath: jobs, withIntermediateDirectories: true)
        try Self.job("test.second").write(toFile: jobs + "/second.yaml", atomically: true, encoding: .utf8)
        daemon.signal(SIGHUP)
        #expect(waitFor { daemon.errors().contains("submitted test.second") }, "\(daemon.errors())")
        usleep(300_000)
        try Self.job("test.third").write(toFile: jobs + "/third.yaml", atomically: true, encoding: .utf8)
        #expect(waitFor { daemon.errors().contains("submitted test.third") }, "edits seen after SIGHUP: \(daemon.errors())")
        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)
    }
}
