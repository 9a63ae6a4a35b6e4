import Foundation
import Testing

/// The simulator's error, measured (issue 34, item 4): a real `refreshd run` of a compressed-time
/// job set (a job every second, a failing one, one overrunning its allowance, a timeline whose
/// budget runs out, a job driving a live activity every 3 s), stopped once and killed with
/// kill -9 once, then `simulate --replay` of those seconds with the same files. The test prints
/// the error line.
///
/// What must agree exactly (nothing random decides it): each job's outcomes (the tick never
/// fails, the failing job never succeeds, the slow one always expires), the widget's reloads
/// performed, provider calls and lowest budget (the budget bounds them), each activity's
/// updates, states and end (its lines are replayed as written). Within a tolerance,
/// because timing decides it:
/// - runs per job, one: the daemon launches a few milliseconds after the instant the replay
///   launches at, so a run right at a stop or the kill falls on either side of it;
/// - reloads deferred, one: a deferred request coalesced or not depends on which side of a
///   restart it fell;
/// - stale time, 2 s: the replay places the kill -9 at the last instant the state knew of,
///   before the real one.
///
/// Measured (three runs): 59 runs, 0 apart, outcomes 0 apart, lateness p50 at most 4 ms apart,
/// the widget exact to the millisecond; with the activity job (three runs): 69 runs, 0 apart,
/// 10 of 10 activities exact. A defect it avoids rather than measures: a run killed by kill -9
/// keeps no results lines (they are committed with its end), so an activity it drove is not
/// replayed; the kill falls between the pack's runs (at 6-6.9 s and 9-9.9 s of that leg). Before the fix in `Replay.replayedRun` (an interrupted
/// run lasts until the stop ended it), the slow job's run at the stop ended "ok" in the replay.
///
/// No clock step: the daemon reads `CLOCK_REALTIME`, which only root (CAP_SYS_TIME) can step,
/// and stepping it would disturb every other process on the machine; the replay of a recorded
/// step is checked on the simulator's own records (`ReplayTests`).
@Suite(.serialized) struct ReplayMeasureTests {
    static let jobs: [String: String] = [
        "tick.yaml": """
            identifier: measure.tick
            kind: processing
            command: ["/bin/true"]
            resubmit: {after: 1s}
            """,
        "failing.yaml": """
            identifier: measure.failing
            kind: processing
            command: ["/bin/sh", "-c", "exit 3"]
            resubmit: {after: 2s}
            """,
        "slow.yaml": """
            identifier: measure.slow
            kind: processing
            command: ["/bin/sleep", "5"]
            allowance: 1s
            resubmit: {after: 2s}
            """,
        "pack.yaml": """
            identifier: measure.pack
            kind: processing
            command: ["PACK"]
            resubmit: {after: 3s}
            """,
        "widget.yaml": """
            identifier: measure.widget
            kind: timeline
            command: ["PROVIDER"]
            widget: {kind: measure, families: [systemSmall], budget: 4, min-reload-interval: 0s}
            """,
    ]

    /// One entry now, the next reload 2 s later: four reloads spend the budget.
    static let provider = """
        #!/bin/sh
        now=$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)
        next=$(date -u -d '+2 seconds' +%Y-%m-%dT%H:%M:%S.%3NZ)
        printf '{"entries":[{"date":"%s","content":{"asset":"a"}}],"policy":{"after":"%s"}}\\n' "$now" "$next" >&3
        """

    /// An activity a run, two updates 0.3 s apart, then its end.
    static let pack = """
        #!/bin/sh
        now() { date -u +%Y-%m-%dT%H:%M:%S.%3NZ; }
        id="pack-$REFRESH_RUN_ID"
        printf '{"activity":"start","id":"%s","type":"Pack","content":{"progress":0}}\\n' "$id" >&3
        sleep 0.3
        printf '{"activity":"update","id":"%s","content":{"progress":0.5},"timestamp":"%s"}\\n' "$id" "$(now)" >&3
        sleep 0.3
        printf '{"activity":"update","id":"%s","content":{"progress":0.9},"timestamp":"%s"}\\n' "$id" "$(now)" >&3
        sleep 0.3
        printf '{"activity":"end","id":"%s","content":{"progress":1},"dismissal":"immediate","timestamp":"%s"}\\n' "$id" "$(now)" >&3
        """

