import Foundation
import Testing
@testable import Refreshd
import RefreshdCore

/// A run's CPU time and peak memory without a cgroup (issue 35, item 3's fallback): read from
/// `wait4` when the command is waited for (`CommandProcess`), kept with the run.
@Suite(.serialized) struct ExitUsageTests {
    /// About 200 ms of CPU (a fixed amount of work) and a 30 MB string held by the shell itself.
    static let script = "x=$(head -c 30000000 /dev/zero | tr '\\0' a); i=0; while [ $i -lt 130000 ]; do i=$((i+1)); done"

    @Test func withoutACgroupARunsUsageIsReadFromItsZombie() throws {
        let h = try LoopHarness(runCgroups: false) { s in
            s.register(TaskDefinition(identifier: "t.used", kind: .processing, allowance: .seconds(20)),
                       command: CommandJob(argv: ["/bin/sh", "-c", Self.script]))
            s.register(TaskDefinition(identifier: "t.idle", kind: .processing, allowance: .seconds(20)),
                       command: CommandJob(argv: ["/bin/sleep", "0.2"]))
        }
        defer { h.removeDirectory() }
        try h.scheduler.submit(TaskRequest(identifier: "t.used", kind: .processing))
        try h.scheduler.submit(TaskRequest(identifier: "t.idle", kind: .processing))
        h.start()
        #expect(h.wait { h.outcomes()["t.used"] == [.success] && h.outcomes()["t.idle"] == [.success] })
        #expect(h.stop())
        let runs = Dictionary(h.runs().map { ($0.identifier, $0) }, uniquingKeysWith: { a, _ in a })
        let used = try #require(runs["t.used"]?.usage)
        let cpu = try #require(used.cpuMicroseconds, "\(used)")
        #expect(cpu >= 50_000 && cpu <= 5_000_000, "cpu \(cpu) µs")
        // No peak without a cgroup: `ru_maxrss` counts what the child inherited from this
        // (large) process at the fork; in the full suite an idle `sleep` "peaked" at 74 MB.
        #expect(used.peakMemoryBytes == nil, "\(used)")
        // Each run its own: the idle one used next to nothing, though both ran at once.
        let idle = try #require(runs["t.idle"]?.usage)
        #expect((idle.cpuMicroseconds ?? .max) < 50_000, "\(idle)")
        #expect(idle.peakMemoryBytes == nil, "\(idle)")
        #expect(h.lines.all.contains { $0.contains("finished t.used run 1: success (exit 0) after") && $0.contains("; cpu ") && !$0.contains("peak memory") },
                "\(h.lines.all)")
    }
}
