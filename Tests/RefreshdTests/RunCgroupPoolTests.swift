import Foundation
import Testing
@testable import Refreshd
import RefreshdCore

/// Run cgroups kept for the next run (issue 35): a reused cgroup holds exactly the new job's
/// limits, counts only the new run's CPU and memory, and one where anything was killed or left is
/// never reused. On a planted cgroup-like tree (every controller "enabled", its files planted),
/// and with real processes where this machine gives refreshd cgroups.
@Suite(.serialized) struct RunCgroupPoolTests {
    /// The limit files are planted empty (a write shows as the file's whole text) and emptied
    /// again between runs: what each holds is what the pool wrote to it since.
    static let limitFiles = ["memory.max", "memory.swap.max", "cpu.max", "pids.max", "io.weight"]
    static let files = ["cgroup.procs": "", "cpu.stat": "usage_usec 0\n", "memory.current": "0\n", "memory.peak": "0\n",
                        "memory.events": "oom_kill 0\n", "pids.current": "0\n"]
        .merging(limitFiles.map { ($0, "") }, uniquingKeysWith: { $1 })

    /// A pool over a temporary directory whose first run cgroup is planted with the files.
    func plantedPool() throws -> (RunCgroupPool, String) {
        let parent = TempDirectory.make()
        let cgroups = RunCgroups(plan: .init(parent: parent, home: parent, enable: ["cpu", "io", "memory", "pids"], why: "planted"),
                                 instance: "pool")
        let first = cgroups.path(of: 1)
        try FileManager.default.createDirectory(atPath: first, withIntermediateDirectories: false)
        for (name, text) in Self.files { try text.write(toFile: first + "/" + name, atomically: false, encoding: .utf8) }
        return (RunCgroupPool(cgroups: cgroups), parent)
    }

