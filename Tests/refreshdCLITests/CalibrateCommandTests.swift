import Foundation
import Testing
import RefreshdCore
import RefreshdStore

/// `refreshd simulate --calibrate` (issue 34) on a real SQLite state written through the store.
@Suite struct CalibrateCommandTests {
    /// A state in `directory` holding, for `com.example.fetch`, 25 runs an hour apart over the
    /// last day (22 successes of 100 ms to 2.5 s, 2 failures with exit status 2, 1 expired run),
    /// 3 runs of `com.example.thin`, and a run of `com.example.old` ten days ago.
    static func writeState(_ directory: String) throws {
        let store = try StateStore.open(directory: directory)
        defer { store.close() }
        let now = Instant(secondsSinceEpoch: Date().timeIntervalSince1970)
        var id: Int64 = 0
        func add(_ identifier: String, hoursAgo: Int64, ms: Int64, _ outcome: Outcome, exit: Int32? = nil, signal: Int32? = nil) throws {
            id += 1
            let started = now - .seconds(hoursAgo * 3600)
            try store.apply([.runStarted(RunRecord(runID: id, identifier: identifier, kind: .processing, submitted: started,
                                                   earliest: started, started: started, deadline: started + .seconds(10)))])
            try store.apply([.runEnded(runID: id, identifier: identifier, ended: started + .milliseconds(ms), outcome: outcome,
                                       exitStatus: exit, signal: signal)])
        }
        try add("com.example.old", hoursAgo: 240, ms: 5, .success)
        for hour in Int64(1)...25 {
            switch hour {
            case 3, 7: try add("com.example.fetch", hoursAgo: 26 - hour, ms: hour * 100, .failure, exit: 2)
            case 20: try add("com.example.fetch", hoursAgo: 26 - hour, ms: 10_020, .expired, signal: 15)
            default: try add("com.example.fetch", hoursAgo: 26 - hour, ms: hour * 100, .success)
            }
        }
        for hour in Int64(1)...3 { try add("com.example.thin", hoursAgo: hour, ms: 50, .success) }
    }

