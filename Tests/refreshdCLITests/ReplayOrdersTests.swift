import Foundation
import Testing

/// `ctl activity` and `ctl instance add|remove` are orders from outside the job files (issue 34):
/// a real refreshd records each in its own commit, and `simulate --replay` gives them back, so
/// the instance's runs (under its template, as the simulation's report counts them) and the
/// operator's activity are replayed as they ran.
@Suite(.serialized) struct ReplayOrdersTests {
    @Test func anOperatorsInstancesAndActivityAreReplayedAsTheyRan() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("feed.yaml", """
            identifier: test.feed
            kind: processing
            template: true
            parameters: [user]
            command: ["/bin/true"]
            resubmit: {after: 1s}
            """)
        let from = Date()
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { daemon.cleanUp() }
        #expect(waitFor { daemon.errors().contains("refreshd started") })
        usleep(500_000)
        let add = try CLI.run(["ctl", "instance", "add", "test.feed", "alice", "--state", box.state])
        #expect(add.status == 0, "\(add.stderr)")
        let start = try CLI.run(["ctl", "activity", "start", "op", "--type", "Maintenance", "--progress", "0.1", "--state", box.state])
        #expect(start.status == 0, "\(start.stderr)")
        usleep(700_000)
        #expect(try CLI.run(["ctl", "activity", "update", "op", "--progress", "0.5", "--state", box.state]).status == 0)
        // Between two of alice's launches (every second from her add).
        usleep(1_800_000)
        let remove = try CLI.run(["ctl", "instance", "remove", "test.feed", "alice", "--state", box.state])
        #expect(remove.status == 0, "\(remove.stderr)")
        let end = try CLI.run(["ctl", "activity", "end", "op", "--progress", "1", "--dismissal", "immediate", "--state", box.state])
        #expect(end.status == 0, "\(end.stderr)")
        usleep(1_000_000)
        daemon.signal(SIGTERM)
        _ = daemon.wait()
        let (table, object) = try ReplayCommandTests.replayed(box, from: from)
        let details = (object["faults"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String == "operator" }.compactMap { $0["detail"] as? String }
        #expect(details == ["ctl instance add test.feed alice", "ctl activity start op", "ctl activity update op",
                            "ctl instance remove test.feed alice", "ctl activity end op"], "\(details)")
        // An instance added to a running simulation used to trip the simulator's incremental
        // check (`pending-count-mismatch`, queue count 1, requests 0).
        #expect((object["violations"] as? [Any])?.isEmpty == true, "\(object["violations"] ?? "")")
        let comparison = try #require(object["comparison"] as? [String: Any])
        let feed = try #require((comparison["jobs"] as? [[String: Any]] ?? []).first { $0["job"] as? String == "test.feed" && $0["day"] == nil },
                                "\(table)")
        let ran = (feed["ran"] as? [String: Any])?["launched"] as? Int ?? -1
        let replayed = (feed["replayed"] as? [String: Any])?["launched"] as? Int ?? -1
        // Alice's runs from the add to the remove (the suite's tolerance of one run, as
        // elsewhere: the daemon's loop launches a few milliseconds after the replay's instant).
        #expect(ran >= 2 && abs(ran - replayed) <= 1, "ran \(ran), replayed \(replayed)\n\(table)")
        let activity = try #require((comparison["activities"] as? [[String: Any]] ?? []).first { $0["activity"] as? String == "op" }, "\(table)")
        #expect((activity["ran"] as? [String: Any])?["states"] as? [String] == ["active", "ended", "dismissed"], "\(table)")
        let error = try #require(comparison["error"] as? [String: Any])
        #expect(error["exactActivities"] as? Int == 1 && error["activities"] as? Int == 1, "\(table)")
    }

    /// A run killed by kill -9 while it drives a live activity: the lines it wrote are saved as
    /// they are applied (in its run's row), so the restart's state keeps them and the replay
    /// drives the activity again. Before, they were saved at the run's end, which never came.
    @Test func aRunKilledByKill9KeepsTheLinesThatDroveItsActivity() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.writeScript("pack", """
            #!/bin/sh
            now() { date -u +%Y-%m-%dT%H:%M:%S.%3NZ; }
            printf '{"activity":"start","id":"pack","type":"Pack","content":{"progress":0},"timestamp":"%s"}\\n' "$(now)" >&3
            sleep 0.3
            printf '{"activity":"update","id":"pack","content":{"progress":0.5},"timestamp":"%s"}\\n' "$(now)" >&3
            sleep 4
            """)
        try box.write("pack.yaml", """
            identifier: test.pack
            kind: processing
            command: ["\(box.root)/pack"]
            allowance: 60s
            resubmit: {after: 1h}
            """)
        let from = Date()
        var daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        #expect(waitFor { daemon.errors().contains("refreshd started") })
        // Its update applied (the daemon's own state says 50%), then kill -9 mid-run.
        #expect(waitFor(timeout: 5) { WidgetOpsCLITests.activity(box.status(), "pack")?["progressPercent"] as? Double == 50 },
                "\(daemon.errors())")
        usleep(500_000)
        daemon.signal(SIGKILL)
        _ = daemon.wait()
        daemon.cleanUp()
        usleep(1_000_000)
        // The restart sweeps the killed run's processes and ends its activity.
        daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { daemon.cleanUp() }
        #expect(waitFor { daemon.errors().contains("refreshd started") })
        usleep(1_000_000)
        daemon.signal(SIGTERM)
        _ = daemon.wait()
        let (table, object) = try ReplayCommandTests.replayed(box, from: from)
        let comparison = try #require(object["comparison"] as? [String: Any])
        let activity = try #require((comparison["activities"] as? [[String: Any]] ?? []).first { $0["activity"] as? String == "pack" }, "\(table)")
        let ran = activity["ran"] as? [String: Any] ?? [:]
        #expect((ran["updates"] as? Int ?? 0) >= 1 && (ran["states"] as? [String])?.first == "active", "\(table)")
        let error = try #require(comparison["error"] as? [String: Any])
        #expect(error["exactActivities"] as? Int == 1 && error["activities"] as? Int == 1, "\(table)")
    }
}
