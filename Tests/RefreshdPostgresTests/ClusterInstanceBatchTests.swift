import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// Many instances added through a cluster node (issue 32's target, a million over three nodes):
/// `ctl instance add --keys-from` sends the keys in batches (a request line each), and a node queues each batch
/// as one command a shard (the keys split by the shard of each instance), applied once by each
/// leader in one transaction, as a sync run's lines are. It queued one command a key before
/// (100,000 keys took 143 s on three release nodes). The time is printed.
@Suite(.serialized) struct ClusterInstanceBatchTests {
    @Test func keysFromAFileAreQueuedAsOneCommandAShard() throws {
        let scratch = try ClusterSandbox("batch", shards: 4)
        defer { scratch.close() }
        try scratch.job("feed.yaml", """
            identifier: batch.feed
            template: true
            parameters: [user]
            kind: processing
            command: ["/bin/true"]
            earliest: +1d
            allowance: 10s
            """)
        try scratch.start("a", lease: "2s")
        try scratch.start("b", lease: "2s")
        #expect(waitFor(30) { ["a", "b"].allSatisfy { scratch.nodes[$0]?.log().contains("leads shard") == true } }, "\(scratch.logs())")
        let count = 25_000
        try (1...count).map { "user\($0)" }.joined(separator: "\n").write(toFile: scratch.root + "/keys", atomically: true, encoding: .utf8)
        let monitor = try RawConnection(scratch.conninfo)
        defer { monitor.close() }
        let start = Date()
        let added = try scratch.cli(["ctl", "instance", "add", "batch.feed", "--keys-from", scratch.root + "/keys",
                                     "--state", scratch.root + "/state-a"])
        #expect(added.status == 0, "\(added.output)")
        // A few batches (each a request line of at most about 48 KiB of keys), each one command
        // a shard: tens of commands for 25,000 keys, not 25,000.
        let lines = added.output.split(separator: "\n")
        let sizes = lines.compactMap { line in line.firstMatch(of: /^queued (\d+) instance adds of batch.feed as 4 commands, one a shard/).flatMap { Int($0.1) } }
        #expect(sizes.count == lines.count && sizes.count >= 2 && sizes.reduce(0, +) == count, "\(added.output)")
        #expect(try monitor.run("SELECT count(*) FROM refreshd.commands") == "\(4 * lines.count)")
        var stored = 0
        #expect(waitFor(60) {
            stored = Int((try? monitor.run("SELECT count(*) FROM refreshd.instances")) ?? "0") ?? 0
            return stored == count
        }, "\(stored) of \(count) instances stored: \(scratch.logs())")
        let seconds = Date().timeIntervalSince(start)
        print("cluster instance batch: \(count) instances over 2 nodes and 4 shards in \(String(format: "%.2f", seconds)) s")
        // Every shard holds its own instances, each once.
        #expect(try monitor.run("SELECT count(DISTINCT shard) FROM refreshd.instances") == "4")
        // Sent again (a retried client): kept, nothing added twice.
        let again = try scratch.cli(["ctl", "instance", "add", "batch.feed", "user1", "user2", "--state", scratch.root + "/state-b"])
        #expect(again.status == 0, "\(again.output)")
        #expect(waitFor(10) { (try? monitor.run("SELECT count(*) FROM refreshd.commands WHERE NOT applied")) == "0" })
        #expect(try monitor.run("SELECT count(*) FROM refreshd.instances") == "\(count)")
    }
}
