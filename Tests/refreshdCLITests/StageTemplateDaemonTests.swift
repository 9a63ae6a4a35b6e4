import Foundation
import Testing

/// A template of `action: stage-playlist` under the real daemon (issue 23): each instance
/// stages from its own library into its own folder of the shared container, through the real
/// stager in its worker process; a key that would leave the folder is refused by `ctl`.
@Suite(.serialized) struct StageTemplateDaemonTests {
    @Test func eachInstanceStagesIntoItsOwnFolderAndHostileKeysAreRefused() throws {
        let box = Sandbox()
        defer { box.remove() }
        for user in ["alice", "bob@example.com"] {
            try FileManager.default.createDirectory(atPath: box.root + "/libraries/\(user)", withIntermediateDirectories: true)
            let made = try CLI.run(["staging", "blank-png", box.root + "/libraries/\(user)/a.png", "--width", "64", "--height", "64"])
            #expect(made.status == 0, "\(made.stderr)")
        }
        try box.write("stage.yaml", """
            identifier: test.stage
            template: true
            parameters: [user]
            kind: processing
            action: stage-playlist
            stage-playlist:
              library: "\(box.root)/libraries/{user}"
              folder: "wallpaper-{user}"
              switch-times: ["06:00"]
              timezone: UTC
              families: [systemSmall]
              widget: wallpaper
              day: today
            allowance: 1m
            """)
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { daemon.cleanUp() }
        #expect(waitFor { daemon.errors().contains("refreshd started") })
        let added = try CLI.run(["ctl", "instance", "add", "test.stage", "alice", "bob@example.com", "--state", box.state])
        #expect(added.status == 0, "\(added.stderr)")
        let shared = box.state + "/shared"
        func playlists(_ user: String) -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: "\(shared)/wallpaper-\(user)/playlists")) ?? []).filter { $0.hasSuffix(".json") }
        }
        #expect(waitFor(timeout: 30) { !playlists("alice").isEmpty && !playlists("bob@example.com").isEmpty }, "\(daemon.errors())")
        // Nothing staged into the template's unfilled folder or the default one.
        #expect(!FileManager.default.fileExists(atPath: shared + "/wallpaper-{user}"))
        #expect(!FileManager.default.fileExists(atPath: shared + "/wallpaper"))

        for key in ["..", ".hidden", "../x", "a/b"] {
            let refused = try CLI.run(["ctl", "instance", "add", "test.stage", key, "--state", box.state])
            #expect(refused.status != 0, "\(key): \(refused.stdout)")
        }
        let dots = try CLI.run(["ctl", "instance", "add", "test.stage", "..", "--state", box.state])
        #expect(dots.stderr.contains("begins with '.'"), "\(dots.stderr)")
        #expect((try? FileManager.default.contentsOfDirectory(atPath: shared))?.sorted().filter { $0.hasPrefix("wallpaper") }
            == ["wallpaper-alice", "wallpaper-bob@example.com"])
    }
}
