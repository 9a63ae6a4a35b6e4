import Foundation
import Testing

/// `refreshd stats runs` and `refreshd watch` fold a template's instances (issue 23) under the
/// real daemon: one row a template with its counts and most failing instances, and
/// `--instance template[key]` for one instance.
@Suite(.serialized) struct InstanceFoldingCLITests {
    /// A template with 30 instances from its `instances:` list; `bad-*` fail (retried in an hour).
    static func daemon(_ box: Sandbox) throws -> CLI.Running {
        try box.write("feed.yaml", """
            identifier: test.feed.refresh
            template: true
            parameters: [user]
            instances: users.txt
            command: ["/bin/sh", "-c", "case $1 in bad*) exit 1;; esac", "sh", "{user}"]
            resubmit: {after: 6h}
            retry: {initial: 1h}
            """)
        let keys = (0..<30).map { $0 < 12 ? String(format: "bad-%02d", $0) : String(format: "user-%02d", $0) }
        try box.write("users.txt", keys.joined(separator: "\n") + "\n")
        return try CLI.start(["run", "--jobs", box.jobs, "--state", box.state, "--max-concurrent", "8"])
    }

    static func ranAll(_ box: Sandbox) -> Bool {
        guard let r = try? CLI.run(["stats", "runs", "--state", box.state, "--json"]), r.status == 0,
              let object = try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any],
              let rows = object["rows"] as? [[String: Any]] else { return false }
        return rows.first?["instances"] as? Int == 30
    }

    @Test func statsAndWatchFoldInstancesAndShowOne() throws {
        let box = Sandbox()
        defer { box.remove() }
        let daemon = try Self.daemon(box)
        defer { daemon.cleanUp() }
        #expect(waitFor(timeout: 30) { Self.ranAll(box) })

        let stats = try CLI.run(["stats", "runs", "--state", box.state, "--json"])
        #expect(stats.status == 0, "\(stats.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any])
        let rows = try #require(object["rows"] as? [[String: Any]])
        #expect(rows.count == 1, "one row for 30 instances: \(rows)")
        #expect(rows.first?["identifier"] as? String == "test.feed.refresh")
        #expect(rows.first?["failingInstances"] as? Int == 12)
        let most = try #require(rows.first?["mostFailing"] as? [[String: Any]])
        #expect(most.compactMap { $0["key"] as? String } == (0..<10).map { String(format: "bad-%02d", $0) })

        let text = try CLI.run(["stats", "runs", "--state", box.state])
        #expect(text.stdout.contains("  test.feed.refresh[*]  30 instances  30 runs: 18 success, 12 failure  12 failing"), "\(text.stdout)")
        let one = try CLI.run(["stats", "runs", "--state", box.state, "--instance", "test.feed.refresh[bad-03]"])
        #expect(one.stdout.contains("  test.feed.refresh[bad-03]  1 run: 1 failure"), "\(one.stdout)")
        #expect(!one.stdout.contains("bad-04"))
        let bad = try CLI.run(["stats", "runs", "--state", box.state, "--instance", "test.feed.refresh"])
        #expect(bad.status != 0 && bad.stderr.contains("--instance: expected template[key]"), "\(bad.stderr)")

        // status folds them too: one pending row and one last-outcome row for the template.
        let status = try CLI.run(["status", "--state", box.state])
        #expect(status.stdout.contains("  test.feed.refresh[*]  30 instances pending, next test.feed.refresh[bad-"), "\(status.stdout)")
        #expect(status.stdout.contains("  test.feed.refresh[*]  30 instances: 18 success, 12 failure"))
        #expect(status.stdout.split(separator: "\n").filter { $0.hasPrefix("  test.feed.refresh[") }.count == 2)

        // Not a terminal: the first screen, then events, for a second.
        let watch = try CLI.run(["watch", "--state", box.state, "--for", "1"])
        #expect(watch.status == 0, "\(watch.stderr)")
        #expect(watch.stdout.contains("test.feed.refresh[*]  30 instances pending, next bad-"), "\(watch.stdout)")
        #expect(watch.stdout.contains("  test.feed.refresh  30 instances  30 pending  0 running  12 failing"))
        #expect(watch.stdout.contains("    most failing: bad-00 (1), bad-01 (1)"))
        let single = try CLI.run(["watch", "--state", box.state, "--for", "1", "--instance", "test.feed.refresh[bad-03]"])
        #expect(single.stdout.contains("instance test.feed.refresh[bad-03]  failing: 1 consecutive failed attempt"), "\(single.stdout)")
        #expect(!single.stdout.contains("user-12"))
    }
}
