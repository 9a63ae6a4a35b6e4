import Foundation
import Testing
@testable import Refreshd
import RefreshdCore

/// A job's `limits:` on the libuv host (issue 35): where each limit goes (pure), the fallback
/// on the command itself where no cgroup holds it, and what a run used, from its cgroup.
@Suite(.serialized) struct RunLimitsTests {
    static let all = JobLimits(memoryBytes: 32 << 20, cpuPercent: 50, tasks: 64, nice: 10, ioWeight: 50)

    @Test func eachLimitGoesToItsCgroupFileOrSaysWhyNot() {
        let full = RunLimits.describe(RunLimits.placement(Self.all, controllers: ["cpu", "io", "memory", "pids"]))
        #expect(full == "limits: memory 32.0 MiB (memory.max), cpu 50% (cpu.max), tasks 64 (pids.max), nice 10 (setpriority), io-weight 50 (io.weight)")
        let grouping = RunLimits.describe(RunLimits.placement(Self.all, controllers: []))
        #expect(grouping == "limits: memory 32.0 MiB (RLIMIT_DATA, no memory controller), nice 10 (setpriority); "
            + "not applied: cpu 50% (no cpu controller), tasks 64 (no pids controller), io-weight 50 (no io controller)")
        let none = RunLimits.describe(RunLimits.placement(JobLimits(cpuPercent: 150), controllers: nil))
        #expect(none == "limits: none applied; not applied: cpu 150% (no cgroup)")
    }

    /// Every file is written before the spawn, exact (refreshd never enters the run's cgroup:
    /// the command is born there), and only for the controllers enabled.
    @Test func cgroupFilesForTheControllersEnabled() {
        let files = RunLimits.cgroupFiles(Self.all, controllers: ["cpu", "io", "memory", "pids"])
        #expect(files.map { "\($0.file)=\($0.value)" }
            == ["memory.max=33554432", "memory.swap.max=0", "cpu.max=50000 100000", "pids.max=64", "io.weight=default 50"])
        #expect(RunLimits.cgroupFiles(Self.all, controllers: ["pids"]).map(\.file) == ["pids.max"])
        #expect(RunLimits.cgroupFiles(Self.all, controllers: []).isEmpty)
    }

    @Test func usageIsReadFromTheCgroupsFiles() throws {
        let dir = TempDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "usage_usec 212345\nuser_usec 200000\nsystem_usec 12345\n".write(toFile: dir + "/cpu.stat", atomically: true, encoding: .utf8)
        try "35651584\n".write(toFile: dir + "/memory.peak", atomically: true, encoding: .utf8)
        try "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\noom_group_kill 0\n".write(toFile: dir + "/memory.events", atomically: true, encoding: .utf8)
        #expect(RunLimits.usage(ofCgroup: dir) == RunUsage(cpuMicroseconds: 212_345, peakMemoryBytes: 35_651_584, memoryLimitKills: 1))
        // Without the memory controller its files are not even looked for.
        #expect(RunLimits.usage(ofCgroup: dir, memory: false) == RunUsage(cpuMicroseconds: 212_345))
        try FileManager.default.removeItem(atPath: dir + "/memory.peak")
        try FileManager.default.removeItem(atPath: dir + "/memory.events")
        #expect(RunLimits.usage(ofCgroup: dir) == RunUsage(cpuMicroseconds: 212_345))
    }

    /// A flat-keyed file's field, by name, whole: not a longer name's, not a prefix's.
    @Test func aFieldIsFoundByItsWholeName() {
        let events = "oom 1\noom_kill 3\noom_group_kill 0\n"
        #expect(RunLimits.field("oom_kill", in: events) == 3)
        #expect(RunLimits.field("oom", in: events) == 1)
        #expect(RunLimits.field("kill", in: events) == nil)
        #expect(RunLimits.field("usage_usec", in: "usage_usec 212345\nuser_usec 2") == 212_345)
        #expect(RunLimits.field("usage_usec", in: "usage_usec  7\n") == 7)  // two spaces: as split
        #expect(RunLimits.field("usage_usec", in: "usage_usec 7 8\n") == nil)
        #expect(RunLimits.field("usage_usec", in: "") == nil)
    }

    /// Without a cgroup: the memory limit is the command's RLIMIT_DATA and its nice value is set
    /// (both after the spawn: the command waits a moment before it reads them), and the log
    /// says which limits apply.
    @Test func withoutACgroupTheCommandGetsRlimitAndNice() throws {
        let h = try LoopHarness(runCgroups: false) { s in
            var command = CommandJob(argv: ["/bin/sh", "-c", "sleep 0.3; grep '^Max data size' /proc/$$/limits; echo nice $(cut -d' ' -f19 /proc/$$/stat)"])
            command.limits = JobLimits(memoryBytes: 32 << 20, cpuPercent: 50, nice: 10)
            s.register(TaskDefinition(identifier: "t.limited", kind: .processing, allowance: .seconds(10)), command: command)
        }
        defer { h.removeDirectory() }
        try h.scheduler.submit(TaskRequest(identifier: "t.limited", kind: .processing))
        h.start()
        #expect(h.wait { h.outcomes()["t.limited"] == [.success] })
        #expect(h.stop())
        let lines = h.lines.all
        #expect(lines.contains { $0.contains("t.limited[1] stdout: Max data size") && $0.contains("33554432") }, "\(lines)")
        #expect(lines.contains { $0.contains("t.limited[1] stdout: nice 10") }, "\(lines)")
        #expect(lines.contains { $0.contains("t.limited[1] limits: memory 32.0 MiB (RLIMIT_DATA, no cgroup), nice 10 (setpriority); not applied: cpu 50% (no cgroup)") }, "\(lines)")
    }

    /// A run that burns about 200 ms of CPU: its cgroup's `cpu.stat` is kept with the run (no
    /// controller needed), and the log's end line shows it.
    @Test(.enabled(if: Self.runCgroupsAvailable, "needs a writable cgroup2 hierarchy (a cgroup per run)"))
    func aRunsCPUTimeIsMeasuredByItsCgroup() throws {
        // A fixed amount of work (about 200 ms of CPU here), not a wall-clock span: a loaded
        // machine stretches it without changing its CPU time.
        let burn = "i=0; while [ $i -lt 130000 ]; do i=$((i+1)); done"
        let h = try LoopHarness { s in
            s.register(TaskDefinition(identifier: "t.burn", kind: .processing, allowance: .seconds(20)),
                       command: CommandJob(argv: ["/bin/sh", "-c", burn]))
        }
        defer { h.removeDirectory() }
        try h.scheduler.submit(TaskRequest(identifier: "t.burn", kind: .processing))
        h.start()
        #expect(h.wait { h.outcomes()["t.burn"] == [.success] })
        #expect(h.stop())
        let run = try #require(h.runs().first)
        let cpu = try #require(run.usage.cpuMicroseconds)
        #expect(cpu >= 50_000 && cpu <= 5_000_000, "cpu \(cpu) µs")
        #expect(h.lines.all.contains { $0.contains("finished t.burn run 1: success (exit 0) after") && $0.contains("; cpu ") }, "\(h.lines.all)")
    }

    /// Whether an embedded scheduler gets a cgroup per run here (probed as it would be).
    static let runCgroupsAvailable: Bool = {
        if case .success = RunCgroups.detect(instance: "limits-test-probe") { true } else { false }
    }()
}
