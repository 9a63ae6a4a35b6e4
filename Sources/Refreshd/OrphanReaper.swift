import Glibc
@_spi(Benchmarks) import RefreshdCore
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
        guard !runs.isEmpty else { return [] }
        let byRunID = Dictionary(runs.map { ($0.runID, $0) }, uniquingKeysWith: { a, _ in a })
        let processes = allProcesses(procDirectory: procDirectory).filter { !$0.stat.isZombie }
        let me = getpid(), myGroup = getpgrp(), mySession = getsid(0)
        func isMine(_ pid: Int32, _ s: ProcessStat) -> Bool {
            pid == me || s.processGroup == myGroup || s.session == mySession || pid <= 1
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
            if Glibc.kill(pid, SIGKILL) == 0, !quietGroups.contains(s.processGroup) { killed[owner, default: []].append(pid) }
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

    struct ProcessStat {
        var state: Character
        var parent: Int32
        var processGroup: Int32
        var session: Int32
        var startTicks: UInt64
        var isZombie: Bool { state == "Z" || state == "X" }
    }

    /// Fields of /proc/PID/stat after the parenthesised command name (which may hold spaces).
    static func stat(pid: Int32, procDirectory: String = "/proc") -> ProcessStat? {
        let fd = open("\(procDirectory)/\(pid)/stat", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1024)
        return parseStat(fd: fd, buffer: &buffer)
    }

    /// Every process in /proc with its stat. This runs at every run's end, so it reads each
    /// stat with one `openat` and `read` into one buffer and parses bytes, not strings.
    static func allProcesses(procDirectory: String = "/proc") -> [(pid: Int32, stat: ProcessStat)] {
        guard let dir = opendir(procDirectory) else { return [] }
        defer { closedir(dir) }
        let dirFD = dirfd(dir)
        var buffer = [UInt8](repeating: 0, count: 1024)
        var path = [CChar](repeating: 0, count: 32)
        var found: [(pid: Int32, stat: ProcessStat)] = []
        while let entry = readdir(dir) {
            var pid: Int32 = 0
            var length = 0
            let isNumber = withUnsafeBytes(of: entry.pointee.d_name) { name -> Bool in
                for byte in name {
                    if byte == 0 { break }
                    guard byte >= 48, byte <= 57, length < 10 else { return false }
                    pid = pid &* 10 &+ Int32(byte - 48)
                    path[length] = CChar(bitPattern: byte)
                    length += 1
                }
                return length > 0
            }
            guard isNumber, pid > 0 else { continue }
            for (i, byte) in "/stat".utf8.enumerated() { path[length + i] = CChar(bitPattern: byte) }
            path[length + 5] = 0
            let fd = openat(dirFD, path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { continue }
            if let s = parseStat(fd: fd, buffer: &buffer) { found.append((pid, s)) }
            close(fd)
        }
        return found
    }

    /// Parses the fields refreshd needs from a stat file: after the last `)`, field 3 (state),
    /// 4 (ppid), 5 (pgrp), 6 (session) and 22 (start time in clock ticks since boot).
    private static func parseStat(fd: Int32, buffer: inout [UInt8]) -> ProcessStat? {
        buffer.withUnsafeMutableBytes { raw -> ProcessStat? in
            let count = read(fd, raw.baseAddress, raw.count)
            guard count > 0 else { return nil }
            let bytes = UnsafeRawBufferPointer(rebasing: raw[0..<count])
            guard let close = bytes.lastIndex(of: UInt8(ascii: ")")) else { return nil }
            var field = 2  // the field that starts after the next space
            var state: UInt8 = 0
            var ppid: Int64?, pgrp: Int64?, sid: Int64?, start: Int64?
            var value: Int64 = 0, negative = false, inField = false
            var i = close + 1
            while i <= bytes.count {
                let byte = i < bytes.count ? bytes[i] : UInt8(ascii: " ")
                if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") {
                    if inField {
                        let number = negative ? -value : value
                        switch field {
                        case 3: state = UInt8(truncatingIfNeeded: value)
                        case 4: ppid = number
                        case 5: pgrp = number
                        case 6: sid = number
                        case 22: start = number
                        default: break
                        }
                        if field == 22 { break }
                    }
                    inField = false
                } else {
                    if !inField { field += 1; inField = true; value = 0; negative = false }
                    if field == 3 {
                        value = Int64(byte)
                    } else if byte == UInt8(ascii: "-") {
                        negative = true
                    } else if byte >= 48, byte <= 57 {
                        value = value &* 10 &+ Int64(byte - 48)
                    }
                }
                i += 1
            }
            guard state != 0, let ppid, let pgrp, let sid, let start else { return nil }
            return ProcessStat(state: Character(Unicode.Scalar(state)), parent: Int32(truncatingIfNeeded: ppid),
                               processGroup: Int32(truncatingIfNeeded: pgrp), session: Int32(truncatingIfNeeded: sid),
                               startTicks: UInt64(max(0, start)))
        }
    }

    /// Children refreshd spawned itself and waits for by pid (the commands, through libuv). Any
    /// other part of refreshd that spawns a detached child must register it here: as a
    /// subreaper refreshd reaps every other dead child. (A child left in refreshd's own session
    /// is never taken for an orphan: a run's processes are all in sessions of their own.)
    static let ownChildren = Mutex<Set<Int32>>([])

    /// Whether a child of refreshd is an orphan it inherited as a subreaper, not one it spawned
    /// (`ownChildren` holds every command libuv spawned, from its spawn until libuv waited for it).
    private static func isOrphan(_ pid: Int32, _ s: ProcessStat, session: Int32) -> Bool {
        s.session != session && !ownChildren.withLock { $0.contains(pid) }
    }

    /// refreshd's living children that libuv did not spawn (`ownChildren`): as a subreaper, the
    /// orphans of runs. Each with the run its initial environment names, if it
    /// names one of this instance (nil: it cleared its environment).
    static func orphanChildren(instance: String, procDirectory: String = "/proc")
        -> [(pid: Int32, runID: Int64?)] {
        let me = getpid(), session = getsid(0)
        let instanceEntry = Array("REFRESH_INSTANCE=\(instance)".utf8)
        var found: [(pid: Int32, runID: Int64?)] = []
        for (pid, s) in allProcesses(procDirectory: procDirectory) {
            guard s.parent == me, !s.isZombie, isOrphan(pid, s, session: session) else { continue }
            let environment = environment(pid: pid, procDirectory: procDirectory) ?? []
            found.append((pid, environment.contains(instanceEntry) ? runID(in: environment) : nil))
        }
        return found
    }

    /// Reaps the zombies among refreshd's children that are not `ownChildren` (the commands libuv
    /// spawned and waits for itself). As a child subreaper refreshd inherits every orphan of its
    /// runs, and must wait for them once they die, or they pile up as zombies. Never
    /// `waitpid(-1)`: that could take a command's exit from libuv, whose exit callback would
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
