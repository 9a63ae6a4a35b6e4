import Glibc
import RefreshdCore
import Synchronization

/// Kills what a run left behind: at the end of every command run (its leader has exited), and
/// at a restart for the runs refreshd died (kill -9, power cut) in the middle of.
///
/// A run's processes are found two ways, so that no instant of refreshd's death leaves one alive
/// (where the system allows one, the run's cgroup finds the rest: see `RunCgroups`):
/// - by environment: every command starts with `REFRESH_INSTANCE` (the state's random id) and
///   `REFRESH_RUN_ID` in its environment from its first instruction, and the run's record is
///   committed before the spawn. A process whose initial environment (/proc/PID/environ) holds
///   both belongs to the run, and so does every process of its session. This covers a death
///   between the spawn and the recording of the process group, and children that left the
///   session but kept the environment;
/// - by recorded session: each run leads its own session (setsid), whose id is the leader's pid,
///   recorded with the leader's start time. Processes of that session that started no earlier
///   than the leader get SIGKILL, even if they cleared their environment. If a different process
///   now holds the leader's pid (pid reuse), the record is stale and nothing is touched.
///
/// refreshd's own process, group and session are never touched, nor zombies (already dead: their
/// parent reaps them).
enum OrphanReaper {
    /// Kills the leftovers of `runs`, reading /proc once.
    /// Returns each run that had leftovers, with the pids sent SIGKILL.
    /// Members of `quietGroups` (groups already sent SIGKILL when their leader exited) are
    /// killed again but not counted: only what escaped the group is reported at a run's end.
    static func reap(_ runs: [RunRecord], instance: String, quietGroups: Set<Int32> = [],
                     procDirectory: String = "/proc") -> [(RunRecord, [Int32])] {
        var signalled: Set<Int32> = []
        return reap(runs, instance: instance, quietGroups: quietGroups,
                    in: allProcesses(procDirectory: procDirectory), signalled: &signalled, procDirectory: procDirectory)
    }

    /// `reap` over a listing of /proc already read (`allProcesses`), which the run's-end sweep
    /// shares with the orphan rule (one pass over /proc for both); `signalled` gets every pid
    /// sent SIGKILL, counted or not.
    static func reap(_ runs: [RunRecord], instance: String, quietGroups: Set<Int32>,
                     in listing: [(pid: Int32, stat: ProcessStat)], signalled: inout Set<Int32>,
                     procDirectory: String = "/proc") -> [(RunRecord, [Int32])] {
        guard !runs.isEmpty else { return [] }
        let byRunID = Dictionary(runs.map { ($0.runID, $0) }, uniquingKeysWith: { a, _ in a })
        let processes = listing.filter { !$0.stat.isZombie }
        let me = getpid(), myGroup = getpgrp(), mySession = getsid(0)
        // The commands refreshd spawned and has not waited for are runs in flight, no leftovers
        // (their environments need not be read).
        let commands = ownChildren.withLock { $0 }
        func isMine(_ pid: Int32, _ s: ProcessStat) -> Bool {
            pid == me || s.processGroup == myGroup || s.session == mySession || pid <= 1
                || (s.parent == me && commands.contains(pid))
        }

        // Sessions that belong to a run, with the earliest start time a member may have.
        var sessions: [Int32: (run: Int64, minimumStart: UInt64?)] = [:]
        var marked: [Int32: Int64] = [:]  // pid -> run, found by environment
        for run in runs {
            guard let group = run.processGroup, group > 1 else { continue }
            if let leader = processes.first(where: { $0.pid == group }),
               let ticks = run.processStartTicks, leader.stat.startTicks != ticks { continue }
            sessions[group] = (run.runID, run.processStartTicks)
        }
        if !instance.isEmpty {
            let instanceEntry = Array("REFRESH_INSTANCE=\(instance)".utf8)
            // A run's process starts no earlier than its leader: when every leader's start is
            // known (always at a run's end), older processes' environments need not be read.
            let starts = runs.compactMap(\.processStartTicks)
            let earliest = starts.count == runs.count ? starts.min() : nil
            for (pid, s) in processes where !isMine(pid, s) {
                if let earliest, s.startTicks < earliest { continue }
                guard let environment = environment(pid: pid, procDirectory: procDirectory),
                      environment.contains(instanceEntry),
                      let runID = runID(in: environment), let run = byRunID[runID] else { continue }
                marked[pid] = run.runID
                if sessions[s.session] == nil { sessions[s.session] = (run.runID, nil) }
            }
        }
        guard !sessions.isEmpty || !marked.isEmpty else { return [] }

        var killed: [Int64: [Int32]] = [:]
        for (pid, s) in processes where !isMine(pid, s) {
            var owner = marked[pid]
            if owner == nil, let session = sessions[s.session] {
                if let minimum = session.minimumStart, s.startTicks < minimum { continue }
                owner = session.run
            }
            guard let owner else { continue }
            guard Glibc.kill(pid, SIGKILL) == 0 else { continue }
            signalled.insert(pid)
            if !quietGroups.contains(s.processGroup) { killed[owner, default: []].append(pid) }
        }
        return killed.keys.sorted().compactMap { id in byRunID[id].map { ($0, killed[id]!.sorted()) } }
    }