    func read(_ path: String) -> String {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Only the writes needed: what the next job does not set goes back to its default, what
    /// it sets is written unless already there.
    @Test func limitWritesResetWhatTheNextJobDoesNotSet() {
        let current = ["memory.max": "33554432", "memory.swap.max": "0", "pids.max": "64"]
        let writes = RunCgroup.limitWrites(current: current, wanted: [("pids.max", "64"), ("cpu.max", "50000 100000")])
        #expect(writes.map { "\($0.file)=\($0.value)" } == ["memory.max=max", "memory.swap.max=max", "cpu.max=50000 100000"])
        #expect(RunCgroup.limitWrites(current: [:], wanted: []).isEmpty)
    }

    /// The second job's run reuses the first's cgroup: it has the second job's limits (the
    /// first's reset), its name in the run attribute, and its own CPU and oom kills only.
    @Test(.enabled(if: userAttributes, "needs user extended attributes in the temporary directory"))
    func aReusedCgroupHasTheNewJobsLimitsAndItsOwnAccounting() throws {
        let (pool, parent) = try plantedPool()
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let first = try pool.take(runID: 1, files: RunLimits.cgroupFiles(JobLimits(memoryBytes: 32 << 20, tasks: 64),
                                                                         controllers: pool.cgroups.controllers)).get()
        #expect(!first.reused && first.failures.isEmpty, "\(first.failures)")
        let path = first.cgroup.path
        #expect(read(path + "/memory.max") == "33554432" && read(path + "/pids.max") == "64")
        // The first run used 0.3 s of CPU and was killed once for memory.
        try "usage_usec 300000\n".write(toFile: path + "/cpu.stat", atomically: false, encoding: .utf8)
        try "oom_kill 1\n".write(toFile: path + "/memory.events", atomically: false, encoding: .utf8)
        let firstRead = RunCgroup.usage(of: first.cgroup, memory: true)
        #expect(firstRead.usage.cpuMicroseconds == 300_000 && firstRead.usage.memoryLimitKills == 1)
        #expect(pool.giveBack(first.cgroup, cpu: firstRead.cpu, oom: firstRead.oom))
        for file in Self.limitFiles { try "".write(toFile: path + "/" + file, atomically: false, encoding: .utf8) }

        let second = try pool.take(runID: 2, files: RunLimits.cgroupFiles(JobLimits(cpuPercent: 50),
                                                                          controllers: pool.cgroups.controllers)).get()
        #expect(second.reused && second.cgroup.path == path)
        #expect(read(path + "/memory.max") == "max" && read(path + "/memory.swap.max") == "max")
        #expect(read(path + "/pids.max") == "max" && read(path + "/cpu.max") == "50000 100000")
        #expect(read(path + "/io.weight") == "")  // at its default all along: not written
        #expect(RunCgroups.lastRun(of: path, named: 1) == 2)
        try "usage_usec 345000\n".write(toFile: path + "/cpu.stat", atomically: false, encoding: .utf8)
        let secondRead = RunCgroup.usage(of: second.cgroup, memory: true)
        #expect(secondRead.usage.cpuMicroseconds == 45_000 && secondRead.usage.memoryLimitKills == 0, "\(secondRead.usage)")
        pool.close(second.cgroup)
    }

    /// A cgroup that holds memory, counts a task, or had processes killed is not kept.
    @Test(.enabled(if: userAttributes, "needs user extended attributes in the temporary directory"))
    func aCgroupWithAnythingLeftIsNotKept() throws {
        let (pool, parent) = try plantedPool()
        defer { try? FileManager.default.removeItem(atPath: parent) }
        var taken = try pool.take(runID: 1, files: []).get().cgroup
        let path = taken.path
        try "4096\n".write(toFile: path + "/memory.current", atomically: false, encoding: .utf8)
        #expect(!pool.giveBack(taken, cpu: 10, oom: 0))
        try "0\n".write(toFile: path + "/memory.current", atomically: false, encoding: .utf8)
        try "1\n".write(toFile: path + "/pids.current", atomically: false, encoding: .utf8)
        #expect(!pool.giveBack(taken, cpu: 10, oom: 0))
        try "0\n".write(toFile: path + "/pids.current", atomically: false, encoding: .utf8)
        taken.killed = true
        #expect(!pool.giveBack(taken, cpu: 10, oom: 0))
        taken.killed = false
        #expect(pool.giveBack(taken, cpu: 10, oom: 0))
        pool.drain()
    }

    static let userAttributes: Bool = {
        let path = TempDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: path) }
        return RunCgroupPool.tag(RunCgroup(path: path), runID: 1)
    }()

    /// With real processes: a run after another of a different job reuses its cgroup and counts
    /// only its own CPU; a run whose cgroup had a process left at its end is not followed into
    /// that cgroup.
    @Test(.enabled(if: RunLimitsTests.runCgroupsAvailable, "needs a writable cgroup2 hierarchy (a cgroup per run)"))
    func realRunsReuseAnEmptiedCgroupAndNeverOneWithASurvivor() throws {
        let burn = "i=0; while [ $i -lt 130000 ]; do i=$((i+1)); done; cat /proc/self/cgroup"
        let directory = TempDirectory.make()
        // It leaves a process in a session of its own, once that process has left the group.
        let leave = "setsid /bin/sh -c 'echo $$ > \(directory)/left.pid; exec sleep 30' </dev/null >/dev/null 2>&1 3>&- &"
            + " while [ ! -s \(directory)/left.pid ]; do sleep 0.01; done; cat /proc/self/cgroup"
        let h = try LoopHarness(directory: directory) { s in
            for (name, script) in [("t.burn", burn), ("t.quick", "cat /proc/self/cgroup"), ("t.leave", leave), ("t.after", "cat /proc/self/cgroup")] {
                s.register(TaskDefinition(identifier: name, kind: .processing, allowance: .seconds(20)),
                           command: CommandJob(argv: ["/bin/sh", "-c", script]))
            }
        }
        defer { h.removeDirectory() }
        h.start()
        defer { h.stop() }
        var cgroups: [String: String] = [:]
        for name in ["t.burn", "t.quick", "t.leave", "t.after"] {
            try h.scheduler.submit(TaskRequest(identifier: name, kind: .processing))
            #expect(h.wait { h.outcomes()[name] == [.success] }, "\(h.lines.all)")
            cgroups[name] = h.lines.all.first { $0.contains("\(name)[") && $0.contains("stdout: 0::/") }?
                .components(separatedBy: "stdout: 0::").last
        }
        #expect(cgroups["t.quick"] != nil && cgroups["t.quick"] == cgroups["t.burn"], "\(cgroups)")
        #expect(cgroups["t.after"] != nil && cgroups["t.after"] != cgroups["t.leave"], "\(cgroups)")
        let runs = Dictionary(h.runs().map { ($0.identifier, $0) }, uniquingKeysWith: { $1 })
        let burnt = try #require(runs["t.burn"]?.usage.cpuMicroseconds)
        let quick = try #require(runs["t.quick"]?.usage.cpuMicroseconds)
        #expect(burnt >= 50_000 && quick < burnt / 2, "burn \(burnt) µs, quick \(quick) µs")
        #expect(h.lines.all.contains { $0.contains("leftover process") }, "\(h.lines.all)")
    }
}
