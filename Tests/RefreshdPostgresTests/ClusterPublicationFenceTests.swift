import Foundation
#if canImport(Glibc)
import Glibc
#endif
import RefreshdPostgres
import Testing

/// A widget's publication by a node whose lease lapsed (issue 32: "a node paused
/// mid-publication writes nothing after it resumes"). Node a stops itself at the exact instant
/// (`REFRESHD_PAUSE_AT=publication-before-rename`: its reload committed, the file written and
/// flushed, the rename into the shared container not made), past its lease; node b takes the
/// shard and publishes the same entry from the committed state; a, resumed, asks its lease
/// machine before the rename, is told its term is over, and writes nothing: b's file stays, the
/// same inode. Without the gate a's rename replaced b's file with a stale one.
@Suite(.serialized) struct ClusterPublicationFenceTests {
    @Test func aNodePausedBeforeItsRenameWritesNothingOnceItsLeaseLapsed() throws {
        let box = try ClusterSandbox("publish", shards: 1)
        defer { box.close() }
        let provider = box.root + "/provider.sh"
        try #"echo '{"entries": [{"date": "2026-01-01T00:00:00Z", "content": {"n": 1}}], "policy": "never"}' >&3"#
            .appending("\n").write(toFile: provider, atomically: true, encoding: .utf8)
        try box.job("widget.yaml", """
            identifier: fence.widget
            kind: timeline
            command: ["/bin/sh", "\(provider)"]
            allowance: 5s
            widget:
              kind: fence
              families: [systemSmall]
            """)
        let published = box.root + "/shared/widgets/fence/systemSmall.json"
        func inode() -> UInt64? {
            var status = stat()
            return stat(published, &status) == 0 ? UInt64(status.st_ino) : nil
        }
        try box.start("a", lease: "1500ms", environment: ["REFRESHD_PAUSE_AT": "publication-before-rename"])
        let a = box.nodes["a"]!
        let stopped = { ((try? String(contentsOfFile: "/proc/\(a.pid)/stat", encoding: .utf8)) ?? "").contains(") T ") }
        #expect(waitFor(20, stopped), "node a never reached its pause point: \(box.logs())")
        #expect(inode() == nil, "a published before its pause point")
        // b takes the shard once a's lease has lapsed, restores the widget and publishes it.
        try box.start("b", lease: "1500ms")
        #expect(waitFor(20) { inode() != nil }, "b never published the restored widget: \(box.logs())")
        let bs = inode()
        a.kill(SIGCONT)
        #expect(waitFor(10) { a.log().contains("fenced shard 0") }, "the resumed a did not fence: \(box.logs())")
        #expect(waitFor(10) { a.log().contains("no longer leads the shard") }, "a's refused write is not logged: \(box.logs())")
        usleep(500_000)
        #expect(inode() == bs, "the resumed a replaced b's publication")
        let temporaries = (try? FileManager.default.contentsOfDirectory(atPath: box.root + "/shared/widgets/fence")) ?? []
        #expect(temporaries == ["systemSmall.json"], "\(temporaries)")
        for node in box.nodes.values { node.kill(SIGTERM) }
        for (name, node) in box.nodes { #expect(node.wait(15) == 0, "\(name) did not stop cleanly: \(box.logs())") }
    }
}
