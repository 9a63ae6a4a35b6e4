import Foundation
import Testing

/// Issue 35, items 2 and 3, with the real daemon in a delegated subtree made under the test's
/// own cgroup (as `DelegatedCgroupTests` makes one): a run's CPU time is measured and shown
/// (`status --runs`, `--json`, metrics); a run over `limits.memory` ends `crashed` with the
/// reason "memory limit"; `limits.tasks` refuses forks. The last two need the memory and pids
/// controllers enabled for the test's cgroup's children; else they are skipped, saying so.
@Suite(.serialized) struct JobLimitsCgroupTests {
    /// The controllers the test's cgroup gives its children (`cgroup.subtree_control`).
    static let offered: [String] = DelegatedCgroupTests.base.flatMap {
        try? String(contentsOfFile: $0.directory + "/cgroup.subtree_control", encoding: .utf8)
    }?.split(whereSeparator: \.isWhitespace).map(String.init) ?? []

    /// Runs `job` (a job file's text) under a daemon started in a fresh delegated subtree, until
    /// `done` holds of the sandbox; then stops it and removes the subtree.
    func withDaemon(job: String, until done: (Sandbox) -> Bool, check: (Sandbox, CLI.Running) throws -> Void) throws {
        let box = Sandbox()
        defer { box.remove() }
        let (_, directory) = try #require(DelegatedCgroupTests.base)
        let subtree = directory + "/refreshd-test-limits-\(UUID().uuidString.prefix(8))"
        #expect(mkdir(subtree, 0o755) == 0)
        defer { DelegatedCgroupTests.removeTree(subtree) }
        let marked = "1".withCString { DelegatedCgroupTests.setxattr(subtree, "trusted.delegate", $0, 1, 0) }
        try #require(marked == 0, "cannot mark \(subtree) delegated: \(String(cString: strerror(errno)))")
        try box.write("job.yaml", job)
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state, "--metrics-file", box.root + "/metrics.prom"],
                                   via: ["/bin/sh", "-c", "echo $$ > \"$0/cgroup.procs\" && exec \"$@\"", subtree])
        defer { daemon.cleanUp() }
        #expect(waitFor(timeout: 30) { done(box) }, "\(daemon.errors())")
        try check(box, daemon)
        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)
    }

    @Test(.enabled(if: DelegatedCgroupTests.base != nil, "needs root and a writable cgroup2 hierarchy"))
    func aRunsCPUTimeIsKeptShownAndCounted() throws {
        try withDaemon(job: """
            identifier: test.burn
            kind: processing
            command: ["/bin/sh", "-c", "i=0; while [ $i -lt 130000 ]; do i=$((i+1)); done"]
            allowance: 1m
            """, until: { $0.runs().map(\.1) == ["success"] }) { box, daemon in
            let run = try #require((box.status()?["runs"] as? [[String: Any]])?.first)
            let cpu = try #require(run["cpuMicroseconds"] as? Int, "\(run)")
            #expect(cpu >= 50_000 && cpu <= 5_000_000, "cpu \(cpu) µs")
            if Self.offered.contains("memory") { #expect((run["peakMemoryBytes"] as? Int ?? 0) > 0, "\(run)") }
            let text = try CLI.run(["status", "--state", box.state])
            #expect(text.stdout.range(of: #"success after \S+ \(exit 0\)  cpu \d+\.\d\ds"#, options: .regularExpression) != nil,
                    "\(text.stdout)")
            #expect(waitFor { box.read("metrics.prom")?.contains("refreshd_run_cpu_seconds_count{job=\"test.burn\"} 1") ?? false },
                    "\(box.read("metrics.prom") ?? "no metrics file")")
        }
    }

    @Test(.enabled(if: DelegatedCgroupTests.base != nil && offered.contains("memory"),
                   "needs root and the memory controller enabled for the test's cgroup's children"))
    func aRunOverItsMemoryLimitCrashesWithTheReason() throws {
        try withDaemon(job: """
            identifier: test.hungry
            kind: processing
            command: ["/bin/sh", "-c", "x=$(head -c 100000000 /dev/zero | tr '\\\\0' a); echo ${#x}"]
            allowance: 1m
            limits: {memory: 32M}
            """, until: { $0.runs().map(\.1) == ["crashed"] }) { box, daemon in
            let run = try #require((box.status()?["runs"] as? [[String: Any]])?.first)
            #expect(run["reason"] as? String == "memory limit", "\(run)")
            #expect(daemon.errors().contains("test.hungry[1] limits: memory 32.0 MiB (memory.max)"), "\(daemon.errors())")
            #expect(daemon.errors().contains("finished test.hungry run 1: crashed (memory limit, "), "\(daemon.errors())")
            let text = try CLI.run(["status", "--state", box.state])
            #expect(text.stdout.contains("(memory limit)"), "\(text.stdout)")
        }
    }

    @Test(.enabled(if: DelegatedCgroupTests.base != nil && offered.contains("pids"),
                   "needs root and the pids controller enabled for the test's cgroup's children"))
    func aTasksLimitRefusesForks() throws {
        try withDaemon(job: """
            identifier: test.forky
            kind: processing
            command: ["/bin/sh", "-c", "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 2 & done; wait"]
            allowance: 1m
            limits: {tasks: 4}
            """, until: { ($0.runs().first?.1).map { $0 != "running" } ?? false }) { _, daemon in
            #expect(daemon.errors().contains("test.forky[1] limits: tasks 4 (pids.max)"), "\(daemon.errors())")
            #expect(daemon.errors().lowercased().contains("fork"), "\(daemon.errors())")
        }
    }
}
