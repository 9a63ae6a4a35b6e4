import Foundation
#if canImport(Glibc)
import Glibc
#endif
import RefreshdCore
import RefreshdPostgres
import RefreshdRuntime
import Testing

/// Every kind of job on several nodes (issue 32, item 2), with real nodes and the suite's
/// private PostgreSQL: the shipped `Jobs/` folder whole (a built-in action staging the playlist,
/// a widget timeline published into the shared container, a live activity, command jobs) plus a
/// template whose instances are added through a node that does not lead their shard. Operated
/// through either node: `status`, `stats`, `ctl snapshot`, `ctl instance`, `ctl activity`.
@Suite(.serialized) struct ClusterEveryKindTests {
    static var repository: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    }

    /// The shipped project (Jobs/, Scripts/) in the sandbox, with the sample library Scripts/run makes.
    func shippedProject(_ scratch: ClusterSandbox) throws {
        try FileManager.default.removeItem(atPath: scratch.root + "/jobs")
        try FileManager.default.copyItem(atPath: Self.repository + "/Jobs", toPath: scratch.root + "/jobs")
        try FileManager.default.copyItem(atPath: Self.repository + "/Scripts", toPath: scratch.root + "/Scripts")
        let library = try Node.start(["staging", "sample-library", ".refreshd/library"], environment: [:],
                                     output: scratch.root + "/library.log", directory: scratch.root)
        #expect(library.wait(60) == 0, "\(library.log())")
    }

    func json<T: Decodable>(_ scratch: ClusterSandbox, _ arguments: [String], via node: String, as type: T.Type) throws -> T? {
        let (_, output) = try scratch.cli(arguments + ["--json", "--state", scratch.root + "/state-" + node])
        last.output = output
        return try? JSONDecoder().decode(T.self, from: Data(output.utf8))
    }

    func status(_ scratch: ClusterSandbox, via node: String) throws -> StatusReport? {
        try json(scratch, ["status"], via: node, as: StatusReport.self)
    }

    func reloads(_ scratch: ClusterSandbox, via node: String) throws -> ReloadStats? {
        try json(scratch, ["stats", "reloads"], via: node, as: ReloadStats.self)
    }

    /// The last `json` call's output, for a failure's message.
    final class Last: @unchecked Sendable { var output = "" }
    let last = Last()

    @Test func theShippedJobsAndATemplateRunOnTwoNodesAndAnswerOnEither() throws {
        let scratch = try ClusterSandbox("kinds", shards: 4)
        defer { scratch.close() }
        try shippedProject(scratch)
        let out = scratch.root + "/feed.txt"
        try scratch.job("feed.yaml", """
            identifier: test.feed
            template: true
            parameters: [user]
            kind: processing
            command: ["/bin/sh", "-c", "echo \\"{user} $NODE\\" >> \(out)"]
            earliest: +1s
            allowance: 10s
            resubmit: {after: 1h}
            """)
        // A sync job, in a shard of its own namespace: its results set the template's list, whose
        // instances live in every shard.
        let synced = (3...8).map { "user\($0)" }
        let line = #"{"instances": "test.feed", "set": [\#(synced.map { "\"\($0)\"" }.joined(separator: ", "))]}"#
        try "echo '\(line)' >&3\n".write(toFile: scratch.root + "/sync.sh", atomically: true, encoding: .utf8)
        try scratch.job("sync.yaml", """
            identifier: test.sync
            namespace: test.sync
            kind: processing
            command: ["/bin/sh", "\(scratch.root)/sync.sh"]
            earliest: +1h
            """)
        for name in ["a", "b"] { try scratch.start(name, lease: "3s", directory: scratch.root) }
        let shared = scratch.root + "/shared"
        // The built-in action staged the day in its worker, and the widget's provider published
        // its timeline into the shared container, on whichever node leads their namespace's shard.
        #expect(waitFor(60) {
            FileManager.default.fileExists(atPath: shared + "/widgets/wallpaper/systemSmall.json")
                && FileManager.default.fileExists(atPath: shared + "/widgets/wallpaper/systemMedium.json")
        }, "no widget publication: \(scratch.logs())")
        let logs = scratch.logs()
        #expect(!logs.contains("not supported in cluster mode"))
        // The live activity the download-pack job starts on its results channel, seen from either node.
        var activity: String?
        #expect(waitFor(30) {
            for node in ["a", "b"] {
                guard let report = try? status(scratch, via: node),
                      let entry = report.activities?.activities.first(where: { $0.type == "WallpaperPack" }) else { return false }
                activity = entry.id
            }
            return true
        }, "no live activity in either node's status: \(last.output) \(scratch.logs())")
        #expect(FileManager.default.fileExists(atPath: shared + "/activities/\(activity ?? "-").json"))
        // Widget reloads counted, from the database, on either node alike.
        let statsA = try reloads(scratch, via: "a")
        let statsB = try reloads(scratch, via: "b")
        #expect(statsA != nil && statsA == statsB, "\(last.output) stats differ: \(String(describing: statsA)) vs \(String(describing: statsB))")
        #expect(statsA?.rows.contains { $0.kind == "wallpaper" } == true, "\(String(describing: statsA))")

        // Instances added through node b land in their own shards (spread), run there once, and
        // are listed alike through node a.
        let users = (1...6).map { "user\($0)" }
        for user in users {
            let added = try scratch.cli(["ctl", "instance", "add", "test.feed", user, "--state", scratch.root + "/state-b"])
            #expect(added.status == 0 && added.output.contains("added test.feed[\(user)] (shard \(ShardMap(shardCount: 4).shard(of: "test.feed[\(user)]"));"), "\(added.output)")
        }
        let map = ShardMap(shardCount: 4)
        #expect(Set(users.map { map.shard(of: "test.feed[\($0)]") }).count > 1, "the instances all fell in one shard")
        #expect(waitFor(30) {
            let lines = ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").split(separator: "\n")
            return Set(lines.compactMap { $0.split(separator: " ").first.map(String.init) }) == Set(users)
        }, "not every instance ran: \(scratch.logs())")
        let listed = try json(scratch, ["ctl", "instance", "list", "test.feed"], via: "a", as: ControlReply.self)
        #expect(listed?.instances?.map(\.key) == users, "\(String(describing: listed))")
        let lines = ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").split(separator: "\n")
        #expect(lines.count == users.count, "an instance ran twice: \(lines)")
        // The sync run's list reaches every shard in its run's commit: user1 and user2 removed
        // wherever they live, user7 and user8 added in theirs, each run once.
        let sync = try scratch.cli(["ctl", "submit", "test.sync", "--state", scratch.root + "/state-a"])
        #expect(sync.status == 0, "\(sync.output)")
        #expect(waitFor(30) {
            (try? json(scratch, ["ctl", "instance", "list", "test.feed"], via: "b", as: ControlReply.self))?.instances?.map(\.key) == synced
        }, "the sync's list was not applied in every shard: \(last.output) \(scratch.logs())")
        #expect(waitFor(30) {
            let lines = ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").split(separator: "\n")
            return lines.count == 8 && Set(lines.compactMap { $0.split(separator: " ").first.map(String.init) }) == Set(users + synced)
        }, "user7 and user8 did not run once each: \(scratch.logs())")

        // An operator's live activity, started through either node, lives in its namespace's shard.
        let started = try scratch.cli(["ctl", "activity", "start", "ops-1", "--type", "Maintenance", "--namespace", "ops",
                                       "--state", scratch.root + "/state-a"])
        #expect(started.status == 0 && started.output.contains("started activity ops-1 (shard \(map.shard(of: "ops"));"), "\(started.output)")
        #expect(waitFor(15) { FileManager.default.fileExists(atPath: shared + "/activities/ops-1.json") }, "\(scratch.logs())")

        for node in scratch.nodes.values { node.kill(SIGTERM) }
        for (name, node) in scratch.nodes { #expect(node.wait(20) == 0, "\(name) did not stop cleanly: \(scratch.logs())") }
        #expect(processes(tagged: scratch.tag).isEmpty)
    }
}
