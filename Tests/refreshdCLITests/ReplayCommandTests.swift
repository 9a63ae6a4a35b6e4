import Foundation
import Testing

/// `refreshd simulate --replay` (issue 34): a real `refreshd run` records a period with a
/// graceful stop and a kill -9; the replay of that period with the same files reproduces what
/// ran, and a what-if with a changed job shows the difference.
@Suite(.serialized) struct ReplayCommandTests {
    static let tick = """
        identifier: test.tick
        kind: processing
        command: ["/bin/true"]
        resubmit: {after: 1s}
        """
    static let failing = """
        identifier: test.failing
        kind: processing
        command: ["/bin/sh", "-c", "exit 3"]
        resubmit: {after: 2s}
        """

    /// A recorded period with a stop and a kill -9: refreshd runs `seconds[0]` and is stopped
    /// (SIGTERM), 1.5 s later `seconds[1]` and is killed (SIGKILL), 1.5 s later `seconds[2]` and
    /// is stopped; its `FROM..TO`.
    static func stopKillStop(_ box: Sandbox, seconds: [Double]) throws -> String {
        let from = Date()
        for (index, (length, signal)) in zip(seconds, [SIGTERM, SIGKILL, SIGTERM]).enumerated() {
            if index > 0 { usleep(1_500_000) }
            try Self.runFor(box, seconds: length, endingWith: signal)
        }
        return period(from, Date())
    }

    /// Runs refreshd for `seconds`, then ends it with `signal`.
    static func runFor(_ box: Sandbox, seconds: Double, endingWith signal: Int32) throws {
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { daemon.cleanUp() }
        #expect(waitFor { daemon.errors().contains("refreshd started") })
        usleep(UInt32(seconds * 1_000_000))
        daemon.signal(signal)
        _ = daemon.wait()
    }

    func figures(_ rows: [[String: Any]], _ job: String) -> [String: Any]? {
        rows.first { $0["job"] as? String == job && $0["day"] == nil }
    }

    /// `FROM..TO` as `simulate --replay` takes it, to the millisecond.
    static func period(_ from: Date, _ to: Date) -> String {
        let iso = ISO8601DateFormatter()
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return iso.string(from: from) + ".." + iso.string(from: to)
    }

    /// `simulate --replay` of `from` until now on the box's state and jobs: its table and its
    /// JSON report.
    static func replayed(_ box: Sandbox, from: Date) throws -> (table: String, object: [String: Any]) {
        let period = period(from, Date())
        let table = try CLI.run(["simulate", "--replay", period, "--state", box.state, "--ran-jobs", box.jobs]).stdout
        let r = try CLI.run(["simulate", "--replay", period, "--state", box.state, "--ran-jobs", box.jobs, "--json"])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        return (table, object)
    }

    @Test func aReplayOfARecordedPeriodMatchesWhatRanAndAWhatIfShowsTheChange() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("tick.yaml", Self.tick)
        try box.write("failing.yaml", Self.failing)
        // Stops half-way between two launches: one right at a stop may fall on either side of it.
        let period = try Self.stopKillStop(box, seconds: [3.5, 3.5, 3.5])

        // Changed files: the tick every 500 ms, the failing job as it was.
        let other = box.root + "/Other"
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
        try Self.tick.replacingOccurrences(of: "after: 1s", with: "after: 500ms").write(toFile: other + "/tick.yaml", atomically: true, encoding: .utf8)
        try Self.failing.write(toFile: other + "/failing.yaml", atomically: true, encoding: .utf8)

        let svg = box.root + "/replay.svg"
        // The table, for the failure messages below.
        let table = try CLI.run(["simulate", "--replay", period, "--state", box.state, "--ran-jobs", box.jobs]).stdout
        let r = try CLI.run(["simulate", "--replay", period, "--state", box.state, "--ran-jobs", box.jobs, "--jobs", other, "--json",
                             "--svg", svg])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let faults = try #require(object["faults"] as? [[String: Any]]).compactMap { $0["kind"] as? String }
        #expect(faults.contains("down") && faults.contains("kill"), "the stop and the kill -9 were recorded: \(faults)")
        #expect(object["replayedJobs"] as? [String] == ["test.failing", "test.tick"])
        let comparison = try #require(object["comparison"] as? [String: Any])
        let jobs = try #require(comparison["jobs"] as? [[String: Any]])
        let tick = try #require(figures(jobs, "test.tick"))
        let failing = try #require(figures(jobs, "test.failing"))
        func value(_ row: [String: Any], _ side: String, _ field: String) -> Int {
            (row[side] as? [String: Any])?[field] as? Int ?? -1
        }
        // About 9 s of ticks and 5 of the failing job's runs really happened.
        #expect(value(tick, "ran", "launched") >= 6 && value(failing, "ran", "launched") >= 3, "\(jobs)")
        // The tolerance: one run per job. The replay launches where the daemon's loop did a few
        // milliseconds later, so a run right at a stop may fall on the other side of it.
        for row in [tick, failing] {
            #expect(abs(value(row, "ran", "launched") - value(row, "replayed", "launched")) <= 1, "\(row)\n\(table)")
        }
        // Outcomes agree within the same tolerance (a run in flight at the stop or the kill ends
        // interrupted on both sides), and nothing is invented: the tick never fails, the
        // failing job never succeeds.
        for row in [tick, failing] {
            for outcome in ["success", "failure", "expired", "crashed", "interrupted"] {
                #expect(abs(value(row, "ran", outcome) - value(row, "replayed", outcome)) <= 1, "\(outcome): \(row)\n\(table)")
            }
        }
        #expect(value(tick, "replayed", "failure") == 0 && value(failing, "replayed", "success") == 0, "\(jobs)")
        let error = try #require(comparison["error"] as? [String: Any])
        #expect((error["runsApart"] as? Int ?? 99) <= 2, "\(table)")

