import Foundation
import Testing

/// `refreshd simulate` and `refreshd test` end to end, on the shipped scenarios.
@Suite struct SimulateCommandTests {
    static let project = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    @Test func theShippedScenariosPass() throws {
        let dir = Self.project + "/Tests/Scenarios"
        let files = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".yaml") }.sorted()
        #expect(files.count >= 8)
        let r = try CLI.run(["test"] + files.map { dir + "/" + $0 }, timeout: 120)
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.hasSuffix("\(files.count) passed, 0 failed\n"))
    }

    /// Issue 32: `simulate --nodes N --json` prints the cluster report as JSON (it printed the
    /// text report), with the fault, the stop and every count; `--explore --json` too.
    @Test func aClusterSimulationPrintsJSON() throws {
        let r = try CLI.run(["simulate", "--jobs", Self.project + "/Jobs", "--days", "1", "--start", "2026-11-23T00:00:00Z",
                             "--nodes", "3", "--node-fault", "kill:0@600+60", "--node-fault", "stop:1@1200", "--json"], timeout: 120)
        #expect(r.status == 0, "\(r.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], "\(r.stdout.prefix(300))")
        #expect(object["nodes"] as? Int == 3)
        #expect(object["shards"] as? Int == 16)
        #expect((object["faults"] as? [String])?.count == 2)
        #expect((object["stopSeconds"] as? [Double])?.count == 1)
        #expect((object["violations"] as? [String]) == [])
        #expect((object["launches"] as? Int ?? 0) > 0)
        #expect(((object["ownership"] as? [[String: Any]]) ?? []).allSatisfy { $0["shard"] is Int && $0["from"] is Double })
        let explored = try CLI.run(["simulate", "--jobs", Self.project + "/Jobs", "--start", "2026-11-23T00:00:00Z",
                                    "--nodes", "3", "--explore", "2", "--json"], timeout: 120)
        #expect(explored.status == 0, "\(explored.stderr)")
        let plans = try #require(try JSONSerialization.jsonObject(with: Data(explored.stdout.utf8)) as? [String: Any])
        #expect((plans["plans"] as? [[String: Any]])?.count == 2)
        #expect((plans["totals"] as? [String: Any])?["duplicates"] as? Int == 0)
    }

    /// Issue 32: `--explore` on several nodes finds the planted placement of plain jobs by
    /// identifier (hidden `--inject-misplaced-jobs`) that splits a namespace's shared budget, and
    /// exits 1; the real placement passes the same plans. `--svg` draws job and shard lanes.
    @Test func exploredPlansFindAMisplacedSharedBudgetAndThePictureHasJobAndShardLanes() throws {
        let box = Sandbox()
        defer { box.remove() }
        for kind in ["weather", "photos"] {
            try box.write("\(kind).yaml", """
                identifier: test.app.\(kind)
                kind: timeline
                command: ["/bin/true"]
                widget: {kind: \(kind), families: [systemSmall], budget: 6, budget-scope: namespace, min-reload-interval: 0s}
                simulate: {duration: 2s, timeline: {every: 2m, count: 1, policy: at-end}}

                """)
        }
        let args = ["simulate", "--jobs", box.jobs, "--start", "2026-11-23T00:00:00Z", "--seed", "7", "--nodes", "3", "--explore", "2"]
        let real = try CLI.run(args, timeout: 120)
        #expect(real.status == 0, "\(real.stdout)\(real.stderr)")
        let planted = try CLI.run(args + ["--inject-misplaced-jobs"], timeout: 120)
        #expect(planted.status == 1, "\(planted.stdout)\(planted.stderr)")
        #expect(planted.stdout.components(separatedBy: "VIOLATED: the namespace test.app budget shared by photos, weather: ").count == 3,
                "\(planted.stdout)")
        let refused = try CLI.run(["simulate", "--jobs", box.jobs, "--inject-misplaced-jobs"])
        #expect(refused.status == 64 && refused.stderr.contains("--inject-misplaced-jobs needs --nodes"), "\(refused.stderr)")
        let svg = box.root + "/cluster.svg"
        let drawn = try CLI.run(["simulate", "--jobs", box.jobs, "--start", "2026-11-23T00:00:00Z", "--days", "1", "--nodes", "2",
                                 "--node-fault", "kill:0@600+60", "--svg", svg], timeout: 120)
        #expect(drawn.status == 0, "\(drawn.stderr)")
        let picture = try String(contentsOfFile: svg, encoding: .utf8)
        #expect(picture.contains(">test.app.weather</text>") && picture.contains(">test.app.photos</text>"))
        #expect(picture.contains(">widget weather/systemSmall</text>"))
        #expect(picture.components(separatedBy: "font-size=\"12\">shard ").count == 17)
        #expect(picture.contains("class=\"takeover\"") && picture.contains(">kill node0</text>"))
    }

    /// A plan count that cannot run is refused with the range, not a trap (Int.max once asked
    /// for an array of that many results).
    @Test func exploreRefusesAPlanCountOutOfRange() throws {
        for bad in ["0", "1000001", "9223372036854775807"] {
            let r = try CLI.run(["test", "--explore", bad, "--jobs", "Jobs"])
            #expect(r.status == 64, "\(bad): \(r.stderr)")
            #expect(r.stderr.contains("--explore must be between 1 and 1000000"), "\(bad): \(r.stderr)")
        }
    }

    @Test func aFailingExpectationFailsWithItsSeedAndCommand() throws {
        let box = Sandbox()
        defer { box.remove() }
        let path = box.root + "/wrong.yaml"
        try """
            name: expects too much
            start: 2026-11-23T00:00:00Z
            days: 1
            jobs:
              - identifier: test.once
                kind: processing
                command: ["/bin/true"]
            expect:
              - runs: {job: test.once, outcome: success, equal: 2}
            """.write(toFile: path, atomically: true, encoding: .utf8)
        let r = try CLI.run(["test", path])
        #expect(r.status == 1)
        #expect(r.stdout.contains("FAIL expects too much (seed 1)"))
        #expect(r.stdout.contains("expected test.once success == 2, found 1"))
        #expect(r.stdout.contains("reproduce: refreshd simulate --scenario \(path) --seed 1"))
        #expect(r.stdout.hasSuffix("0 passed, 1 failed\n"))
    }

    @Test func simulateReportsAsJSONAndDrawsAPicture() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("tick.yaml", """
            identifier: test.tick
            kind: processing
            command: ["/bin/true"]
            resubmit: {after: 1h}
            simulate: {duration: 2s, outcomes: {success: 3, failure: 1}}
            """)
        let svg = box.root + "/week.svg"
        let args = ["simulate", "--jobs", box.jobs, "--days", "2", "--start", "2026-11-23T00:00:00Z", "--seed", "5"]
        let r = try CLI.run(args + ["--json", "--svg", svg])
        #expect(r.status == 0, "\(r.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        for key in ["start", "seed", "days", "jobs", "faults", "violations"] { #expect(object[key] != nil, "\(key)") }
        #expect(object["start"] as? String == "2026-11-23T00:00:00.000Z")
        #expect((object["days"] as? [Any])?.count == 2)
        let again = try CLI.run(args + ["--json"])
        #expect(again.stdout == r.stdout)  // deterministic, byte for byte
        let picture = try String(contentsOfFile: svg, encoding: .utf8)
        #expect(picture.hasPrefix("<svg") && picture.contains("test.tick"))
        let text = try CLI.run(args)
        #expect(text.stdout.contains("simulation \(box.jobs): 2 days from 2026-11-23T00:00:00.000Z"))
        #expect(text.stdout.contains("invariants: all held"))
    }

    /// `--exec` runs the real commands with the virtual now in their environment; their exit
    /// status is the run's outcome.
    @Test func execRunsTheRealCommandsAtVirtualTimes() throws {
        let box = Sandbox()
        defer { box.remove() }
        let shared = box.root + "/shared"
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
        try box.write("note.yaml", """
            identifier: test.note
            kind: processing
            command: ["/bin/sh", "-c", "echo $REFRESH_VIRTUAL_NOW >> $REFRESH_SHARED_CONTAINER/now.txt"]
            resubmit: {calendar: "*-*-* 04:00", timezone: UTC}
            """)
        try box.write("fail.yaml", """
            identifier: test.fail
            kind: processing
            command: ["/bin/sh", "-c", "exit 3"]
            earliest: +1h
            """)
        let r = try CLI.run(["simulate", "--jobs", box.jobs, "--days", "2", "--start", "2026-11-23T00:00:00Z",
                             "--exec", "--shared", shared, "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let written = try String(contentsOfFile: shared + "/now.txt", encoding: .utf8)
        #expect(written == "2026-11-23T04:00:00.000Z\n2026-11-24T04:00:00.000Z\n")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let jobs = try #require(object["jobs"] as? [[String: Any]])
        let fail = try #require(jobs.first { $0["identifier"] as? String == "test.fail" }?["figures"] as? [String: Any])
        #expect(fail["failure"] as? Int == 1)
    }
}
