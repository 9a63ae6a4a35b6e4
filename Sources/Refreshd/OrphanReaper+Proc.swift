import Glibc

/// Reading /proc for the sweep (issue 35): a process's stat fields, every process or those of
/// a window of pids, and the kernel's fork counters. Moved out of OrphanReaper.swift, which
/// keeps the rules of what a sweep kills and reaps.
extension OrphanReaper {
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

    /// CLOCK_BOOTTIME in clock ticks, the unit and clock of /proc/PID/stat's start time (the
    /// kernel's `nsec_to_clock_t` of `start_boottime`, set at the fork); nil where a tick is no
    /// whole number of nanoseconds (then only /proc tells).
    static func bootTicks() -> UInt64? {
        guard ticksPerSecond > 0, 1_000_000_000 % ticksPerSecond == 0 else { return nil }
        var now = timespec()
        guard clock_gettime(CLOCK_BOOTTIME, &now) == 0 else { return nil }
        return (UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)) / UInt64(1_000_000_000 / ticksPerSecond)
    }

    static let ticksPerSecond = Int(sysconf(Int32(_SC_CLK_TCK)))

    /// A child's start time (/proc/PID/stat field 22), given the tick read before its fork and
    /// after its spawn returned: when both are the same tick the child started in it, with no
    /// read of /proc (which, right after a `CLONE_VFORK` spawn, waits for the child's exec to
    /// let go of its locks: a sleep and two context switches a run); else read from /proc.
    static func startTicks(pid: Int32, before: UInt64?, after: UInt64?) -> UInt64? {
        if let before, before == after { return before }
        return stat(pid: pid)?.startTicks
    }

    /// Every process in /proc with its stat. This runs at every run's end, so it reads each
    /// stat with one `openat` and `read` into one buffer and parses bytes, not strings.
    static func allProcesses(procDirectory: String = "/proc") -> [(pid: Int32, stat: ProcessStat)] {
        processes(procDirectory: procDirectory) { _ in { _ in true } }
    }

    /// The processes of a sweep window (`SweepWindow`), with their stat: a window of at most
    /// `probedPIDs` pids is read pid by pid (no listing of /proc: a pid not in use is one failed
    /// `open`), a larger one through the listing.
    static func processes(in window: SweepWindow, procDirectory: String = "/proc") -> [(pid: Int32, stat: ProcessStat)] {
        guard let pids = window.pids(atMost: probedPIDs, pidMax: pidMax) else {
            return processes(procDirectory: procDirectory) { _ in window.contains }
        }
        var buffer = [UInt8](repeating: 0, count: 1024)
        var found: [(pid: Int32, stat: ProcessStat)] = []
        for pid in pids {
            let fd = open("\(procDirectory)/\(pid)/stat", O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { continue }
            if let s = parseStat(fd: fd, buffer: &buffer) { found.append((pid, s)) }
            close(fd)
        }
        return found
    }

    /// Above this many pids, a window is read through the listing of /proc.
    static let probedPIDs = 256

    /// The processes in /proc that `choose` keeps, with their stat. `choose` is called once
    /// after the directory was listed (a new pid allocated since would be missed by a pass
    /// anyway) and returns which pids to read.
    static func processes(procDirectory: String = "/proc",
                          choose: ([Int32]) -> (Int32) -> Bool) -> [(pid: Int32, stat: ProcessStat)] {
        guard let dir = opendir(procDirectory) else { return [] }
        defer { closedir(dir) }
        var pids: [Int32] = []
        while let entry = readdir(dir) {
            var pid: Int32 = 0
            var length = 0
            let isNumber = withUnsafeBytes(of: entry.pointee.d_name) { name -> Bool in
                for byte in name {
                    if byte == 0 { break }
                    guard byte >= 48, byte <= 57, length < 10 else { return false }
                    pid = pid &* 10 &+ Int32(byte - 48)
                    length += 1
                }
                return length > 0
            }
            if isNumber, pid > 0 { pids.append(pid) }
        }
        let wanted = choose(pids)
        let dirFD = dirfd(dir)
        var buffer = [UInt8](repeating: 0, count: 1024)
        var found: [(pid: Int32, stat: ProcessStat)] = []
        for pid in pids where wanted(pid) {
            let fd = openat(dirFD, "\(pid)/stat", O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { continue }
            if let s = parseStat(fd: fd, buffer: &buffer) { found.append((pid, s)) }
            close(fd)
        }
        return found
    }

    /// The kernel's counters a windowed sweep needs (`SweepWindow`): the last pid allocated in
    /// refreshd's pid namespace, and the processes created since boot (`processes` in
    /// /proc/stat, every namespace's). Nil where either cannot be read.
    static func forkCounters(procDirectory: String = "/proc") -> (lastPID: Int32, forks: Int64)? {
        guard let last = number(after: [], in: "\(procDirectory)/sys/kernel/ns_last_pid"),
              let forks = number(after: Array("\nprocesses ".utf8), in: "\(procDirectory)/stat") else { return nil }
        return (Int32(truncatingIfNeeded: last), forks)
    }

    /// The decimal number right after `label` in a file (at its start for an empty label), read
    /// with `open` and `read` into one buffer (/proc/stat is read at every sweep).
    static func number(after label: [UInt8], in path: String) -> Int64? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 8192)
        while bytes.count < 1 << 20 {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
        }
        var index = 0
        if !label.isEmpty {
            guard let found = bytes.indices.first(where: { i in
                i + label.count <= bytes.count && bytes[i..<(i + label.count)].elementsEqual(label)
            }) else { return nil }
            index = found + label.count
        }
        var value: Int64 = 0, digits = 0
        while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57, digits < 18 {
            value = value * 10 + Int64(bytes[index] - 48)
            index += 1
            digits += 1
        }
        return digits > 0 ? value : nil
    }

    /// The kernel's `pid_max`, read once (32768 if it cannot be read: the smallest default).
    static let pidMax: Int32 = ConditionsProbe.readFile("/proc/sys/kernel/pid_max").flatMap(firstNumber) ?? 32768

    private static func firstNumber(_ text: String) -> Int32? {
        text.split(whereSeparator: \.isWhitespace).first.flatMap { Int32($0) }
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
}

