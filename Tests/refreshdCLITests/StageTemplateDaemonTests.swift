import Foundation
import Testing

/// A template of `action: stage-playlist` under the real daemon (issue 23): each instance
/// stages from its own library into its own folder of the shared container, through the real
/// stager in its worker process; a key that would leave the folder is refused by `ctl`.
@Suite(.serialized) struct StageTemplateDaemonTests {
    /// A one-image library per user (alice, bob@example.com) under `libraries/USER`, the image
    /// named by `image`, and `stage.yaml`: a staging template of them into `wallpaper-{user}`,
    /// switching at `switchAt`, reloading `widget`.
    static func stagingTemplate(in box: Sandbox, switchAt: String, widget: String,
                                image: (String) -> String) throws {
        for user in ["alice", "bob@example.com"] {
            try FileManager.default.createDirectory(atPath: box.root + "/libraries/\(user)", withIntermediateDirectories: true)
            let made = try CLI.run(["staging", "blank-png", box.root + "/libraries/\(user)/\(image(user))", "--width", "64", "--height", "64"])
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
              switch-times: ["\(switchAt)"]
              timezone: UTC
              families: [systemSmall]
              widget: \(widget)
              day: today
            allowance: 1m
            """)
    }

    @Test func eachInstanceStagesIntoItsOwnFolderAndHostileKeysAreRefused() throws {
        let box = Sandbox()
        defer { box.remove() }
        try Self.stagingTemplate(in: box, switchAt: "06:00", widget: "wallpaper") { _ in "a.png" }
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

    /// The issue's motivating case, one staging per user per night, end to end: a staging
    /// template reloads each instance's own widget kind (`widget: "wallpaper-{user}"`), and a
    /// `provider: playlist` timeline template reads each instance's own folder
    /// (`folder: "wallpaper-{user}"`): each user's widget shows assets from their own library,
    /// published under their own kind. Before the fix both files were refused at the start.
    @Test func eachInstancesWidgetShowsItsOwnStagedPlaylist() throws {
        let box = Sandbox()
        defer { box.remove() }
        try Self.stagingTemplate(in: box, switchAt: "00:00", widget: "\"wallpaper-{user}\"") { "\($0.prefix(3)).png" }
        try box.write("widget.yaml", """
            identifier: test.wallpaper
            kind: timeline
            template: true
            parameters: [user]
            provider: playlist
            timezone: UTC
            widget: {kind: "wallpaper-{user}", families: [systemSmall], folder: "wallpaper-{user}", budget: unlimited}
            """)
        let check = try CLI.run(["check", box.jobs])
        #expect(check.stdout.contains("test.wallpaper: template [user], timeline widget wallpaper-{user} [systemSmall]"), "\(check.stdout)")
        #expect(check.stdout.contains("test.stage: template [user], processing"), "\(check.stdout)")
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { daemon.cleanUp() }
        #expect(waitFor { daemon.errors().contains("refreshd started") }, "\(daemon.errors())")
        let shared = box.state + "/shared"
        // The widgets first: nothing staged yet, each waits.
        let widgets = try CLI.run(["ctl", "instance", "add", "test.wallpaper", "alice", "bob@example.com", "--state", box.state])
        #expect(widgets.status == 0, "\(widgets.stderr)")
        func shown(_ kind: String) -> String? {
            try? String(contentsOfFile: "\(shared)/widgets/\(kind)/systemSmall.json", encoding: .utf8)
        }
        #expect(waitFor { daemon.errors().contains("waiting") }, "\(daemon.errors())")
        let staged = try CLI.run(["ctl", "instance", "add", "test.stage", "alice", "bob@example.com", "--state", box.state])
        #expect(staged.status == 0, "\(staged.stderr)")
        // Each staging run reloads its own user's widget, which reads its own folder.
        #expect(waitFor(timeout: 30) {
            (shown("wallpaper-alice")?.contains("wallpaper-alice/renditions/") ?? false)
                && (shown("wallpaper-bob-at-example.com")?.contains("wallpaper-bob@example.com/renditions/") ?? false)
        }, "\(shown("wallpaper-alice") ?? "nil") \(shown("wallpaper-bob-at-example.com") ?? "nil")\n\(daemon.errors())")
        #expect(daemon.errors().contains("reload of wallpaper-alice") || daemon.errors().contains("wallpaper-alice"))
        // Values that would leave the container or make no kind: refused, naming the instance and the field.
        let hidden = try CLI.run(["ctl", "instance", "add", "test.wallpaper", ".hidden", "--state", box.state])
        #expect(hidden.status != 0 && hidden.stderr.contains("test.wallpaper[.hidden]") && hidden.stderr.contains("begins with '.'"),
                "\(hidden.stderr)")
        let long = String(repeating: "x", count: 60)
        let tooLong = try CLI.run(["ctl", "instance", "add", "test.stage", long, "--state", box.state])
        #expect(tooLong.status != 0 && tooLong.stderr.contains("test.stage[\(long)]")
                    && tooLong.stderr.contains("stage-playlist.widget"), "\(tooLong.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "\(shared)/wallpaper-\(long)"))
        // Nothing for the template's unfilled kind or folder.
        #expect(!FileManager.default.fileExists(atPath: shared + "/widgets/wallpaper-{user}"))
        #expect(!FileManager.default.fileExists(atPath: shared + "/wallpaper-{user}"))
    }
}
