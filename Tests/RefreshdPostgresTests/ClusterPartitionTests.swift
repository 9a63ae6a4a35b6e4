import Foundation
#if canImport(Glibc)
import Glibc
#endif
@_spi(Benchmarks) import RefreshdPostgres
import Testing

/// A real partition (issue 32): node b reaches the database through a TCP proxy that stops
/// forwarding without closing (`BlackholeProxy`), so each of its calls waits for its bound
/// instead of failing. b must still fence itself by its own deadline (send of its last confirmed
/// renewal + lease − margin) and kill its run there, before node a may take the shard; after the
/// heal it runs nothing, and SIGTERM stops it at once. Before the fix b's node thread sat in the
/// hung renewal: its run lived on beside a's, and after the heal b never stopped.
@Suite(.serialized) struct ClusterPartitionTests {
    @Test func aCutOffNodeKillsItsRunByItsDeadlineAndStopsAfterTheHeal() throws {
        let server = try PrivateServer.shared.get()
        let conninfo = try server.freshDatabase()
        try PostgresDatabase(connection: conninfo, shardCount: 1).close()
        let proxy = try BlackholeProxy(socketPath: server.folder + "/.s.PGSQL.5432")
        defer { proxy.stop() }
        let proxied = conninfo.replacingOccurrences(of: "host=\(server.folder)", with: "host=127.0.0.1 port=\(proxy.port)")
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("refreshd-cut-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/jobs", withIntermediateDirectories: true)
        let out = root + "/runs.txt"
        let tag = "cut-\(UUID().uuidString.prefix(8))"
        // A long run per slot: whoever leads the shard runs it; a new leader launches at once.
        try """
            identifier: cut.long
            kind: processing
            command: ["/bin/sh", "-c", "echo \\"$REFRESH_RUN_ID $NODE\\" >> \(out); exec sleep 60"]
            resubmit: {calendar: "*:*:00/2"}
            missed: skip
            allowance: 120s
            """.write(toFile: root + "/jobs/long.yaml", atomically: true, encoding: .utf8)
        var nodes: [String: Node] = [:]
        defer {
            for node in nodes.values { node.kill(SIGKILL) }
            for pid in processes(tagged: tag) { kill(pid, SIGKILL) }
        }
        func start(_ name: String, store: String) throws {
            nodes[name] = try Node.start(
                ["run", "--jobs", root + "/jobs", "--state", root + "/state-" + name, "--shared", root + "/shared",
                 "--store", store, "--node", name, "--lease", "3s"],
                environment: ["NODE": name, "REFRESHD_TEST_TAG": tag], output: root + "/\(name).log")
        }
        func lines() -> [String] { ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init) }
        /// The job's `sleep` processes run for `node` (its environment says NODE=name).
        func sleeps(of node: String) -> [Int32] {
            processes(tagged: tag).filter { pid in
                let comm = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) ?? ""
                let environ = FileManager.default.contents(atPath: "/proc/\(pid)/environ") ?? Data()
                return comm.hasPrefix("sleep") && environ.split(separator: 0).contains { Array($0) == Array("NODE=\(node)".utf8) }
            }
        }
        // b alone takes the shard and runs the job; then a joins (the shard stays b's).
        try start("b", store: proxied)
        #expect(waitFor(20) { lines().contains { $0.hasSuffix(" b") } && !sleeps(of: "b").isEmpty }, "b ran nothing: \(logs(nodes))")
        try start("a", store: conninfo)
        usleep(1_500_000)
        let bRuns = lines().filter { $0.hasSuffix(" b") }.count

        proxy.cut()
        let cutAt = Date()
        // b's deadline is at most lease − margin (2.4 s) after the cut (its last confirmed
        // renewal was sent before it); its run must be gone by then, whatever its hung calls do.
        var bothAlive = false
        let killed = waitFor(15) {
            if !sleeps(of: "b").isEmpty, !sleeps(of: "a").isEmpty { bothAlive = true }
            return sleeps(of: "b").isEmpty
        }
        let killedAfter = Date().timeIntervalSince(cutAt)
        #expect(killed, "b's run outlived the partition: \(logs(nodes))")
        #expect(killedAfter < 2.4 + 1.6, "b killed its run \(killedAfter) s after the cut (deadline 2.4 s): \(logs(nodes))")
        // b fenced the shard itself, at its deadline, not when a call gave up (10 s) or the heal
        // came (8 s): its own log line's instant says when. (On one machine a's restore also
        // reaps b's processes by their shard's instance, so b's fence is checked by its log.)
        let fence = nodes["b"]!.log().split(separator: "\n").first { $0.contains("fenced shard 0") && $0.contains("no renewal confirmed") }
        let stamp = ISO8601DateFormatter()
        stamp.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let fencedAt = fence.flatMap { $0.split(separator: " ").first }.flatMap { stamp.date(from: String($0)) }
        #expect(fencedAt != nil, "b did not fence itself: \(logs(nodes))")
        let fencedAfter = fencedAt.map { $0.timeIntervalSince(cutAt) } ?? .infinity
        #expect(fencedAfter < 2.4 + 1.0, "b fenced \(fencedAfter) s after the cut (deadline 2.4 s): \(logs(nodes))")
        // a takes the shard (lease 3 s in database time, a survey a second) and runs the job.
        #expect(waitFor(15) {
            if !sleeps(of: "b").isEmpty, !sleeps(of: "a").isEmpty { bothAlive = true }
            return lines().contains { $0.hasSuffix(" a") }
        }, "a never ran the job: \(logs(nodes))")
        #expect(!bothAlive, "b's run and a's ran at once: \(logs(nodes))")

        usleep(UInt32(max(0, 8 - Date().timeIntervalSince(cutAt)) * 1_000_000))
        proxy.heal()
        usleep(3_000_000)
        #expect(lines().filter { $0.hasSuffix(" b") }.count == bRuns, "b ran the job during or after the partition: \(lines())")
        // SIGTERM after the heal: b holds nothing, takes nothing, exits at once.
        let b = nodes["b"]!
        b.kill(SIGTERM)
        let stoppedAt = Date()
        #expect(b.wait(10) == 0, "b did not stop after the heal: \(logs(nodes))")
        let stopTook = Date().timeIntervalSince(stoppedAt)
        #expect(!b.log().components(separatedBy: "received SIGTERM").last!.contains("leads shard"), "b took a shard after SIGTERM: \(logs(nodes))")
        nodes["a"]!.kill(SIGTERM)
        #expect(nodes["a"]!.wait(15) == 0, "a did not stop cleanly: \(logs(nodes))")
        #expect(waitFor(5) { processes(tagged: tag).isEmpty }, "processes left: \(processes(tagged: tag))")
        let runs = lines().map { $0.split(separator: " ")[0] }
        #expect(Set(runs).count == runs.count, "a run id appears twice: \(lines())")
        print("cluster partition: b fenced \(String(format: "%.2f", fencedAfter)) s and its run was gone \(String(format: "%.2f", killedAfter)) s after the cut (deadline 2.4 s), stopped \(String(format: "%.2f", stopTook)) s after SIGTERM")
    }

    func logs(_ nodes: [String: Node]) -> String {
        nodes.keys.sorted().map { "\n--- \($0):\n" + (nodes[$0]?.log().suffix(3000) ?? "") }.joined()
    }
}
