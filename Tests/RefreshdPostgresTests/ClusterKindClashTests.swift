import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// A plain timeline job may not take the widget kind of a template's instance, on a cluster node
/// as on one machine (issue 32: the rule was the one-machine daemon's only, so a node took the
/// instance's kind over): a reload that adds such a job is refused whole at its `widget.kind`
/// (file, line, column) and the jobs in force stay; a node started with it refuses to start.
/// The instance lives in a shard the refusing node need not lead: the check reads every shard.
@Suite(.serialized) struct ClusterKindClashTests {
    @Test func aNodeRefusesAPlainTimelineJobTakingAnInstancesKind() throws {
        let scratch = try ClusterSandbox("clash", shards: 4)
        defer { scratch.close() }
        let provider = scratch.root + "/provider"
        try """
            #!/bin/sh
            printf '{"entries":[{"date":"%s","content":{"by":"%s"}}],"policy":"never"}\\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$1" >&3
            """.write(toFile: provider, atomically: true, encoding: .utf8)
        chmod(provider, 0o755)
        try scratch.job("feed.yaml", """
            identifier: test.feed.widget
            kind: timeline
            template: true
            parameters: [user]
            command: ["\(provider)", "{user}"]
            widget: {kind: "feed.{user}", families: [systemSmall]}
            """)
        try scratch.start("a", lease: "2s")
        try scratch.start("b", lease: "2s")
        #expect(waitFor(30) { ["a", "b"].allSatisfy { scratch.nodes[$0]?.log().contains("leads shard") == true } }, "\(scratch.logs())")
        let added = try scratch.cli(["ctl", "instance", "add", "test.feed.widget", "alice", "--state", scratch.root + "/state-a"])
        #expect(added.status == 0, "\(added.output)")
        let published = scratch.root + "/shared/widgets/feed.alice/systemSmall.json"
        #expect(waitFor(30) { ((try? String(contentsOfFile: published, encoding: .utf8)) ?? "").contains(#""by":"alice""#) },
                "\(scratch.logs())")

        try scratch.job("plain.yaml", """
            identifier: test.plain.widget
            kind: timeline
            command: ["\(provider)", "plain"]
            widget:
              families: [systemSmall]
              kind: feed.alice
            """)
        let expected = "\(scratch.root)/jobs/plain.yaml:6:9: widget.kind: \"feed.alice\" is the widget kind of instance "
            + "test.feed.widget[alice] (its template's kind \"feed.{user}\""
        for name in ["a", "b"] {
            #expect(waitFor(20) { scratch.nodes[name]?.log().contains(expected) == true }, "node \(name): \(scratch.logs())")
            #expect(scratch.nodes[name]?.log().contains("reload refused") == true)
        }
        // The instance's widget stays its own: the plain job never ran or published.
        sleep(2)
        #expect(((try? String(contentsOfFile: published, encoding: .utf8)) ?? "").contains(#""by":"alice""#))
        #expect(!scratch.logs().contains("test.plain.widget#systemSmall"), "\(scratch.logs())")

        // A node started with the job refuses to start, at the same place.
        let refused = try scratch.cli(["run", "--jobs", scratch.root + "/jobs", "--state", scratch.root + "/state-c",
                                       "--shared", scratch.root + "/shared", "--store", scratch.conninfo, "--node", "c"])
        #expect(refused.status == 1, "\(refused.output)")
        #expect(refused.output.contains(expected) && refused.output.contains("give this job another kind to start")
                && refused.output.contains("refreshd: refusing to start: 1 error in \(scratch.root)/jobs"), "\(refused.output)")
    }
}
