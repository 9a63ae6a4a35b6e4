import Glibc
import RefreshdCore

/// Kills what a run left behind when refreshd died (kill -9, power cut) in the middle of it.
///
/// Every command run leads its own session (setsid), whose id is the leader's pid; refreshd
/// records that pid and the leader's start time. At the next start, processes whose session is
/// that id and that started no earlier than the leader belong to the run and get SIGKILL. If a
/// different process now holds the leader's pid (pid reuse), the record is stale and nothing is
/// touched.
enum OrphanReaper {
    /// Kills the leftovers of every run that recorded a process group, reading /proc once.
    /// Returns each run that had leftovers, with the pids sent SIGKILL.
    static func reap(_ runs: [RunRecord], procDirectory: String = "/proc") -> [(RunRecord, [Int32])] {
        // A run's session is still its own unless a different process now holds the leader's pid.
        var bySession: [Int32: RunRecord] = [:]
        for run in runs {
            guard let group = run.processGroup, group > 1 else { continue }
            if let leader = stat(pid: group, procDirectory: procDirectory),
               let ticks = run.processStartTicks, leader.startTicks != ticks { continue }
            bySession[group] = run
        }
        guard !bySession.isEmpty else { return [] }
        var killed: [Int32: [Int32]] = [:]
        for name in ConditionsProbe.list(procDirectory) {
            guard let pid = Int32(name), let s = stat(pid: pid, procDirectory: procDirectory),
                  let run = bySession[s.session] else { continue }
            if let ticks = run.processStartTicks, s.startTicks < ticks { continue }
            if Glibc.kill(pid, SIGKILL) == 0 { killed[s.session, default: []].append(pid) }
        }
        return bySession.values.sorted { $0.runID < $1.runID }.compactMap { run in
            killed[run.processGroup!].map { (run, $0) }
        }
    }

    struct ProcessStat {
        var processGroup: Int32
        var session: Int32
        var startTicks: UInt64
    }

    /// Fields of /proc/PID/stat after the parenthesised command name (which may hold spaces).
    static func stat(pid: Int32, procDirectory: String = "/proc") -> ProcessStat? {
        guard let text = ConditionsProbe.readFile("\(procDirectory)/\(pid)/stat"),
              let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // fields[0] = state (3), [1] = ppid (4), [2] = pgrp (5), [3] = session (6), [19] = starttime (22)
        guard fields.count > 19, let pgrp = Int32(fields[2]), let sid = Int32(fields[3]),
              let start = UInt64(fields[19]) else { return nil }
        return ProcessStat(processGroup: pgrp, session: sid, startTicks: start)
    }
}
