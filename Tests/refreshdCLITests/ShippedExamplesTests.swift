import Foundation
import Testing

/// The repository's own files: the shipped examples, not whatever a user added to Jobs/.
enum Repository {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// The shipped job files: `git ls-files Jobs/*.yaml` in `project`, so that a job a user added
    /// to the working tree's Jobs/ (untracked) is not taken for an example. Outside a git work
    /// tree (an unpacked archive) every `.yaml` of Jobs/ is shipped.
    static func shippedJobs(in project: String = root) throws -> [String] {
        if let tracked = try? git(["ls-files", "-z", "--", "Jobs/*.yaml"], in: project) {
            return tracked.split(separator: "\0").map { String($0.dropFirst("Jobs/".count)) }.sorted()
        }
        return try FileManager.default.contentsOfDirectory(atPath: project + "/Jobs")
            .filter { $0.hasSuffix(".yaml") }.sorted()
    }

    /// Runs git in `directory`; throws unless it exits 0.
    @discardableResult
    static func git(_ arguments: [String], in directory: String) throws -> String {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("git-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let quoted = arguments.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let status = system("cd '\(directory)' && git \(quoted) >'\(out)' 2>/dev/null")
        guard status == 0 else { throw POSIXError(.ENOENT) }
        return (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
    }

    /// A sandbox holding a copy of the shipped jobs, with Scripts/ linked to the real one.
    static func sandboxWithShippedJobs() throws -> Sandbox {
        let box = Sandbox()
        let files = FileManager.default
        for name in try shippedJobs() {
            try files.copyItem(atPath: root + "/Jobs/" + name, toPath: box.jobs + "/" + name)
        }
        try files.createSymbolicLink(atPath: box.root + "/Scripts", withDestinationPath: root + "/Scripts")
        return box
    }
}

@Suite struct ShippedExamplesTests {
    /// Regression: the example-jobs test copied every file of the working tree's Jobs/, so it
    /// failed as soon as a user added a job of their own there.
    @Test func aJobAUserAddedIsNotAShippedExample() throws {
        let box = Sandbox()
        defer { box.remove() }
        try Repository.git(["init", "-q"], in: box.root)
        try box.write("shipped.yaml", "identifier: test.shipped\ncommand: [\"/bin/true\"]\n")
        try Repository.git(["add", "Jobs/shipped.yaml"], in: box.root)
        try box.write("mine.yaml", "identifier: com.me.quick\ncommand: [\"true\"]\n")
        #expect(try Repository.shippedJobs(in: box.root) == ["shipped.yaml"])
    }

    @Test func theRepositoryShipsItsExampleJobs() throws {
        let shipped = try Repository.shippedJobs()
        #expect(shipped.contains("heartbeat.yaml"))
        #expect(shipped.contains("download-pack.yaml"))
        #expect(shipped.count >= 6, "\(shipped)")
    }

    /// Regression: Scripts/download-pack named every run's activity `pack-autumn`. An ended
    /// activity stays until it is dismissed (4 h), so each later run's start was refused and its
    /// updates ignored. Now each run has its own activity, and both runs' progress applies.
    @Test func downloadPackStartsOneActivityPerRun() throws {
        let box = Sandbox()
        defer { box.remove() }
        try FileManager.default.createSymbolicLink(atPath: box.root + "/Scripts",
                                                   withDestinationPath: Repository.root + "/Scripts")
        try box.write("download.yaml", """
            identifier: test.download
            kind: processing
            command: ["Scripts/download-pack"]
            environment: {STEPS: "2", STEP_SECONDS: "0"}
            allowance: 1m
            resubmit: {after: 1s}
            """)
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { daemon.cleanUp() }
        #expect(waitFor(timeout: 20) { box.runs().filter { $0.1 == "success" }.count >= 2 })
        daemon.signal(SIGINT)
        #expect(daemon.wait() == 0)
        let log = daemon.errors()
        #expect(!log.contains("refused"), "\(log)")
        #expect(!log.contains("ignored"), "\(log)")
        let activities = (box.status()?["activities"] as? [String: Any])?["activities"] as? [[String: Any]] ?? []
        let ended = activities.filter { $0["state"] as? String == "ended" }
        #expect(ended.count >= 2, "\(activities)")
        #expect(Set(ended.compactMap { $0["id"] as? String }).count == ended.count)
        #expect(ended.allSatisfy { $0["progressPercent"] as? Double == 100 }, "\(ended)")
        // A clean end leaves no unfinished download behind for a retry to take up.
        #expect(!FileManager.default.fileExists(atPath: box.state + "/shared/download-pack/unfinished"))
    }

    /// Regression: the shipped download job had no `simulate:` block, so `refreshd simulate` of
    /// Jobs/ showed no live activity where `Scripts/run` shows one every hour. Every shipped job
    /// says how it behaves in simulation, and a simulated day of them shows the activity.
    @Test func everyShippedJobSimulatesWhatItDoes() throws {
        let box = try Repository.sandboxWithShippedJobs()
        defer { box.remove() }
        for name in try Repository.shippedJobs() {
            let text = try String(contentsOfFile: box.jobs + "/" + name, encoding: .utf8)
            #expect(text.split(separator: "\n").contains { $0.hasPrefix("simulate:") }, "Jobs/\(name) has no simulate: block")
        }
        let r = try CLI.run(["simulate", "--jobs", box.jobs, "--days", "1", "--start", "2026-11-23T00:00:00Z", "--seed", "1", "--json"],
                            timeout: 60)
        #expect(r.status == 0, "\(r.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let days = report["days"] as? [[String: Any]] ?? []
        let activities = days.flatMap { $0["activities"] as? [[String: Any]] ?? [] }
        #expect(activities.contains { ($0["id"] as? String)?.hasPrefix("pack-autumn-") == true }, "\(activities.prefix(3))")
    }
}