        // The what-if: twice the ticks, the failing job as replayed.
        #expect(value(tick, "whatIf", "launched") >= value(tick, "replayed", "launched") * 3 / 2, "\(tick)")
        #expect(value(failing, "whatIf", "launched") == value(failing, "replayed", "launched"), "\(failing)")

        // The picture pairs each job's lanes: as it ran, replayed, what if.
        let picture = try String(contentsOfFile: svg, encoding: .utf8)
        let lanes = ["test.failing · ran", "test.failing · replayed", "test.failing · what if", "test.tick · ran", "test.tick · replayed", "test.tick · what if"]
        let places = lanes.compactMap { picture.range(of: ">\($0)</text>")?.lowerBound }
        #expect(places.count == 6 && places == places.sorted(), "the lanes, in pairs, in order")

        // The table says the same, with the error line.
        let text = try CLI.run(["simulate", "--replay", period, "--state", box.state, "--ran-jobs", box.jobs])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("per job:\n  test.failing: ") && text.stdout.contains("simulator's error (replay with the same files against what ran): "),
                "\(text.stdout)")
        #expect(text.stdout.contains("  down ") && text.stdout.contains("  kill "), "\(text.stdout)")
    }

    /// The operator's `ctl submit`s and a job's live activity, through a real refreshd: each
    /// submit is recorded in its own commit and replayed as the same order, so the runs it
    /// caused are replayed too; the activity the job drove (its lines kept with its run) is
    /// replayed from those lines and compares exactly, per day and over the period.
    @Test func anOperatorsSubmitsAndAJobsActivityAreReplayedAsTheyRan() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("hourly.yaml", """
            identifier: test.hourly
            kind: processing
            command: ["/bin/true"]
            resubmit: {after: 1h}
            """)
        try box.writeScript("pack", """
            #!/bin/sh
            now() { date -u +%Y-%m-%dT%H:%M:%S.%3NZ; }
            echo '{"activity":"start","id":"pack","type":"Pack","content":{"progress":0}}' >&3
            sleep 0.3
            printf '{"activity":"update","id":"pack","content":{"progress":0.5},"timestamp":"%s"}\n' "$(now)" >&3
            sleep 0.3
            printf '{"activity":"update","id":"pack","content":{"progress":0.9},"timestamp":"%s"}\n' "$(now)" >&3
            sleep 0.3
            printf '{"activity":"end","id":"pack","content":{"progress":1},"dismissal":"immediate","timestamp":"%s"}\n' "$(now)" >&3
            """)
        try box.write("pack.yaml", """
            identifier: test.pack
            kind: processing
            command: ["\(box.root)/pack"]
            resubmit: {after: 1h}
            """)
        let from = Date()
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { daemon.cleanUp() }
        #expect(waitFor { daemon.errors().contains("refreshd started") })
        for _ in 0..<2 {
            usleep(1_000_000)
            let submit = try CLI.run(["ctl", "submit", "test.hourly", "--state", box.state])
            #expect(submit.status == 0, "\(submit.stderr)")
        }
        usleep(1_500_000)
        daemon.signal(SIGTERM)
        _ = daemon.wait()
        let (table, object) = try Self.replayed(box, from: from)
        let faults = try #require(object["faults"] as? [[String: Any]])
        #expect(faults.filter { $0["kind"] as? String == "operator" }.count == 2, "\(faults)")
        let comparison = try #require(object["comparison"] as? [String: Any])
        let jobs = try #require(comparison["jobs"] as? [[String: Any]])
        let hourly = try #require(figures(jobs, "test.hourly"))
        #expect((hourly["ran"] as? [String: Any])?["launched"] as? Int == 3, "its first run and the two submits: \(table)")
        #expect((hourly["replayed"] as? [String: Any])?["launched"] as? Int == 3, "\(table)")
        let activities = try #require(comparison["activities"] as? [[String: Any]])
        #expect(activities.map { $0["activity"] as? String } == ["pack"], "\(table)")
        let ran = try #require(activities.first?["ran"] as? [String: Any])
        #expect(ran["updates"] as? Int == 2 && ran["states"] as? [String] == ["active", "ended", "dismissed"]
                && ran["end"] as? String == "ended-by-request", "\(table)")
        let error = try #require(comparison["error"] as? [String: Any])
        #expect(error["exactActivities"] as? Int == 1 && error["activities"] as? Int == 1, "\(table)")
        #expect(table.contains("activities:\n  pack: 2 updates, active > ended (ended-by-request) > dismissed | 2 updates"), "\(table)")
    }

    @Test func badPeriodsAreRefusedClearly() throws {
        var r = try CLI.run(["simulate", "--replay", "yesterday"])
        #expect(r.status == 64 && r.stderr.contains("--replay: expected FROM..TO, each an ISO 8601 date"), "\(r.stderr)")
        r = try CLI.run(["simulate", "--replay", "2h..", "--days", "2"])
        #expect(r.status == 64 && r.stderr.contains("cannot be combined with"), "\(r.stderr)")
        let box = Sandbox()
        defer { box.remove() }
        r = try CLI.run(["simulate", "--replay", "2h..", "--state", box.root + "/missing"])
        #expect(r.status == 1 && r.stderr.contains(box.root + "/missing"), "\(r.stderr)")
    }
}
