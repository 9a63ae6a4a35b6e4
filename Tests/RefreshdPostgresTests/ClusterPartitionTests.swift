import Foundation
#if canImport(Glibc)
import Glibc
#endif
import RefreshdPostgres
import Testing

/// A real partition (issue 32): node b reaches the database through a TCP proxy that stops
/// forwarding without closing (`BlackholeProxy`), so each of its calls waits for its bound
/// instead of failing. b must still fence itself by its own deadline (send of its last confirmed
/// renewal + lease − margin) and kill its run there, before node a may take the shard; after the
/// heal it runs nothing, and SIGTERM stops it at once. Before the fix b's node thread sat in the
/// hung renewal: its run lived on beside a's, and after the heal b never stopped.
@Suite(.serialized) struct ClusterPartitionTests {
    @Test func aCutOffNodeKillsItsRunByItsDeadlineAndStopsAfterTheHeal() throws {
        let box = try ClusterSandbox("cut", shards: 1)
        defer { box.close() }
        let proxy = try BlackholeProxy(socketPath: box.server.folder + "/.s.PGSQL.5432")
        defer { proxy.stop() }
        let proxied = box.conninfo.replacingOccurrences(of: "host=\(box.server.folder)", with: "host=127.0.0.1 port=\(proxy.port)")
        let out = box.root + "/runs.txt", tag = box.tag
        // A long run per slot: whoever leads the shard runs it; a new leader launches at once.
        try box.job("long.yaml", """
            identifier: cut.long
            kind: processing
            command: ["/bin/sh", "-c", "echo \\"$REFRESH_RUN_ID $NODE\\" >> \(out); exec sleep 60"]
            resubmit: {calendar: "*:*:00/2"}
            missed: skip
            allowance: 120s
            """)
        func start(_ name: String, store: String) throws { try box.start(name, lease: "3s", store: store) }
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
        #expect(waitFor(20) { lines().contains { $0.hasSuffix(" b") } && !sleeps(of: "b").isEmpty }, "b ran nothing: \(box.logs())")
        try start("a", store: box.conninfo)
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
        #expect(killed, "b's run outlived the partition: \(box.logs())")
        #expect(killedAfter < 2.4 + 1.6, "b killed its run \(killedAfter) s after the cut (deadline 2.4 s): \(box.logs())")
        // b fenced the shard itself, at its deadline, not when a call gave up (10 s) or the heal
        // came (8 s): its own log line's instant says when. (On one machine a's restore also
        // reaps b's processes by their shard's instance, so b's fence is checked by its log.)
        let fence = box.nodes["b"]!.log().split(separator: "\n").first { $0.contains("fenced shard 0") && $0.contains("no renewal confirmed") }
        let stamp = ISO8601DateFormatter()
        stamp.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let fencedAt = fence.flatMap { $0.split(separator: " ").first }.flatMap { stamp.date(from: String($0)) }
        #expect(fencedAt != nil, "b did not fence itself: \(box.logs())")
        let fencedAfter = fencedAt.map { $0.timeIntervalSince(cutAt) } ?? .infinity
        #expect(fencedAfter < 2.4 + 1.0, "b fenced \(fencedAfter) s after the cut (deadline 2.4 s): \(box.logs())")
        // a takes the shard (lease 3 s in database time, a survey a second) and runs the job.
        #expect(waitFor(15) {
            if !sleeps(of: "b").isEmpty, !sleeps(of: "a").isEmpty { bothAlive = true }
            return lines().contains { $0.hasSuffix(" a") }
        }, "a never ran the job: \(box.logs())")
        #expect(!bothAlive, "b's run and a's ran at once: \(box.logs())")

        usleep(UInt32(max(0, 8 - Date().timeIntervalSince(cutAt)) * 1_000_000))
        proxy.heal()
        usleep(3_000_000)
        #expect(lines().filter { $0.hasSuffix(" b") }.count == bRuns, "b ran the job during or after the partition: \(lines())")
        // SIGTERM after the heal: b holds nothing, takes nothing, exits at once.
        let b = box.nodes["b"]!
        b.kill(SIGTERM)
        let stoppedAt = Date()
        #expect(b.wait(10) == 0, "b did not stop after the heal: \(box.logs())")
        let stopTook = Date().timeIntervalSince(stoppedAt)
        #expect(!b.log().components(separatedBy: "received SIGTERM").last!.contains("leads shard"), "b took a shard after SIGTERM: \(box.logs())")
        box.nodes["a"]!.kill(SIGTERM)
        #expect(box.nodes["a"]!.wait(15) == 0, "a did not stop cleanly: \(box.logs())")
        #expect(waitFor(5) { processes(tagged: tag).isEmpty }, "processes left: \(processes(tagged: tag))")
        let runs = lines().map { $0.split(separator: " ")[0] }
        #expect(Set(runs).count == runs.count, "a run id appears twice: \(lines())")
        print("cluster partition: b fenced \(String(format: "%.2f", fencedAfter)) s and its run was gone \(String(format: "%.2f", killedAfter)) s after the cut (deadline 2.4 s), stopped \(String(format: "%.2f", stopTook)) s after SIGTERM")
    }
}
