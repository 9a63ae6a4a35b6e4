import Foundation
import Testing
import RefreshdCore
import RefreshdStore

/// What a new user met (issue 36), each where the user met it: `why` after Ctrl-C and on a job
/// whose runs are old, `calendar`'s errors, `check`'s next elapse on a UTC machine, `watch`
/// without a terminal.
@Suite(.serialized) struct FirstRunCLITests {
    static func json(_ text: String) -> [String: Any]? {
        try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
    }

    /// Ctrl-C during a run: `why` said "It is a retry: backoff after 1 failure in a row". The
    /// interruption is not the job's fault: the attempt runs again at once, no backoff.
    @Test func whyAfterCtrlCSaysTheInterruptedAttemptRunsAgainWithoutBackoff() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("slow.yaml", """
            identifier: test.slow
            kind: processing
            command: ["/bin/sh", "-c", "exec sleep 30"]
            retry: {initial: 10m}
            grace: 1s
            """)
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { daemon.cleanUp() }
        #expect(waitFor { daemon.errors().contains("test.slow[1] started pid") }, "\(daemon.errors())")
        daemon.signal(SIGINT)
        #expect(daemon.wait(timeout: 15) == 0, "\(daemon.errors())")
        #expect(daemon.errors().contains("retry test.slow attempt 1 at"), "\(daemon.errors())")
        let r = try CLI.run(["why", "test.slow", "--state", box.state, "--jobs", box.jobs, "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let report = try #require(Self.json(r.stdout), "\(r.stdout)")
        let paragraph = report["paragraph"] as? String ?? ""
        #expect(!paragraph.contains("backoff after"), "\(paragraph)")
        #expect(paragraph.contains("It runs again the attempt run 1 was, interrupted when refreshd stopped or died"), "\(paragraph)")
        #expect((report["reasons"] as? [String])?.contains("interrupted") == true, "\(report)")
        let status = try #require(box.status())
        #expect((status["pending"] as? [[String: Any]])?.first?["origin"] as? String == "retry")
    }

    /// A job failing 4 times in a row, then 600 runs of a busy job: `why` read "It has not run
    /// yet", its runs being past the 500 latest of all jobs it looked among.
    @Test func whyShowsTheLastRunsOfAJobWhoseRunsAreOld() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("flaky.yaml", "identifier: test.flaky\nkind: processing\ncommand: [\"/bin/false\"]\nretry: {initial: 1h}\n")
        try box.write("busy.yaml", "identifier: test.busy\nkind: processing\ncommand: [\"/bin/true\"]\nresubmit: {after: 1m}\n")
        try FileManager.default.createDirectory(atPath: box.state, withIntermediateDirectories: true)
        chmod(box.state, 0o700)
        let store = try StateStore.open(directory: box.state)
        let t0 = Instant(milliseconds: Int64(Date().timeIntervalSince1970 * 1000) - 86_400_000)
        var changes: [StateChange] = []
        for (n, identifier) in (Array(repeating: "test.flaky", count: 4) + Array(repeating: "test.busy", count: 600)).enumerated() {
            let runID = Int64(n + 1)
            let started = t0 + .seconds(Int64(n) * 60)
            changes.append(.runStarted(RunRecord(runID: runID, identifier: identifier, kind: .processing, submitted: started,
                                                 earliest: started, started: started, deadline: started + .seconds(600),
                                                 attempt: identifier == "test.flaky" ? n + 1 : 1)))
            let failed = identifier == "test.flaky"
            changes.append(.runEnded(runID: runID, identifier: identifier, ended: started + .seconds(1),
                                     outcome: failed ? .failure : .success, exitStatus: failed ? 1 : 0, signal: nil))
        }
        changes.append(.failureStreak(identifier: "test.flaky", count: 4))
        try store.apply(changes)
        store.close()
        let r = try CLI.run(["why", "test.flaky", "--state", box.state, "--jobs", box.jobs])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(!r.stdout.contains("It has not run yet"), "\(r.stdout)")
        #expect(r.stdout.contains("Last runs: run 4 failure"), "\(r.stdout)")
    }