/// Which processes a run's-end sweep reads (issue 35): not all of /proc, only the pids
/// allocated since the oldest command leader still to account for (the runs ending, the runs in
/// flight). Everything of a run starts after its leader, and Linux hands out pids in increasing
/// order, wrapping at `pid_max` (a new pid is the next free one after the last allocated): so
/// a run's processes all have pids in the cyclic range from its leader's pid to the last pid
/// allocated, unless the allocator came round to the leader's pid again since, which takes
/// `pid_max` new processes. The fork counter (`processes` in /proc/stat, read at a pass before
/// each leader was spawned) says it has not: with fewer forks than `pid_max - margin` since, the
/// window holds every process of those runs. Otherwise (or with a counter unknown) the sweep
/// reads every process, as it does after any pass that found something (`fullNext`).
struct SweepWindow: Equatable, Sendable {
    /// The window's first and last pid, cyclically (`first > last` when it wraps).
    var first: Int32
    var last: Int32

    /// Pids below 300 are not handed out again after a wrap; the rest of the margin covers
    /// processes that were created but are already gone.
    static let margin: Int64 = 1024

    func contains(_ pid: Int32) -> Bool {
        first <= last ? pid >= first && pid <= last : pid >= first || pid <= last
    }

    /// The window's pids in order, or nil if it holds more than `limit`.
    func pids(atMost limit: Int, pidMax: Int32) -> [Int32]? {
        let count = (Int(last) - Int(first) + Int(pidMax)) % Int(pidMax) + 1
        guard count <= limit else { return nil }
        return (0..<count).map { Int32((Int(first) + $0) % Int(pidMax)) }
    }

    /// The window from the oldest of `leaders` (the one allocated longest before `last`) to
    /// `last`; nil (read everything) when there is no leader, or when `forksSince` (forks since
    /// a reading taken before the oldest leader was spawned; nil if unknown) could have wrapped
    /// the pids round.
    static func since(leaders: [Int32], last: Int32, pidMax: Int32, forksSince: Int64?) -> SweepWindow? {
        guard let forksSince, forksSince >= 0, forksSince < Int64(pidMax) - margin,
              pidMax > 0, last > 0, last < pidMax else { return nil }
        let valid = leaders.filter { $0 > 0 && $0 < pidMax }
        guard valid.count == leaders.count, !valid.isEmpty else { return nil }
        func age(_ pid: Int32) -> Int64 { (Int64(last) - Int64(pid) + Int64(pidMax)) % Int64(pidMax) }
        let oldest = valid.max { age($0) < age($1) }!
        return SweepWindow(first: oldest, last: last)
    }
}