    @Test func aReplayOfUnchangedFilesReproducesWhatRan() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.writeScript("provider", Self.provider)
        try box.writeScript("pack", Self.pack)
        for (name, text) in Self.jobs {
            try box.write(name, text.replacingOccurrences(of: "PROVIDER", with: box.root + "/provider")
                .replacingOccurrences(of: "PACK", with: box.root + "/pack"))
        }
        let period = try ReplayCommandTests.stopKillStop(box, seconds: [10.5, 7.5, 7.5])

        let table = try CLI.run(["simulate", "--replay", period, "--state", box.state, "--ran-jobs", box.jobs])
        #expect(table.status == 0, "\(table.stdout)\(table.stderr)")
        let errorLine = table.stdout.split(separator: "\n").first { $0.hasPrefix("simulator's error") } ?? "(no error line)"
        print("replay measure: \(errorLine)")
        let r = try CLI.run(["simulate", "--replay", period, "--state", box.state, "--ran-jobs", box.jobs, "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let comparison = try #require(object["comparison"] as? [String: Any])
        let context = table.stdout

        // Runs: per job and outcome.
        let jobs = try #require(comparison["jobs"] as? [[String: Any]])
        func value(_ row: [String: Any], _ side: String, _ field: String) -> Int {
            (row[side] as? [String: Any])?[field] as? Int ?? -1
        }
        for (job, outcome) in [("measure.tick", "success"), ("measure.failing", "failure"), ("measure.slow", "expired"),
                               ("measure.widget#systemSmall", "success"), ("measure.pack", "success")] {
            let row = try #require(jobs.first { $0["job"] as? String == job }, "\(job) in \(context)")
            #expect(value(row, "ran", "launched") >= 2, "\(job) ran: \(context)")
            #expect(abs(value(row, "ran", "launched") - value(row, "replayed", "launched")) <= 1, "\(job): \(context)")
            // Runs in flight at the stop or the kill end interrupted on both sides; every other
            // run ends as the job always does.
            for side in ["ran", "replayed"] {
                let ended = value(row, side, outcome) + value(row, side, "interrupted")
                #expect(ended == value(row, side, "launched"), "\(job) \(side) ends \(outcome): \(context)")
            }
        }

        // The widget: reloads, calls and the budget exactly; deferrals and stale time within the tolerance.
        let widgets = try #require(comparison["widgets"] as? [[String: Any]])
        let widget = try #require(widgets.first { $0["widget"] as? String == "measure/systemSmall" }, "\(context)")
        func w(_ side: String, _ field: String) -> Int64 {
            ((widget[side] as? [String: Any])?[field] as? NSNumber)?.int64Value ?? -1
        }
        #expect(w("ran", "reloadsPerformed") == 4 && w("replayed", "reloadsPerformed") == 4, "\(context)")
        #expect(w("ran", "providerCalls") == w("replayed", "providerCalls"), "\(context)")
        #expect(w("ran", "budgetLow") == 0 && w("replayed", "budgetLow") == 0, "\(context)")
        #expect(w("ran", "reloadsDeferred") >= 1 && abs(w("ran", "reloadsDeferred") - w("replayed", "reloadsDeferred")) <= 1, "\(context)")
        #expect(w("ran", "staleMilliseconds") > 10_000, "stale from the spent budget to the end: \(context)")
        #expect(abs(w("ran", "staleMilliseconds") - w("replayed", "staleMilliseconds")) <= 2_000, "\(context)")
        #expect(context.contains("widgets:\n  measure/systemSmall: "), "\(context)")

        // The activities: one a pack run, each exact.
        let error = try #require(comparison["error"] as? [String: Any])
        #expect((error["activities"] as? Int ?? 0) >= 6, "\(context)")
        #expect(error["exactActivities"] as? Int == error["activities"] as? Int, "\(context)")
        #expect(context.contains("activities:\n  pack-"), "\(context)")
    }
}
