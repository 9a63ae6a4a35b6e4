import Foundation
import Testing

/// The progress lines of `refreshd test` and `simulate`: drawn on a terminal (tmux gives it one; `pipe-pane` records
/// every byte written to it), rewritten in place and erased before the results; never written
/// to a pipe.
@Suite(.serialized) struct ProgressLineTests {
    /// A day of it is 24 runs: the plans end in milliseconds.
    static let hourly = """
        identifier: test.hourly
        kind: processing
        command: ["/bin/true"]
        resubmit: {after: 1h}
        """

    /// Runs `arguments` of refreshd (on a sandbox holding the hourly job) in a tmux pane and
    /// returns every byte it wrote to the terminal once `done` appears in them. The command
    /// waits for the pane's recording to start, and the pane stays until the server is killed.
    static func onATerminal(_ arguments: (_ jobs: String) -> String, until done: String) throws -> String {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("hourly.yaml", hourly)
        let server = "refreshd-progress-\(getpid())"
        defer { _ = WatchTerminalTests.tmux(server, ["kill-server"]) }
        let command = "sleep 1; \(CLI.binary) \(arguments(box.jobs)); sleep 30"
        _ = WatchTerminalTests.tmux(server, ["new-session", "-d", "-x", "100", "-y", "30", "sh", "-c", command])
        _ = WatchTerminalTests.tmux(server, ["pipe-pane", "-o", "cat >> \(box.root)/pane.log"])
        var written = ""
        #expect(waitFor(timeout: 30) {
            written = box.read("pane.log") ?? ""
            return written.contains(done)
        }, "\(done) reached the terminal: \(written.debugDescription)")
        return written
    }

    @Test(.enabled(if: WatchTerminalTests.tmux != nil, "tmux is not installed (Scripts/bootstrap installs it)"))
    func exploreDrawsItsProgressOnATerminalAndErasesIt() throws {
        let written = try Self.onATerminal({ "test --explore 6 --days 1 --jobs \($0)" }, until: "6 passed, 0 failed")
        for n in 1...6 { #expect(written.contains("ran \(n) of 6 plans, 0 failing"), "progress \(n): \(written.debugDescription)") }
        // Each state of the line starts at the left edge over a cleared line, and the last one is
        // erased before the results print.
        #expect(written.contains("\r\u{1B}[Kran 1 of 6 plans"))
        let last = try #require(written.range(of: "ran 6 of 6 plans, 0 failing"))
        let after = written[last.upperBound...]
        #expect(after.hasPrefix("\r\u{1B}[K"), "erased: \(after.debugDescription)")
        #expect(after.contains("6 passed, 0 failed"))
    }

    @Test(.enabled(if: WatchTerminalTests.tmux != nil, "tmux is not installed (Scripts/bootstrap installs it)"))
    func simulateDrawsTheDaysDoneOnATerminalAndErasesThem() throws {
        let written = try Self.onATerminal({ "simulate --jobs \($0) --days 5 --start 2026-11-23T00:00:00Z" },
                                           until: "invariants: all held")
        for n in 1...4 { #expect(written.contains("\r\u{1B}[Ksimulated \(n) of 5 days"), "day \(n): \(written.debugDescription)") }
        let last = try #require(written.range(of: "simulated 4 of 5 days"))
        #expect(written[last.upperBound...].hasPrefix("\r\u{1B}[K"), "erased before the report")
    }

    @Test func nothingOfItReachesAPipe() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("hourly.yaml", Self.hourly)
        let r = try CLI.run(["test", "--explore", "3", "--days", "1", "--jobs", box.jobs], timeout: 60)
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stderr.isEmpty, "\(r.stderr.debugDescription)")
        #expect(r.stdout == "3 passed, 0 failed\n")
        let simulated = try CLI.run(["simulate", "--jobs", box.jobs, "--days", "3", "--start", "2026-11-23T00:00:00Z"], timeout: 60)
        #expect(simulated.status == 0, "\(simulated.stderr)")
        #expect(simulated.stderr.isEmpty, "\(simulated.stderr.debugDescription)")
    }
}
