import Foundation
import Testing

/// `ctl activity` and `ctl instance add|remove` are orders from outside the job files (issue 34):
/// a real refreshd records each in its own commit. `simulate --replay` gives the activity's
/// start, update and end back, so the operator's activity is replayed as it ran; the instances'
/// orders are named in its notes (not replayed yet: an instance added to a running simulated
/// runtime trips `pending-count-mismatch`, `Replay.instanceNotes`).
@Suite(.serialized) struct ReplayOrdersTests {
    @Test func anOperatorsActivityIsReplayedAsItRanAndItsInstancesAreNamed() throws {
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
        let period = ReplayCommandTests.period(from, Date())

        let table = try CLI.run(["simulate", "--replay", period, "--state", box.state, "--ran-jobs", box.jobs]).stdout
        let r = try CLI.run(["simulate", "--replay", period, "--state", box.state, "--ran-jobs", box.jobs, "--json"])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let details = (object["faults"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String == "operator" }.compactMap { $0["detail"] as? String }
        #expect(details == ["ctl activity start op", "ctl activity update op", "ctl activity end op"], "\(details)")
        let notes = (object["notes"] as? [String] ?? []).joined(separator: "\n")
        #expect(notes.contains("ctl instance add test.feed alice at ") && notes.contains("ctl instance remove test.feed alice at "), "\(notes)")
        #expect((object["violations"] as? [Any])?.isEmpty == true, "\(r.stdout)")
        let comparison = try #require(object["comparison"] as? [String: Any])
        let activity = try #require((comparison["activities"] as? [[String: Any]] ?? []).first { $0["activity"] as? String == "op" }, "\(table)")
        #expect((activity["ran"] as? [String: Any])?["states"] as? [String] == ["active", "ended", "dismissed"], "\(table)")
        let error = try #require(comparison["error"] as? [String: Any])
        #expect(error["exactActivities"] as? Int == 1 && error["activities"] as? Int == 1, "\(table)")
    }
}
