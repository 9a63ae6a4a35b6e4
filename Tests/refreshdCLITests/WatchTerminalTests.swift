import Foundation
import Testing

/// `refreshd watch` on a real terminal: tmux gives it a 100x30 pseudo-terminal, and what a
/// person would see is read back with `capture-pane`. On a terminal the view is redrawn in place
/// (home, each line cleared to its end, the rest of the screen cleared), so the screen holds one
/// view at a time, not a scroll of them. `Scripts/bootstrap` installs tmux.
@Suite(.serialized) struct WatchTerminalTests {
    static let tmux = ["/usr/bin/tmux", "/bin/tmux", "/usr/local/bin/tmux"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Runs tmux on a private server (`-L`), so the test never touches a user's sessions, and
    /// returns what it printed. Spawned directly, with its output in a file: the server a
    /// `new-session` starts inherits the client's descriptors, and Foundation's `Process` waits
    /// for them to close (the server's whole life).
    static func tmux(_ server: String, _ arguments: [String]) -> String {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("tmux-\(UUID().uuidString.prefix(8))").path
        defer { unlink(out) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = [tmux ?? "/usr/bin/tmux", "-L", server, "-f", "/dev/null"] + arguments
        var cArgs = argv.map { strdup($0) } + [nil]
        defer { for a in cArgs { free(a) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, argv[0], &actions, nil, &cArgs, environ) == 0 else { return "" }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        return (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
    }

    @Test(.enabled(if: tmux != nil, "tmux is not installed (Scripts/bootstrap installs it)"))
    func watchRedrawsInPlaceOnATerminal() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("beat.yaml", ControlCLITests.beat)
        try box.write("sleepy.yaml", ControlCLITests.sleepy)
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { daemon.cleanUp() }
        #expect(waitFor { FileManager.default.fileExists(atPath: box.state + "/control.sock") })
        let server = "refreshd-test-\(getpid())"
        defer { _ = Self.tmux(server, ["kill-server"]) }
        let command = "\(CLI.binary) watch --state \(box.state) --for 8"
        _ = Self.tmux(server, ["new-session", "-d", "-x", "100", "-y", "30", command])

        func screen() -> [String] {
            // One line per row of the pane, each ended by a newline.
            var rows = Self.tmux(server, ["capture-pane", "-p"]).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            if rows.last == "" { rows.removeLast() }
            return rows
        }
        var first: [String] = []
        #expect(waitFor(timeout: 5) {
            first = screen()
            return first.contains { $0.contains("test.beat") }
        }, "the view appeared: \(first)")
        // The beat job runs every second: wait for a later view and compare.
        var later: [String] = []
        #expect(waitFor(timeout: 5) {
            later = screen()
            return later.first { $0.hasPrefix("refreshd running at") } != first.first { $0.hasPrefix("refreshd running at") }
        }, "the header's clock moved on: \(later)")
        for view in [first, later] {
            let headers = view.filter { $0.contains("refreshd running at") }
            #expect(headers.count == 1, "one view on the screen, not a scroll of them: \(view)")
            #expect(view.first?.hasPrefix("refreshd running at") == true, "drawn from the top: \(view)")
            #expect(view.count <= 30 && view.allSatisfy { $0.count <= 100 }, "fits the 100x30 terminal")
            #expect(view.contains { $0.contains("test.sleepy") })
        }
    }

    /// Issue 23 on a terminal: 30 instances fold into one row and a Templates section, and
    /// `--instance` draws that one instance's view.
    @Test(.enabled(if: tmux != nil, "tmux is not installed (Scripts/bootstrap installs it)"))
    func watchFoldsInstancesAndShowsOneOnATerminal() throws {
        let box = Sandbox()
        defer { box.remove() }
        let daemon = try InstanceFoldingCLITests.daemon(box)
        defer { daemon.cleanUp() }
        #expect(waitFor(timeout: 30) { InstanceFoldingCLITests.ranAll(box) })
        let server = "refreshd-test-\(getpid())-instances"
        defer { _ = Self.tmux(server, ["kill-server"]) }
        _ = Self.tmux(server, ["new-session", "-d", "-x", "100", "-y", "30", "\(CLI.binary) watch --state \(box.state) --for 6"])
        _ = Self.tmux(server, ["new-window", "-d", "\(CLI.binary) watch --state \(box.state) --for 6 --instance test.feed.refresh[bad-03]"])
        func screen(_ window: Int) -> [String] {
            Self.tmux(server, ["capture-pane", "-p", "-t", ":\(window)"]).split(separator: "\n", omittingEmptySubsequences: false)
                .map(String.init)
        }
        var folded: [String] = []
        #expect(waitFor(timeout: 5) {
            folded = screen(0)
            return folded.contains { $0.contains("most failing:") }
        }, "the folded view: \(folded)")
        let due = folded.drop { $0 != "Next due" }.prefix { $0 != "" }
        #expect(due.filter { $0.contains("test.feed.refresh[") }.count == 1, "one row for 30 pending instances: \(folded.joined(separator: "\n"))")
        #expect(folded.contains("  test.feed.refresh  30 instances  30 pending  0 running  12 failing"))
        #expect(folded.allSatisfy { $0.count <= 100 })
        var single: [String] = []
        #expect(waitFor(timeout: 5) {
            single = screen(1)
            return single.contains { $0.hasPrefix("instance test.feed.refresh[bad-03]") }
        }, "the instance's view: \(single)")
        #expect(single.contains("instance test.feed.refresh[bad-03]  failing: 1 consecutive failed attempt"))
        #expect(!single.contains { $0.contains("user-") || $0.contains("Templates") })
    }
}