    /// Kills notifier commands of `instance` (found by their initial environment:
    /// `REFRESH_INSTANCE` and `REFRESH_NOTIFIER`, the notification's id when `notification` is
    /// given), with every process of their sessions that started no earlier than them: at a
    /// start, what a dead refreshd left running; at a notifier's exit and at the stop, what it
    /// started in sessions of their own (which would also hold its output pipe open). Returns
    /// the pids sent SIGKILL.
    @discardableResult
    static func reapNotifiers(instance: String, notification: String? = nil, procDirectory: String = "/proc") -> [Int32] {
        guard !instance.isEmpty else { return [] }
        let processes = allProcesses(procDirectory: procDirectory).filter { !$0.stat.isZombie }
        let me = getpid(), myGroup = getpgrp(), mySession = getsid(0)
        func isMine(_ pid: Int32, _ s: ProcessStat) -> Bool {
            pid == me || s.processGroup == myGroup || s.session == mySession || pid <= 1
        }
        let instanceEntry = Array("REFRESH_INSTANCE=\(instance)".utf8)
        let notifierPrefix = Array("REFRESH_NOTIFIER=\(notification ?? "")".utf8)
        var marked: Set<Int32> = []
        var sessions: [Int32: UInt64] = [:]  // session -> the earliest start of a notifier in it
        for (pid, s) in processes where !isMine(pid, s) {
            guard let environment = environment(pid: pid, procDirectory: procDirectory),
                  environment.contains(instanceEntry),
                  environment.contains(where: { notification == nil ? $0.starts(with: notifierPrefix) : $0 == notifierPrefix })
            else { continue }
            marked.insert(pid)
            sessions[s.session] = min(sessions[s.session] ?? .max, s.startTicks)
        }
        var killed: [Int32] = []
        for (pid, s) in processes where !isMine(pid, s) {
            let inSession = sessions[s.session].map { s.startTicks >= $0 } ?? false
            guard marked.contains(pid) || inSession else { continue }
            if Glibc.kill(pid, SIGKILL) == 0 { killed.append(pid) }
        }
        return killed.sorted()
    }

    /// The NUL-separated initial environment of a process (nil if it cannot be read).
    static func environment(pid: Int32, procDirectory: String) -> [[UInt8]]? {
        let fd = open("\(procDirectory)/\(pid)/environ", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while bytes.count < 4 * 1024 * 1024 {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            bytes.append(contentsOf: buffer[0..<n])
        }
        return bytes.split(separator: 0, omittingEmptySubsequences: true).map(Array.init)
    }

    /// The run number in a `REFRESH_RUN_ID=` entry.
    static func runID(in environment: [[UInt8]]) -> Int64? {
        let prefix = Array("REFRESH_RUN_ID=".utf8)
        guard let entry = environment.first(where: { $0.starts(with: prefix) }) else { return nil }
        return Int64(String(decoding: entry.dropFirst(prefix.count), as: UTF8.self))
    }

    /// Children refreshd spawned itself and waits for by pid (the commands, `CommandProcess`). Any
    /// other part of refreshd that spawns a detached child must register it here: as a
    /// subreaper refreshd reaps every other dead child. (A child left in refreshd's own session
    /// is never taken for an orphan: a run's processes are all in sessions of their own.)
    static let ownChildren = Mutex<Set<Int32>>([])

    /// Whether a child of refreshd is an orphan it inherited as a subreaper, not one it spawned
    /// (`ownChildren` holds every command spawned, from its spawn until it was waited for).
    private static func isOrphan(_ pid: Int32, _ s: ProcessStat, session: Int32) -> Bool {
        s.session != session && !ownChildren.withLock { $0.contains(pid) }
    }

    /// refreshd's living children that it did not spawn (`ownChildren`): as a subreaper, the
    /// orphans of runs. Each with the run its initial environment names, if it
    /// names one of this instance (nil: it cleared its environment).
    static func orphanChildren(instance: String, in listing: [(pid: Int32, stat: ProcessStat)],
                               procDirectory: String = "/proc") -> [(pid: Int32, runID: Int64?)] {
        let me = getpid(), session = getsid(0)
        let instanceEntry = Array("REFRESH_INSTANCE=\(instance)".utf8)
        var found: [(pid: Int32, runID: Int64?)] = []
        for (pid, s) in listing {
            guard s.parent == me, !s.isZombie, isOrphan(pid, s, session: session) else { continue }
            let environment = environment(pid: pid, procDirectory: procDirectory) ?? []
            found.append((pid, environment.contains(instanceEntry) ? runID(in: environment) : nil))
        }
        return found
    }

    /// Reaps the zombies among refreshd's children that are not `ownChildren` (the commands it
    /// spawned and waits for by pid). As a child subreaper refreshd inherits every orphan of its
    /// runs, and must wait for them once they die, or they pile up as zombies. Never
    /// `waitpid(-1)`: that could take a command's exit from its `CommandProcess`, whose exit callback would
    /// then never come. Returns the pids reaped.
    @discardableResult
    static func reapOrphanZombies(procDirectory: String = "/proc") -> [Int32] {
        let me = getpid(), session = getsid(0)
        var reaped: [Int32] = []
        for (pid, s) in allProcesses(procDirectory: procDirectory) {
            guard s.parent == me, s.isZombie, isOrphan(pid, s, session: session) else { continue }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid { reaped.append(pid) }
        }
        return reaped
    }
}
