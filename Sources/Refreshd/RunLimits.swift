import CLibUV
import Glibc
import RefreshdCore

/// A job's `limits:` (issue 35) as the libuv host applies them to a run, and what a run used.
///
/// Where the run's cgroup has the controller, each limit is a cgroup v2 file of it: `memory.max`
/// (with `memory.swap.max` 0: the limit is the run's memory, swap included), `cpu.max`,
/// `pids.max`, `io.weight`. Where it has not (no cgroup, or one that only groups), `memory`
/// falls back to `RLIMIT_DATA` on the command (`prlimit` after the spawn), `nice` is always
/// `setpriority` on the command's process group after the spawn, and `cpu`, `tasks` and
/// `io-weight` have no equivalent (`RLIMIT_CPU` is a total, not a rate; `RLIMIT_NPROC` counts
/// every process of the user, not the run's): the run's log line says which apply.
///
/// What is decided (`placement`) is a pure function of the limits and the controllers enabled.
enum RunLimits {
    /// Where one limit goes.
    enum Means: Equatable {
        /// Written to this file of the run's cgroup.
        case cgroupFile(String)
        /// Set on the command after its spawn (`prlimit`, `setpriority`).
        case process(String)
        /// Not applied, and why.
        case notApplied(String)
    }

    /// Each limit set, in the order `limits:` documents them, with where it goes.
    static func placement(_ limits: JobLimits, controllers: [String]?) -> [(limit: String, means: Means)] {
        let has = { (name: String) in controllers?.contains(name) ?? false }
        let why = { (name: String) in controllers == nil ? "no cgroup" : "no \(name) controller" }
        var placed: [(String, Means)] = []
        if let bytes = limits.memoryBytes {
            placed.append(("memory \(RunUsage.size(bytes))",
                           has("memory") ? .cgroupFile("memory.max") : .process("RLIMIT_DATA, \(why("memory"))")))
        }
        if let percent = limits.cpuPercent {
            placed.append(("cpu \(percent)%", has("cpu") ? .cgroupFile("cpu.max") : .notApplied(why("cpu"))))
        }
        if let tasks = limits.tasks {
            placed.append(("tasks \(tasks)", has("pids") ? .cgroupFile("pids.max") : .notApplied(why("pids"))))
        }
        if let nice = limits.nice {
            placed.append(("nice \(nice)", .process("setpriority")))
        }
        if let weight = limits.ioWeight {
            placed.append(("io-weight \(weight)", has("io") ? .cgroupFile("io.weight") : .notApplied(why("io"))))
        }
        return placed
    }

    /// The log line's text: `limits: memory 32.0 MiB (memory.max), nice 10 (setpriority); not
    /// applied: cpu 50% (no cpu controller)`.
    static func describe(_ placed: [(limit: String, means: Means)]) -> String {
        var applied: [String] = [], skipped: [String] = []
        for (limit, means) in placed {
            switch means {
            case let .cgroupFile(file): applied.append("\(limit) (\(file))")
            case let .process(how): applied.append("\(limit) (\(how))")
            case let .notApplied(why): skipped.append("\(limit) (\(why))")
            }
        }
        var text = "limits: " + (applied.isEmpty ? "none applied" : applied.joined(separator: ", "))
        if !skipped.isEmpty { text += "; not applied: " + skipped.joined(separator: ", ") }
        return text
    }

    /// `cpu.max` for a percentage of one CPU, over the default 100 ms period.
    static func cpuMax(percent: Int) -> String { "\(percent * 1000) 100000" }