    @Test func printsABlockPerJobThatCheckReads() throws {
        let box = Sandbox()
        defer { box.remove() }
        try Self.writeState(box.state)
        let r = try CLI.run(["simulate", "--calibrate", "--state", box.state])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix("# calibrated from the runs in \(box.state) started since "))
        #expect(r.stdout.contains("\n# com.example.fetch: calibrated from 25 runs over 1d, started "))
        #expect(r.stdout.contains("\n# 22 success, 2 failure (exit 2: 2), 1 expired, 0 crashed; 0 retries\nsimulate:\n  duration:\n"
                                  + "    quantiles: [100ms, 200ms, 300ms, 400ms, 500ms,"))
        #expect(r.stdout.contains(" 2s500ms,") && r.stdout.contains(" 10s20ms]\n  outcomes: {success: 22, failure: 2, crash: 0}\n"))
        #expect(r.stdout.contains("# com.example.thin: calibrated from 3 runs over 2h, started "))
        #expect(r.stdout.contains("# too thin to trust: fewer than 20 runs\n"))
        #expect(!r.stdout.contains("com.example.old"), "older than the default 7d")

        // The printed block, pasted into the job's file, passes `refreshd check`.
        let block = try #require(r.stdout.components(separatedBy: "\n\n").first { $0.contains("# com.example.fetch:") })
        try box.write("fetch.yaml", "identifier: com.example.fetch\nkind: processing\ncommand: [\"true\"]\nallowance: 10s\n" + block + "\n")
        let check = try CLI.run(["check", box.jobs])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")

        // --since reaches back to the old run.
        let all = try CLI.run(["simulate", "--calibrate", "--state", box.state, "--since", "30d"])
        #expect(all.stdout.contains("# com.example.old: calibrated from 1 run over 0s"))
    }

    @Test func printsJSON() throws {
        let box = Sandbox()
        defer { box.remove() }
        try Self.writeState(box.state)
        let r = try CLI.run(["simulate", "--calibrate", "--state", box.state, "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(object["minimumRuns"] as? Int == 20)
        let jobs = try #require(object["jobs"] as? [[String: Any]])
        #expect(jobs.map { $0["identifier"] as? String } == ["com.example.fetch", "com.example.thin"])
        #expect(jobs[0]["runs"] as? Int == 25 && jobs[0]["thin"] as? Bool == false && jobs[1]["thin"] as? Bool == true)
        #expect(jobs[0]["exitStatuses"] as? [String: Int] == ["2": 2])
        #expect((jobs[0]["durationQuantilesMs"] as? [Int])?.last == 10_020)
        #expect((jobs[0]["simulate"] as? String)?.contains("outcomes: {success: 22, failure: 2, crash: 0}") == true)
    }

    /// `--apply` simulates the jobs folder with the calibrated models and says which it used.
    @Test func appliesTheModels() throws {
        let box = Sandbox()
        defer { box.remove() }
        try Self.writeState(box.state)
        try box.write("fetch.yaml", "identifier: com.example.fetch\nkind: processing\ncommand: [\"true\"]\nallowance: 10s\nresubmit: {after: 1h}\n")
        try box.write("other.yaml", "identifier: com.example.other\nkind: processing\ncommand: [\"true\"]\nresubmit: {after: 1h}\n")
        let r = try CLI.run(["simulate", "--calibrate", "--apply", "--state", box.state, "--jobs", box.jobs,
                             "--days", "2", "--start", "2026-11-23T00:00:00Z", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("refreshd: simulating with the models calibrated from runs since "))
        #expect(r.stderr.contains(": com.example.fetch; no history, their own simulate: blocks: com.example.other\n"))
        let report = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let jobs = try #require(report["jobs"] as? [[String: Any]])
        let fetch = try #require(jobs.first { $0["identifier"] as? String == "com.example.fetch" })
        let figures = try #require(fetch["figures"] as? [String: Any])
        // 2 of 24 runs failed in the history: a model that fails sometimes, where the file's
        // own (none) never fails.
        #expect((figures["failure"] as? Int ?? 0) + (figures["expired"] as? Int ?? 0) > 0, "\(figures)")
    }

    @Test func badInputsAreRefusedClearly() throws {
        let box = Sandbox()
        defer { box.remove() }
        var r = try CLI.run(["simulate", "--calibrate", "--state", box.root + "/missing"])
        #expect(r.status == 1)
        #expect(r.stderr.hasPrefix("refreshd: simulate --calibrate: ") && r.stderr.contains(box.root + "/missing"), "\(r.stderr)")

        let empty = box.root + "/empty"
        try StateStore.open(directory: empty).close()
        r = try CLI.run(["simulate", "--calibrate", "--state", empty])
        #expect(r.status == 1)
        #expect(r.stderr.contains("no run in \(empty) started since ") && r.stderr.contains("(it holds no run at all); try a longer --since"),
                "\(r.stderr)")

        r = try CLI.run(["simulate", "--calibrate", "--state", empty, "--json"])
        #expect(r.status == 1 && r.stdout.contains("\"no-runs\""), "\(r.stdout)")

        r = try CLI.run(["simulate", "--calibrate", "--since", "yesterday"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("--since: expected a span like 7d or 12h, or an ISO 8601 date with an offset like "
                                  + "2026-11-23T00:00:00Z, found \"yesterday\""), "\(r.stderr)")
        r = try CLI.run(["simulate", "--since", "7d"])
        #expect(r.status == 64 && r.stderr.contains("--since needs --calibrate"), "\(r.stderr)")
        r = try CLI.run(["simulate", "--calibrate", "--days", "3"])
        #expect(r.status == 64 && r.stderr.contains("add --apply"), "\(r.stderr)")
    }
}
