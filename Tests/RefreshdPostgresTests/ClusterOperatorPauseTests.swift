import Foundation
#if canImport(Glibc)
import Glibc
#endif
import RefreshdCore
import RefreshdRuntime
import Testing

/// Issue 33: `ctl pause` and `ctl resume` in cluster mode, sent to a node that does not lead the
/// job's shard: queued in the database like `cancel`, applied by the leader (a `paused` record in
/// the shard's state, which `status` on any node reads), and undone by `resume`.
@Suite(.serialized) struct ClusterOperatorPauseTests {
    @Test func aPauseSentToAnyNodeHoldsTheJobOnItsLeaderUntilResumed() throws {
        let scratch = try ClusterSandbox("pause-op", shards: 4)
        defer { scratch.close() }
        let out = scratch.root + "/runs.txt"
        try scratch.job("beat.yaml", """
            identifier: test.beat
            kind: processing
            command: ["/bin/sh", "-c", "echo $REFRESH_RUN_ID >> \(out)"]
            resubmit: {after: 1s}
            allowance: 5s
            """)
        for name in ["a", "b"] { try scratch.start(name, lease: "2s") }
        func runs() -> Int { ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").split(separator: "\n").count }
        func paused(via node: String) -> [String] {
            guard let (_, output) = try? scratch.cli(["status", "--json", "--state", scratch.root + "/state-" + node]),
                  let report = try? JSONDecoder().decode(StatusReport.self, from: Data(output.utf8)) else { return [] }
            return report.paused.map(\.identifier)
        }
        #expect(waitFor(20) { runs() >= 2 }, "the job did not run: \(scratch.logs())")

        let pause = try scratch.cli(["ctl", "pause", "test.beat", "--state", scratch.root + "/state-b"])
        #expect(pause.status == 0 && pause.output.contains("paused test.beat: nothing of it launches until refreshd ctl resume test.beat"), "\(pause.output)")
        #expect(waitFor(10) { paused(via: "a") == ["test.beat"] && paused(via: "b") == ["test.beat"] }, "\(scratch.logs())")
        usleep(1_500_000)  // a run in flight when the leader applied it ends on its own
        let held = runs()
        usleep(3_000_000)
        #expect(runs() == held, "a 1 s job kept launching while paused: \(runs()) runs, \(held) at the pause")

        let resume = try scratch.cli(["ctl", "resume", "test.beat", "--state", scratch.root + "/state-a"])
        #expect(resume.status == 0 && resume.output.contains("resumed test.beat"), "\(resume.output)")
        #expect(waitFor(10) { runs() > held + 1 }, "it did not run again once resumed: \(scratch.logs())")
        #expect(paused(via: "b").isEmpty)

        for node in scratch.nodes.values { node.kill(SIGTERM) }
        for (name, node) in scratch.nodes { #expect(node.wait(15) == 0, "\(name) did not stop cleanly: \(scratch.logs())") }
        #expect(processes(tagged: scratch.tag).isEmpty)
    }
}