    /// The run cgroup's files, all written before the spawn: no thread of refreshd's ever enters
    /// the run's cgroup (the command is born there, `refreshd_spawn`), so no limit can meet
    /// refreshd's own threads or allocations (the child shares refreshd's memory until its exec,
    /// and that memory stays charged to refreshd's cgroup). `memory.swap.max` fails where swap
    /// is not accounted.
    static func cgroupFiles(_ limits: JobLimits, controllers: [String]) -> [(file: String, value: String)] {
        var files: [(String, String)] = []
        if let bytes = limits.memoryBytes, controllers.contains("memory") {
            files.append(("memory.max", String(bytes)))
            files.append(("memory.swap.max", "0"))
        }
        if let percent = limits.cpuPercent, controllers.contains("cpu") { files.append(("cpu.max", cpuMax(percent: percent))) }
        if let tasks = limits.tasks, controllers.contains("pids") { files.append(("pids.max", String(tasks))) }
        if let weight = limits.ioWeight, controllers.contains("io") { files.append(("io.weight", "default \(weight)")) }
        return files
    }

    /// What a run used, from its cgroup's files: `cpu.stat` usage_usec (there without the cpu
    /// controller), and with the memory controller (`memory`) `memory.peak` (Linux 5.19) and
    /// `memory.events` oom_kill. Read at every command run's end: a file per measure, none
    /// that cannot be there.
    static func usage(ofCgroup path: String, memory: Bool = true) -> RunUsage {
        RunCgroup.usage(of: RunCgroup(path: path), memory: memory).usage
    }

    /// The value of `name` in a flat-keyed cgroup file (`usage_usec 1234` lines).
    /// Scans the bytes (the run's `cpu.stat` is read at every run's end; splitting the text
    /// into strings was about 2% of refreshd's samples); the same answer as the split below.
    static func field(_ name: String, in text: String) -> Int64? {
        let key = Array(name.utf8)
        let scanned = text.utf8.withContiguousStorageIfAvailable { bytes -> Int64?? in
            var start = 0
            while start < bytes.count {
                var end = start
                while end < bytes.count, bytes[end] != UInt8(ascii: "\n") { end += 1 }
                if end - start > key.count + 1, bytes[start + key.count] == UInt8(ascii: " "),
                   key.indices.allSatisfy({ bytes[start + $0] == key[$0] }) {
                    var value: Int64 = 0, index = start + key.count + 1
                    while index < end, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9"),
                          value < Int64.max / 10 - 9 {
                        value = value * 10 + Int64(bytes[index] - UInt8(ascii: "0"))
                        index += 1
                    }
                    // Anything else on the line (a sign, a space, a second field): the split decides.
                    if index == end { return .some(value) }
                    return nil
                }
                start = end + 1
            }
            return .some(nil)
        }
        if let scanned, let answer = scanned { return answer }
        for line in text.split(whereSeparator: \.isNewline) {
            let parts = line.split(separator: " ")
            if parts.count == 2, parts[0] == name { return Int64(parts[1]) }
        }
        return nil
    }

    /// The limits set on the command itself after its spawn: `nice` on its process group, and
    /// `memory` as `RLIMIT_DATA` where the cgroup cannot hold it. Failures, in words.
    static func applyToProcess(_ limits: JobLimits, pid: Int32, controllers: [String]?) -> [String] {
        var failures: [String] = []
        if let nice = limits.nice, setpriority(__priority_which_t(PRIO_PGRP.rawValue), id_t(pid), Int32(nice)) != 0 {
            failures.append("nice \(nice): \(String(cString: strerror(errno)))")
        }
        if let bytes = limits.memoryBytes, !(controllers?.contains("memory") ?? false) {
            if refreshd_limit_data(pid, UInt64(bytes)) != 0 {
                failures.append("memory (RLIMIT_DATA): \(String(cString: strerror(errno)))")
            }
        }
        return failures
    }
}

extension RunCgroups {
    /// Writes limit files of a run's cgroup; the failures, in words. A missing
    /// `memory.swap.max` is none: the kernel accounts no swap, so the memory limit holds alone.
    func write(_ files: [(file: String, value: String)], at path: String) -> [String] {
        files.compactMap { file, value in
            if Self.write(value, to: "\(path)/\(file)") || (file == "memory.swap.max" && errno == ENOENT) { return nil }
            return "\(file): \(String(cString: strerror(errno)))"
        }
    }
}
