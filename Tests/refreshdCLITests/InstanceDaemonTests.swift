import Foundation
import Testing

/// Templates under the real `refreshd run` (issue 23): 1,000 instances added through
/// `refreshd ctl instance add`, run, kill -9, restart: every instance, pending request and
/// retry backoff is still there; removed instances' requests are gone.
@Suite(.serialized) struct InstanceDaemonTests {
    /// The pending requests (`ctl pending --json`): identifier -> (earliest, origin).
    func pending(_ box: Sandbox) -> [String: (String, String)] {
        guard let r = try? CLI.run(["ctl", "pending", "--state", box.state, "--json"]), r.status == 0,
              let object = try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any],
              let list = object["pending"] as? [[String: Any]] else { return [:] }
        var result: [String: (String, String)] = [:]
        for p in list {
            if let id = p["identifier"] as? String, let earliest = p["earliest"] as? String, let origin = p["origin"] as? String {
                result[id] = (earliest, origin)
            }
        }
        return result
    }

    func listed(_ box: Sandbox) -> [String] {
        guard let r = try? CLI.run(["ctl", "instance", "list", "test.feed.refresh", "--state", box.state, "--json"]),
              r.status == 0,
              let object = try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any],
              let list = object["instances"] as? [[String: Any]] else { return [] }
        return list.compactMap { $0["key"] as? String }
    }

    /// Issue 36: `ctl submit TEMPLATE` (and the other orders) said "is not a declared job" with
    /// no word of the instances, `TEMPLATE[KEY]`, that run in its place.
    @Test func anOrderNamingATemplatePointsAtItsInstances() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("feed.yaml", """
            identifier: test.feed.refresh
            template: true
            parameters: [user]
            command: ["/bin/true", "{user}"]
            """)
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { daemon.cleanUp() }
        #expect(waitFor { daemon.errors().contains("refreshd started") })
        for order in [["submit"], ["simulate-launch"], ["cancel"]] {
            let r = try CLI.run(["ctl"] + order + ["test.feed.refresh", "--state", box.state])
            #expect(r.status == 1, "\(order): \(r.stdout) \(r.stderr)")
            #expect(r.stderr.contains("test.feed.refresh is a template, not a job"), "\(order): \(r.stderr)")
            #expect(r.stderr.contains("expected an instance, test.feed.refresh[KEY]"), "\(order): \(r.stderr)")
        }
        let unknown = try CLI.run(["ctl", "submit", "test.feed", "--state", box.state])
        #expect(unknown.stderr.contains("test.feed is not a declared job"), "\(unknown.stderr)")
        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)
    }

    @Test func aThousandInstancesRunSurviveKill9AndRemovalIsForGood() throws {
        let box = Sandbox()
        defer { box.remove() }
        // Keys starting with "bad" fail: a retry with an hour's backoff follows.
        try box.write("feed.yaml", """
            identifier: test.feed.refresh
            template: true
            parameters: [user]
            command: ["/bin/sh", "-c", "case $1 in bad*) exit 1;; esac", "sh", "{user}"]
            resubmit: {after: 6h}
            retry: {initial: 1h}
            """)
        let keys = (0..<1000).map { $0 % 10 == 0 ? "bad-\($0)" : "user-\($0)@example.com" }
        try keys.joined(separator: "\n").write(toFile: box.root + "/keys", atomically: true, encoding: .utf8)
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state, "--max-concurrent", "8"])
        defer { daemon.cleanUp() }
        #expect(waitFor { daemon.errors().contains("refreshd started") })
        let added = try CLI.run(["ctl", "instance", "add", "test.feed.refresh", "--keys-from", box.root + "/keys",
                                 "--state", box.state], timeout: 60)
        #expect(added.status == 0, "\(added.stderr)")
        // One request for the 1,000 keys (a batch commits in one transaction), one reply line.
        #expect(added.stdout == "added 1000 instances of test.feed.refresh\n", "\(added.stdout)")
        // Every instance ran once: each has its next request (resubmit) or its retry.
        var before: [String: (String, String)] = [:]
        #expect(waitFor(timeout: 60) {
            before = pending(box)
            return before.count == 1000 && before.values.allSatisfy { $0.1 != "submitted" }
        })
        #expect(before.values.filter { $0.1 == "retry" }.count == 100)
        #expect(before["test.feed.refresh[bad-0]"]?.1 == "retry")

        daemon.signal(SIGKILL)
        #expect(daemon.wait() == 128 + SIGKILL)
        let again = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { again.cleanUp() }
        #expect(waitFor { again.errors().contains("refreshd started") })
        #expect(again.errors().contains("1000 pending"))
        let after = pending(box)
        #expect(after.count == 1000)
        #expect(after.keys.sorted() == before.keys.sorted())
        #expect(after.allSatisfy { before[$0.key]! == $0.value }, "a request or its backoff changed across kill -9")
        #expect(listed(box) == keys)

        // Removed instances' requests are gone, for good (a restart does not bring them back).
        let removed = try CLI.run(["ctl", "instance", "remove", "test.feed.refresh", "bad-0", "user-1@example.com",
                                   "--state", box.state])
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(removed.stdout.contains("removed test.feed.refresh[bad-0]: its pending request cancelled"))
        let left = pending(box)
        #expect(left.count == 998 && left["test.feed.refresh[bad-0]"] == nil && left["test.feed.refresh[user-1@example.com]"] == nil)
        again.signal(SIGTERM)
        #expect(again.wait() == 0)
        let third = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { third.cleanUp() }
        #expect(waitFor { third.errors().contains("refreshd started") })
        #expect(pending(box).count == 998)
        #expect(listed(box).count == 998)
        // Refusals are named, with their code.
        let unknown = try CLI.run(["ctl", "instance", "add", "test.nope", "k", "--state", box.state])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("test.nope is not a declared template") && unknown.stderr.contains("[unknown-template]"))
        third.signal(SIGTERM)
        #expect(third.wait() == 0)
    }

    /// Issue 23's "done when": a template with 10,000 instances under the real daemon, added by
    /// a sync job's results (ten lines of 1,000 keys), waiting for their first slot an hour
    /// ahead; kill -9 and a restart keep every one with its request; ctl removes one for good.
    @Test func tenThousandInstancesFromASyncJobSurviveKill9() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.writeScript("Scripts/sync", """
            #!/bin/sh
            q='"'
            i=0
            while [ $i -lt 10 ]; do
              line='{"instances":"test.feed.refresh","set":['
              j=0
              while [ $j -lt 1000 ]; do
                [ $j -gt 0 ] && line="$line,"
                line="$line${q}u$((i * 1000 + j))${q}"
                j=$((j + 1))
              done
              printf '%s]}\n' "$line" >&3
              i=$((i + 1))
            done
            """)
        try box.write("feed.yaml", """
            identifier: test.feed.refresh
            template: true
            parameters: [user]
            command: ["/bin/true", "{user}"]
            earliest: +1h
            """)
        try box.write("sync.yaml", """
            identifier: test.feed.sync
            kind: processing
            command: ["Scripts/sync"]
            """)
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { daemon.cleanUp() }
        var before: [String: (String, String)] = [:]
        #expect(waitFor(timeout: 60) {
            before = pending(box)
            return before.count == 10_000
        })
        #expect(daemon.errors().contains("test.feed.sync[1] reported 10 results"))
        daemon.signal(SIGKILL)
        #expect(daemon.wait() == 128 + SIGKILL)
        let again = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { again.cleanUp() }
        #expect(waitFor(timeout: 30) { again.errors().contains("refreshd started") })
        let after = pending(box)
        // The sync job ran once (no resubmit): what is pending is the instances' requests.
        #expect(after.count == 10_000)
        #expect(after.allSatisfy { entry in before[entry.key].map { $0 == entry.value } ?? false })
        let removed = try CLI.run(["ctl", "instance", "remove", "test.feed.refresh", "u42", "--state", box.state])
        #expect(removed.status == 0)
        #expect(pending(box)["test.feed.refresh[u42]"] == nil)
        #expect(listed(box).count == 9_999)
        // Pages: at most 10,000 a reply; --after KEY goes on from there.
        let page = try CLI.run(["ctl", "instance", "list", "test.feed.refresh", "--after", "u40", "--limit", "3",
                                "--state", box.state, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(page.stdout.utf8)) as? [String: Any])
        #expect((object["instances"] as? [[String: Any]])?.compactMap { $0["key"] as? String } == ["u41", "u43", "u44"])
        #expect(object["nextAfter"] as? String == "u44")
        again.signal(SIGTERM)
        #expect(again.wait() == 0)
    }

    /// `instances: users.txt` in the jobs folder is watched like the job files: an edit adds and
    /// removes instances (a diff: the ones kept keep their requests), no restart.
    @Test func anInstancesFileInTheJobsFolderIsWatched() throws {
        let box = Sandbox()
        defer { box.remove() }
        try "alice\nbob\n".write(toFile: box.jobs + "/users.txt", atomically: true, encoding: .utf8)
        try box.write("feed.yaml", """
            identifier: test.feed.refresh
            template: true
            parameters: [user]
            command: ["/bin/true", "{user}"]
            earliest: +1h
            instances: users.txt
            """)
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { daemon.cleanUp() }
        #expect(waitFor { daemon.errors().contains("refreshd started") })
        #expect(waitFor { listed(box) == ["alice", "bob"] })
        let alice = pending(box)["test.feed.refresh[alice]"]
        #expect(alice != nil)
        try "alice\ncarol\n".write(toFile: box.jobs + "/users.txt", atomically: true, encoding: .utf8)
        #expect(waitFor { listed(box) == ["alice", "carol"] })
        let now = pending(box)
        #expect(now["test.feed.refresh[bob]"] == nil)
        #expect(now["test.feed.refresh[carol]"] != nil)
        #expect(now["test.feed.refresh[alice]"].map { $0 == alice! } == true)
        // A broken list is refused like a broken job file: the running set stays.
        try "alice\nno good\n".write(toFile: box.jobs + "/users.txt", atomically: true, encoding: .utf8)
        #expect(waitFor { daemon.errors().contains("users.txt:2:1: instances: the key \"no good\"") })
        #expect(listed(box) == ["alice", "carol"])
        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)
    }
}
