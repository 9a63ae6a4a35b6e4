import CLibUV
import Glibc
import RefreshdCore

/// A command run's cgroup as the host holds it (issue 35): its path, the descriptors a run uses
/// (the directory, for `clone3`'s `CLONE_INTO_CGROUP`; `memory.peak`, whose peak a write resets
/// for that descriptor only), the limit files it holds that are not at their default, and its
/// counters when its last run ended (`cpu.stat` and `memory.events` count from the cgroup's
/// making, so a reused one's run is what it used since).
struct RunCgroup {
    let path: String
    /// The directory, open (-1: could not be opened: the command is moved in after its spawn).
    var directory: Int32 = -1
    /// `memory.peak`, open read-write (-1: no memory controller, or a kernel before 6.12 whose
    /// `memory.peak` cannot be reset: then the cgroup is never reused).
    var peak: Int32 = -1
    /// The limit files written and their values (the others are at their defaults).
    var limits: [String: String] = [:]
    /// `cpu.stat` usage_usec and `memory.events` oom_kill when its last run ended.
    var cpuBase: Int64 = 0
    var oomBase: Int64 = 0
    /// Its processes were killed (`cgroup.kill`) during the run: never reused.
    var killed = false

    /// The defaults the limit files `RunLimits.cgroupFiles` writes go back to.
    static let limitDefaults = ["memory.max": "max", "memory.swap.max": "max", "cpu.max": "max 100000",
                                "pids.max": "max", "io.weight": "default 100"]

    /// The writes that give a cgroup holding `current` exactly the files `wanted` (the others at
    /// their defaults): nothing for a file already at its value. Pure.
    static func limitWrites(current: [String: String], wanted: [(file: String, value: String)]) -> [(file: String, value: String)] {
        let want = Dictionary(wanted.map { ($0.file, $0.value) }, uniquingKeysWith: { $1 })
        var writes = current.keys.sorted().filter { want[$0] == nil }.map { ($0, limitDefaults[$0] ?? "max") }
        writes += wanted.filter { current[$0.file] != $0.value }
        return writes
    }

    /// What the run in `cgroup` used (its counters since it was taken: `cpu.stat` usage_usec,
    /// and with the memory controller `memory.peak`, through `peak` where it is open, and
    /// `memory.events` oom_kill), and the counters read.
    static func usage(of cgroup: RunCgroup, memory: Bool) -> (usage: RunUsage, cpu: Int64?, oom: Int64?) {
        let cpu = cgroup.read("cpu.stat").flatMap { RunLimits.field("usage_usec", in: $0) }
        let used = cpu.map { max(0, $0 - cgroup.cpuBase) }
        guard memory else { return (RunUsage(cpuMicroseconds: used), cpu, nil) }
        let oom = cgroup.read("memory.events").flatMap { RunLimits.field("oom_kill", in: $0) }
        let peak = cgroup.peak >= 0 ? RunCgroupPool.readNumber(cgroup.peak)
            : cgroup.read("memory.peak").flatMap { Int64($0) }
        return (RunUsage(cpuMicroseconds: used, peakMemoryBytes: peak,
                         memoryLimitKills: oom.map { Int(max(0, $0 - cgroup.oomBase)) } ?? 0), cpu, oom)
    }

    /// A file of the cgroup, opened relative to its directory where that is open.
    func read(_ name: String) -> String? {
        directory >= 0 ? ConditionsProbe.readFile(at: directory, name) : ConditionsProbe.readFile(path + "/" + name)
    }

    /// The pids in it (`cgroup.procs`).
    var members: [Int32] {
        read("cgroup.procs").map { $0.split(whereSeparator: \.isNewline).compactMap { Int32($0) } } ?? []
    }

    /// Whose run the cgroup holds, for a restart after a crash (`existing`): its name says the
    /// run it was made for, this attribute the run it was last taken for.
    static let runAttribute = "user.refreshd_run"
}

/// The run cgroups kept empty between runs (issue 35): a `mkdir` and an `rmdir` of a cgroup cost
/// more than the rest of a run's cgroup files together, so a cgroup whose run ended with nothing
/// left in it (nothing killed, no member at the last read, no task counted) and whose accounting
/// was read is kept for the next run, up to `capacity`; any other is removed. Loop thread only.
final class RunCgroupPool {
    let cgroups: RunCgroups
    /// The idle cgroups, the last given back first.
    private(set) var idle: [RunCgroup] = []
    /// The most kept idle (the runs in flight at once, usually).
    let capacity: Int

    init(cgroups: RunCgroups, capacity: Int = 16) {
        self.cgroups = cgroups
        self.capacity = capacity
    }