    /// `calendar "every 5 minutes"` answered `expected a time zone ..., found "minutes"`, and a
    /// misspelt `--timezone` gave the top-level usage and exit 64, unlike every other error.
    @Test func calendarAnswersWordsAndAMisspeltZoneLikeItsOtherErrors() throws {
        let words = try CLI.run(["calendar", "every 5 minutes"])
        #expect(words.status == 1)
        #expect(words.stderr.hasPrefix("refreshd: calendar: every 5 minutes: column 1: expected a calendar expression"), "\(words.stderr)")
        #expect(words.stderr.contains("for every 5 minutes write *:0/5, or the cron line */5 * * * *"), "\(words.stderr)")
        #expect(!words.stderr.contains("time zone"))

        let zone = try CLI.run(["calendar", "daily", "--timezone", "Europe/Berln"])
        #expect(zone.status == 1, "\(zone.stderr)")
        #expect(zone.stderr == "refreshd: calendar: --timezone \"Europe/Berln\": expected an IANA time zone like Europe/Paris (or UTC); "
            + "did you mean Europe/Berlin?\n", "\(zone.stderr)")
        let base = try CLI.run(["calendar", "daily", "--base", "yesterday"])
        #expect(base.status == 1 && base.stderr.hasPrefix("refreshd: calendar: --base \"yesterday\": expected an ISO 8601"), "\(base.stderr)")
        #expect(!base.stderr.contains("USAGE") && !zone.stderr.contains("USAGE"))
    }

    /// `command: bin/fetch.sh --verbose` said the file `bin/fetch.sh --verbose` does not exist,
    /// without a word of the list form.
    @Test func checkPointsACommandLineInAStringAtTheListForm() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("fetch.yaml", "identifier: test.fetch\nkind: processing\ncommand: bin/fetch.sh --verbose\n")
        let r = try CLI.run(["check", box.jobs])
        #expect(r.status == 1)
        #expect(r.stdout.contains("fetch.yaml:3:10: command: \"bin/fetch.sh --verbose\""), "\(r.stdout)")
        #expect(r.stdout.contains("write the list command: [bin/fetch.sh, --verbose]"), "\(r.stdout)")
    }

    /// On a UTC machine (or a job in UTC) `check` printed `next: X (X)`, the same time twice.
    @Test func checkShowsANextElapseInUTCOnce() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("utc.yaml", "identifier: test.utc\ncommand: [\"/bin/true\"]\nresubmit: {calendar: \"*-*-* 06:00\"}\ntimezone: UTC\n")
        try box.write("paris.yaml", "identifier: test.paris.x\ncommand: [\"/bin/true\"]\nresubmit: {calendar: \"*-*-* 06:00\"}\ntimezone: Europe/Paris\n")
        let r = try CLI.run(["check", box.jobs])
        #expect(r.status == 0, "\(r.stdout)")
        let next = r.stdout.split(separator: "\n").filter { $0.hasPrefix("  next: ") }
        #expect(next.count == 6, "\(r.stdout)")
        let utc = next.filter { $0.hasSuffix("T06:00:00Z") }
        #expect(utc.count == 3 && utc.allSatisfy { !$0.contains("(") }, "\(r.stdout)")
        let paris = next.filter { $0.contains("T06:00:00+01:00 (") && $0.hasSuffix("T05:00:00Z)") }
        #expect(paris.count == 3, "\(r.stdout)")
    }

    /// A log line's shape: its times, durations, numbers and percentages as placeholders.
    static func shape(_ line: Substring) -> String {
        var text = String(line)
        let rules: [(String, String)] = [
            (#"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)"#, "<time>"),
            (#"\d+(\.\d+)?(ms|µs|s|m|h)\b"#, "<duration>"),
            (#"\d+(\.\d+)?"#, "<n>"),
        ]
        for (pattern, placeholder) in rules {
            text = text.replacingOccurrences(of: pattern, with: placeholder, options: .regularExpression)
        }
        return text
    }

    /// The README's sample of a first `Scripts/run` (issue 36: it was out of date) against a real
    /// first run, as Scripts/run starts it, from an empty `.refreshd/`: every line of the sample
    /// has the shape of a line of the real run (times, durations and numbers aside), and the
    /// lines before refreshd's own are the scripts' words.
    @Test func theReadmesFirstRunHasTheShapeOfARealOne() throws {
        let readme = try String(contentsOfFile: Repository.root + "/README.md", encoding: .utf8)
        let start = try #require(readme.range(of: "```\nbuilding refreshd (release)…\n"))
        let end = try #require(readme.range(of: "\n```\n", range: start.upperBound..<readme.endIndex))
        let sample = readme[readme.index(start.lowerBound, offsetBy: 4)..<end.lowerBound].split(separator: "\n")
        let logged = sample.filter { $0.first?.isNumber == true }
        let scripts = sample.filter { $0.first?.isNumber != true }
        #expect(logged.count >= 20, "\(sample.count) lines")
        // What Scripts/run and Scripts/quiet-build print before refreshd starts.
        let quietBuild = try String(contentsOfFile: Repository.root + "/Scripts/quiet-build", encoding: .utf8)
        let run = try String(contentsOfFile: Repository.root + "/Scripts/run", encoding: .utf8)
        for line in scripts {
            let known = line == "building refreshd (release)…"
                || (line.hasPrefix("first build of refreshd (release): ") && quietBuild.contains("echo \"first build of $what: "))
                || (line.hasPrefix("built refreshd (release) in ") && quietBuild.contains("echo \"built $what in "))
                || (line == "making the sample wallpaper library in .refreshd/library…" && run.contains(String(line)))
            #expect(known, "not a line the scripts print: \(line)")
        }

        // A real first run: the shipped jobs, the sample library, the dashboard (on a free port).
        let box = try NewUserCLITests.shippedProject()
        defer { box.remove() }
        try FileManager.default.createDirectory(atPath: box.root + "/.refreshd", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let library = try CLI.run(["staging", "sample-library", ".refreshd/library"], timeout: 60, directory: box.root)
        #expect(library.status == 0, "\(library.stderr)")
        let daemon = try CLI.start(["run", "--jobs", "Jobs", "--state", ".refreshd", "--http", "127.0.0.1:0"], directory: box.root)
        defer { daemon.cleanUp() }
        let wanted = Set(logged.map { Self.shape($0.dropFirst(25)) })
        var seen: Set<String> = []
        _ = waitFor(timeout: 90) {
            seen = Set(daemon.errors().split(separator: "\n").map { Self.shape($0.dropFirst(25)) })
            return wanted.isSubset(of: seen)
        }
        daemon.signal(SIGTERM)
        #expect(daemon.wait(timeout: 20) == 0)
        for line in logged where !seen.contains(Self.shape(line.dropFirst(25))) {
            Issue.record("README's first run shows a line no real first run logs: \(line)")
        }
        #expect(!daemon.errors().contains("WARNING"), "a first run warns of nothing: \(daemon.errors())")
    }
}
