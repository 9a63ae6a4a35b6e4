import Foundation
import Testing

/// `refreshd simulate --exec` runs real commands through the libuv host's process code, with
/// virtual time running with real time while they run: the runtime's allowance and grace, fd 3
/// results, the whole group killed when `simulate` is stopped. Each job carries a marker in its environment, to find (and at the end kill) every
/// process it left.
@Suite struct SimulateExecTests {
    /// An allowance of 2 s ends `sleep 1000` (expired) 2 s after its start, and a command that
    /// ignores the SIGTERM is killed when its 1 s grace is over; the modelled runs last what
    /// the real ones did, and nothing of them is left.
    @Test func theAllowanceAndTheGraceEndARealCommand() throws {
        let box = Sandbox()
        let marker = "REFRESHD_EXEC_TEST=\(UUID().uuidString)"
        defer { Self.kill(marker); box.remove() }
        try box.write("sleeper.yaml", """
            identifier: test.sleeper
            kind: processing
            command: ["/bin/sleep", "1000"]
            environment: {\(Self.field(marker))}
            allowance: 2s
            grace: 1s
            """)
        try box.write("stubborn.yaml", """
            identifier: test.stubborn
            kind: processing
            command: ["/bin/sh", "-c", "trap '' TERM; /bin/sleep 1000"]
            environment: {\(Self.field(marker))}
            earliest: +1h
            allowance: 2s
            grace: 1s
            """)
        let began = Date()
        let r = try CLI.run(["simulate", "--jobs", box.jobs, "--days", "1", "--start", "2026-11-23T00:00:00Z",
                             "--exec", "--json"], timeout: 30)
        let took = Date().timeIntervalSince(began)
        #expect(r.status == 0, "\(r.stderr)")
        // 2 s, then 2 s + 1 s, one after the other; never the 1,000 s of the commands.
        #expect(took >= 5 && took < 12, "took \(took) s")
        let runs = try Self.runs(r.stdout)
        let sleeper = try #require(runs["test.sleeper"]?.first)
        #expect(sleeper.outcome == "expired")
        #expect(sleeper.seconds >= 2 && sleeper.seconds < 2.5, "\(sleeper.seconds)")
        let stubborn = try #require(runs["test.stubborn"]?.first)
        #expect(stubborn.outcome == "expired")
        // Killed at 3 s (2 s + the 1 s grace); the run ends when its results channel closes, a
        // few real milliseconds after the kill (its `sleep` child held fd 3), as in the daemon.
        #expect(stubborn.seconds >= 3 && stubborn.seconds < 3.5, "\(stubborn.seconds)")
        #expect(Self.processes(marker).isEmpty)
    }

    /// Two runs due at the same instant run at once in real time, as under `run` (they used to
    /// run one after the other while the virtual clock waited), each lasting what it took.
    @Test func runsThatOverlapInVirtualTimeRunAtOnce() throws {
        let box = Sandbox()
        let marker = "REFRESHD_EXEC_TEST=\(UUID().uuidString)"
        defer { Self.kill(marker); box.remove() }
        for name in ["one", "two"] {
            try box.write("\(name).yaml", """
                identifier: test.\(name)
                kind: processing
                command: ["/bin/sleep", "2"]
                environment: {\(Self.field(marker))}
                earliest: +1h
                """)
        }
        let began = Date()
        let r = try CLI.run(["simulate", "--jobs", box.jobs, "--days", "1", "--start", "2026-11-23T00:00:00Z",
                             "--exec", "--json"], timeout: 30)
        let took = Date().timeIntervalSince(began)
        #expect(r.status == 0, "\(r.stderr)")
        // 2 s, not the 4 s of one after the other.
        #expect(took < 3.5, "took \(took) s")
        let runs = try Self.runs(r.stdout)
        for name in ["one", "two"] {
            let run = try #require(runs["test.\(name)"]?.first)
            #expect(run.outcome == "success")
            #expect(run.seconds >= 2 && run.seconds < 2.5, "\(run.seconds)")
        }
        #expect(Self.processes(marker).isEmpty)
    }