    /// What `take` gives: the cgroup with the run's limit files written, whether it was reused,
    /// and the files that could not be written (a fresh cgroup's; a reused one is dropped on any
    /// failure for a fresh one, so it never keeps another job's limit).
    struct Taken {
        var cgroup: RunCgroup
        var reused: Bool
        var failures: [String]
    }

    /// A cgroup for `runID` with exactly the limit files `files`: an idle one (named for the run
    /// now through `RunCgroup.runAttribute`), or a new one.
    func take(runID: Int64, files: [(file: String, value: String)]) -> Result<Taken, RunCgroups.Unusable> {
        while var cgroup = idle.popLast() {
            let tagged = Self.tag(cgroup, runID: runID)
            let failures = tagged ? cgroups.write(RunCgroup.limitWrites(current: cgroup.limits, wanted: files), at: cgroup.path) : ["tag"]
            guard failures.isEmpty else {
                discard(cgroup)
                continue
            }
            cgroup.limits = Dictionary(files.map { ($0.file, $0.value) }, uniquingKeysWith: { $1 })
            return .success(Taken(cgroup: cgroup, reused: true, failures: []))
        }
        return cgroups.create(runID: runID).map { path in
            var cgroup = RunCgroup(path: path)
            cgroup.directory = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            _ = Self.tag(cgroup, runID: runID)  // over a dead refreshd's, if it was left
            if cgroups.controllers.contains("memory") { cgroup.peak = open(path + "/memory.peak", O_RDWR | O_CLOEXEC) }
            let failures = cgroups.write(files, at: path)
            let failed = Set(failures.compactMap { $0.split(separator: ":").first.map(String.init) })
            cgroup.limits = Dictionary(files.filter { !failed.contains($0.file) }.map { ($0.file, $0.value) }, uniquingKeysWith: { $1 })
            return Taken(cgroup: cgroup, reused: false, failures: failures)
        }
    }

    /// Keeps an emptied cgroup whose accounting was read for the next run, else removes it: kept
    /// only with its counters read, and with the memory controller only if it holds no memory
    /// (pages a run left charged would count in the next run's peak) and its `memory.peak` was
    /// reset (to 0, what it holds). False: the caller removes it (`discard`).
    func giveBack(_ cgroup: RunCgroup, cpu: Int64?, oom: Int64?) -> Bool {
        guard idle.count < capacity, !cgroup.killed, cgroup.directory >= 0, let cpu else { return false }
        var kept = cgroup
        kept.cpuBase = cpu
        // A process that left `cgroup.procs` counts in `pids.current` until it is waited for.
        if cgroups.controllers.contains("pids"), cgroup.read("pids.current").flatMap({ Int64($0) }) != 0 { return false }
        if cgroups.controllers.contains("memory") {
            guard let oom, cgroup.peak >= 0,
                  cgroup.read("memory.current").flatMap({ Int64($0) }) == 0,
                  pwrite(cgroup.peak, "0", 1, 0) == 1 else { return false }
            kept.oomBase = oom
        }
        idle.append(kept)
        return true
    }

    /// Closes a cgroup's descriptors (its directory is removed by the caller).
    func close(_ cgroup: RunCgroup) {
        if cgroup.directory >= 0 { _ = Glibc.close(cgroup.directory) }
        if cgroup.peak >= 0 { _ = Glibc.close(cgroup.peak) }
    }

    /// Closes an idle cgroup's descriptors and removes it (an idle one is empty).
    private func discard(_ cgroup: RunCgroup) {
        close(cgroup)
        _ = cgroups.remove(cgroup.path)
    }

    /// At the stop: every idle cgroup removed.
    func drain() {
        while let cgroup = idle.popLast() { discard(cgroup) }
    }

    var idlePaths: Set<String> { Set(idle.map(\.path)) }

    /// Names the run a cgroup now holds (`RunCgroup.runAttribute`).
    static func tag(_ cgroup: RunCgroup, runID: Int64) -> Bool {
        String(runID).withCString { value in
            cgroup.directory >= 0 ? fsetxattr(cgroup.directory, RunCgroup.runAttribute, value, strlen(value), 0)
                : setxattr(cgroup.path, RunCgroup.runAttribute, value, strlen(value), 0)
        } == 0
    }

    /// A number read from the start of an open file.
    static func readNumber(_ fd: Int32) -> Int64? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return Int64(String(decoding: buffer[..<count].prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self))
    }
}

extension RunCgroups {
    /// The run a cgroup of a dead refreshd last held: its `RunCgroup.runAttribute`, else the
    /// run its name says it was made for.
    static func lastRun(of path: String, named runID: Int64) -> Int64 {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { getxattr(path, RunCgroup.runAttribute, $0.baseAddress, $0.count) }
        guard count > 0 else { return runID }
        return Int64(String(decoding: buffer[..<count], as: UTF8.self)) ?? runID
    }
}
