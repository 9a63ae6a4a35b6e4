import Foundation
import Testing
@testable import RefreshdCore
import RefreshdRuntime
import RefreshdDaemon

/// What the CLI says in the small places a user reads: help, refusals, status lines.
@Suite struct CLIWordingTests {
    static let commands: [[String]] = [
        ["run"], ["check"], ["status"], ["calendar"], ["simulate"], ["test"], ["why"], ["watch"],
        ["stats", "reloads"], ["ctl", "pending"], ["ctl", "submit"], ["ctl", "reload"],
        ["ctl", "activity", "start"], ["ctl", "activity", "update"], ["ctl", "activity", "end"],
    ]

    /// Regression: `run --help` said "(default 5). (default: 5)": the help text named a default
    /// that ArgumentParser prints as well.
    @Test func everyDefaultIsShownOnce() throws {
        for command in Self.commands {
            let r = try CLI.run(command + ["--help"])
            #expect(r.status == 0, "\(command): \(r.stderr)")
            let text = r.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            #expect(text.range(of: #"\(default [^)]*\)\.? \(default: "#, options: .regularExpression) == nil,
                    "\(command.joined(separator: " ")) --help names a default twice:\n\(r.stdout)")
        }
    }

    /// Regression: `--progress 1.5` printed refreshd's top-level usage. The refusal names the
    /// field and its range, with the verb's own usage, before anything is sent.
    @Test func anOutOfRangeProgressNamesTheFieldAndTheVerb() throws {
        for verb in ["start", "update", "end"] {
            var arguments = ["ctl", "activity", verb, "pack", "--progress", "1.5", "--state", "/nonexistent/state"]
            if verb == "start" { arguments += ["--type", "Pack"] }
            let r = try CLI.run(arguments)
            #expect(r.status == 64, "\(verb): \(r.stderr)")
            #expect(r.stderr.contains("--progress: expected a fraction from 0 to 1, found 1.5"), "\(verb): \(r.stderr)")
            #expect(r.stderr.contains("Usage: refreshd ctl activity \(verb) "), "\(verb): \(r.stderr)")
        }
    }

    static func entry(_ state: ActivityState, start: Instant, dismissal: Instant) -> ActivitySnapshot.Entry {
        ActivitySnapshot.Entry(
            id: "pack", type: "Pack", owner: nil, namespace: "default", state: state, since: start, start: start,
            progressPercent: nil, staleDate: nil, endsBy: state.isLive ? start + .seconds(8 * 3600) : nil,
            dismissal: dismissal, budgetUsed: 0, budget: 10, held: nil, updatesApplied: 0, updatesIgnored: 0,
            nextDeadline: nil, nextDeadlineKind: nil)
    }

    /// Regression: an active activity was shown "dismissed at" a future instant (the 12 h limit),
    /// as if its dismissal were decided. Only an ended one has a dismissal time.
    @Test func onlyAnEndedActivityHasADismissalTime() {
        let start = Instant(secondsSinceEpoch: 1_795_000_000)
        let limit = start + .seconds(12 * 3600)
        let active = MachineStatusText.activities(ActivitySnapshot(activities: [Self.entry(.active, start: start, dismissal: limit)],
                                                                   recentlyDismissed: [], at: start), now: start)
        #expect(!active.joined().contains("dismissed at"), "\(active)")
        #expect(active.joined().contains("on screen until \(limit) at the latest"), "\(active)")
        let endedAt = start + .seconds(4 * 3600)
        let ended = MachineStatusText.activities(ActivitySnapshot(activities: [Self.entry(.ended, start: start, dismissal: endedAt)],
                                                                  recentlyDismissed: [], at: start), now: start)
        #expect(ended.joined().contains("dismissed at \(endedAt)"), "\(ended)")
    }

    /// Regression: the metrics had no `# HELP` lines. Every family a live refreshd exports has
    /// one, right before its `# TYPE` line.
    @Test func everyMetricSaysWhatItCounts() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("beat.yaml", "identifier: test.beat\nkind: processing\ncommand: [\"/bin/true\"]\nresubmit: {after: 1h}\n")
        try box.write("widget.yaml", """
            identifier: test.widget
            kind: timeline
            command: ["/bin/sh", "-c", "echo '{\\"entries\\": [], \\"policy\\": \\"never\\"}' >&3"]
            widget: {kind: quotes, families: [systemSmall], budget: 5}
            """)
        let metrics = box.root + "/refreshd.prom"
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state, "--metrics-file", metrics])
        defer { daemon.cleanUp() }
        #expect(waitFor(timeout: 15) { (try? String(contentsOfFile: metrics, encoding: .utf8))?.contains("refreshd_runs_total") == true })
        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)
        let lines = try String(contentsOfFile: metrics, encoding: .utf8).split(separator: "\n").map(String.init)
        let types = lines.indices.filter { lines[$0].hasPrefix("# TYPE ") }
        #expect(types.count >= 8, "\(lines)")
        for i in types {
            let name = lines[i].split(separator: " ")[2]
            #expect(i > 0 && lines[i - 1].hasPrefix("# HELP \(name) ") && lines[i - 1].count > "# HELP \(name) ".count,
                    "no help for \(name)")
        }
        try PrometheusText.check(lines.joined(separator: "\n") + "\n", in: box.root)
    }
}