    /// Results a command writes on fd 3 are applied in the simulated run, at their offsets in
    /// virtual time: an activity started as the run starts, ended 1 s later.
    @Test func resultsOnFileDescriptor3AreApplied() throws {
        let box = Sandbox()
        let marker = "REFRESHD_EXEC_TEST=\(UUID().uuidString)"
        defer { Self.kill(marker); box.remove() }
        try """
            echo '{"activity": "start", "id": "exec-demo", "type": "Demo", "content": {"step": 1}}' >&3
            echo started
            sleep 1
            echo '{"activity": "end", "id": "exec-demo", "dismissal": "immediate"}' >&3
            echo done >&2
            """.write(toFile: box.root + "/demo.sh", atomically: true, encoding: .utf8)
        try box.write("demo.yaml", """
            identifier: test.demo
            kind: processing
            command: ["/bin/sh", "\(box.root)/demo.sh"]
            environment: {\(Self.field(marker))}
            earliest: +1h
            allowance: 1m
            """)
        let r = try CLI.run(["simulate", "--jobs", box.jobs, "--days", "1", "--start", "2026-11-23T00:00:00Z",
                             "--exec", "--json"], timeout: 30)
        #expect(r.status == 0, "\(r.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let days = try #require(object["days"] as? [[String: Any]])
        let activities = days.flatMap { ($0["activities"] as? [[String: Any]]) ?? [] }
        let demo = try #require(activities.first { $0["id"] as? String == "exec-demo" }, "\(activities)")
        #expect(demo["type"] as? String == "Demo")
        #expect(demo["state"] as? String == "dismissed", "\(demo)")
        let steps = try #require(demo["transitions"] as? [[String: Any]])
        let times = steps.compactMap { ($0["at"] as? String).flatMap(Self.instant) }
        // Started as the run started (01:00, plus the shell's real start-up), ended about 1 s
        // later in virtual time (read times: a busy machine may delay the first read).
        let runStart = try #require(Self.instant("2026-11-23T01:00:00.000Z"))
        #expect((times.first ?? 0) >= runStart && (times.first ?? 0) < runStart + 1, "\(steps)")
        let span = (times.last ?? 0) - (times.first ?? 0)
        #expect(span >= 0.5 && span < 3, "\(steps)")
        #expect(try Self.runs(r.stdout)["test.demo"]?.first?.outcome == "success")
    }

    /// A SIGTERM to `simulate --exec` while a command runs kills the command's whole group at
    /// once (a shell and its two sleeps) and ends `simulate` cleanly: no process of the job is
    /// left, and the exit status says which signal stopped it.
    @Test func stoppingSimulateLeavesNoProcessOfTheJob() throws {
        let box = Sandbox()
        let marker = "REFRESHD_EXEC_TEST=\(UUID().uuidString)"
        defer { Self.kill(marker); box.remove() }
        try box.write("long.yaml", """
            identifier: test.long
            kind: processing
            command: ["/bin/sh", "-c", "/bin/sleep 1000 & /bin/sleep 1000; wait"]
            environment: {\(Self.field(marker))}
            allowance: 1h
            """)
        let simulate = try CLI.start(["simulate", "--jobs", box.jobs, "--days", "1", "--start", "2026-11-23T00:00:00Z",
                                      "--exec"])
        defer { simulate.cleanUp() }
        #expect(waitFor { Self.processes(marker).count == 3 }, "\(simulate.errors())")
        simulate.signal(SIGTERM)
        #expect(simulate.wait(timeout: 5) == 128 + SIGTERM, "\(simulate.errors())")
        #expect(simulate.errors().contains("refreshd: simulate stopped by SIGTERM"), "\(simulate.errors())")
        #expect(waitFor(timeout: 2) { Self.processes(marker).isEmpty }, "\(Self.processes(marker))")
    }

    /// A SIGINT between two commands (a month of a per-minute job) ends the simulation at the
    /// next step, as cleanly: exit 130, no report.
    @Test func anInterruptBetweenCommandsEndsTheSimulation() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("tick.yaml", """
            identifier: test.tick
            kind: processing
            command: ["/bin/true"]
            resubmit: {after: 1m}
            """)
        let simulate = try CLI.start(["simulate", "--jobs", box.jobs, "--days", "30", "--start", "2026-11-23T00:00:00Z",
                                      "--exec"])
        defer { simulate.cleanUp() }
        usleep(500_000)
        simulate.signal(SIGINT)
        #expect(simulate.wait(timeout: 5) == 128 + SIGINT, "\(simulate.errors())")
        #expect(simulate.errors().contains("refreshd: simulate stopped by SIGINT"), "\(simulate.errors())")
        #expect(simulate.output().isEmpty)
    }

    // MARK: Helpers

    /// `NAME=value` as a YAML mapping field.
    static func field(_ marker: String) -> String {
        let parts = marker.split(separator: "=", maxSplits: 1)
        return "\(parts[0]): \"\(parts[1])\""
    }

    /// Live processes whose environment holds `marker`.
    static func processes(_ marker: String) -> [Int32] {
        let entry = Array(marker.utf8)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return names.compactMap { name -> Int32? in
            guard let pid = Int32(name), pid != getpid(),
                  let data = FileManager.default.contents(atPath: "/proc/\(pid)/environ"),
                  Array(data).split(separator: 0).contains(where: { Array($0) == entry }),
                  !processIsGone(pid) else { return nil }
            return pid
        }
    }

    static func kill(_ marker: String) {
        for pid in processes(marker) where pid > 1 { Foundation.kill(pid, SIGKILL) }
    }

    static func instant(_ text: String) -> Double? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)?.timeIntervalSince1970
    }

    /// Each job's runs in the JSON report: outcome and virtual length in seconds.
    static func runs(_ json: String) throws -> [String: [(outcome: String, seconds: Double)]] {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let jobs = try #require(object["jobs"] as? [[String: Any]])
        var found: [String: [(outcome: String, seconds: Double)]] = [:]
        for job in jobs {
            guard let id = job["identifier"] as? String, let runs = job["runs"] as? [[String: Any]] else { continue }
            found[id] = runs.compactMap { run in
                guard let outcome = run["outcome"] as? String,
                      let started = (run["started"] as? String).flatMap(instant),
                      let ended = (run["ended"] as? String).flatMap(instant) else { return nil }
                return (outcome, ended - started)
            }
        }
        return found
    }
}
