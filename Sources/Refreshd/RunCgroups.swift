import CLibUV
import Glibc

/// One cgroup v2 per command run, under refreshd's own cgroup, so that every process a run
/// starts can be found and killed however it detached (new session, cleared environment,
/// double fork): a process cannot leave its cgroup without write access to another one.
///
/// Used only where the system allows it: a cgroup2 hierarchy is mounted, refreshd's cgroup in it
/// is writable, and it is not a systemd unit's cgroup that was not delegated (`Delegate=yes`;
/// systemd marks delegated ones with a `trusted.delegate` or `user.delegate` attribute), since
/// systemd owns the inside of the others. No controller is enabled: the cgroups only group.
///
/// A run's cgroup is `<refreshd's cgroup>/refreshd-<instance>-run-<run id>`. The command is born
/// in it: refreshd moves itself into the run's cgroup for the `uv_spawn` and back out right after
/// (a process forks into its parent's cgroup). Moving the command in after the spawn would race
/// its first forks: `uv_spawn` returns after the exec, and on a loaded machine a shell has
/// started its background children by then. Where refreshd cannot move itself, or shares its
/// process (a library in a process whose other threads fork: their children would be born in
/// the run's cgroup), the command is moved after the spawn and the sweep catches early forks.
final class RunCgroups {
    /// refreshd's own cgroup directory (the runs' parent).
    let parent: String
    let prefix: String

    private init(parent: String, instance: String) {
        self.parent = parent
        prefix = "refreshd-\(instance)-run-"
    }

    /// The run cgroups for this state's instance, or why they cannot be used.
    static func detect(instance: String, procDirectory: String = "/proc") -> Result<RunCgroups, Unusable> {
        guard let own = ownCgroup(procDirectory: procDirectory) else {
            return .failure(Unusable(reason: "refreshd is in no cgroup v2 hierarchy"))
        }
        guard let mount = cgroup2Mount(procDirectory: procDirectory) else {
            return .failure(Unusable(reason: "no cgroup2 file system is mounted"))
        }
        let relative: Substring
        if mount.root == "/" {
            relative = Substring(own)
        } else if own == mount.root || own.hasPrefix(mount.root + "/") {
            relative = own.dropFirst(mount.root.count)
        } else {
            return .failure(Unusable(reason: "refreshd's cgroup \(own) is outside the mounted cgroup2 tree"))
        }
        let parent = mount.point + (relative == "/" ? "" : relative)
        let last = own.split(separator: "/").last.map(String.init) ?? ""
        if last.hasSuffix(".service") || last.hasSuffix(".scope"), !isDelegated(parent) {
            return .failure(Unusable(reason: "refreshd's cgroup \(own) belongs to systemd and is not delegated to it (Delegate=yes)"))
        }
        guard access(parent + "/cgroup.procs", W_OK) == 0 else {
            return .failure(Unusable(reason: "\(parent)/cgroup.procs is not writable"))
        }
        let cgroups = RunCgroups(parent: parent, instance: instance)
        let probe = "\(parent)/refreshd-\(instance)-probe"
        guard mkdir(probe, 0o755) == 0 || errno == EEXIST else {
            return .failure(Unusable(reason: "cannot create a cgroup in \(parent): \(String(cString: strerror(errno)))"))
        }
        _ = rmdir(probe)
        return .success(cgroups)
    }

    struct Unusable: Error {
        var reason: String
    }

    func path(of runID: Int64) -> String { "\(parent)/\(prefix)\(runID)" }

    /// Creates the run's cgroup (an existing one, left by a dead refreshd, is reused after its
    /// processes are killed). Nil with errno's text when it cannot be made.
    func create(runID: Int64) -> Result<String, Unusable> {
        let path = path(of: runID)
        if mkdir(path, 0o755) != 0 {
            guard errno == EEXIST else {
                return .failure(Unusable(reason: "cannot create \(path): \(String(cString: strerror(errno)))"))
            }
            _ = kill(path)
        }
        return .success(path)
    }

    /// Moves a process into a cgroup. False with errno set when it could not be moved.
    func attach(pid: Int32, to path: String) -> Bool {
        write("\(pid)", to: "\(path)/cgroup.procs")
    }

    /// Moves refreshd (all its threads) into a run's cgroup, so the child it spawns now is born
    /// there. Always followed by `leave()`.
    func join(_ path: String) -> Bool { attach(pid: getpid(), to: path) }

    /// Moves refreshd back into its own cgroup. False with errno set when it could not.
    @discardableResult
    func leave() -> Bool { attach(pid: getpid(), to: parent) }

    /// Kills every process in the cgroup (`cgroup.kill`, or SIGKILL to each member where the
    /// kernel predates it) and returns the pids that were in it. Never refreshd itself: should
    /// it still be in the cgroup (it could not leave after a spawn), it tries to leave again and
    /// kills the others one by one.
    @discardableResult
    func kill(_ path: String) -> [Int32] {
        var members = Self.members(path)
        let me = getpid()
        if members.contains(me) {
            // Never counted as killed, whether or not it manages to leave.
            members.removeAll { $0 == me }
            if !leave() || Self.members(path).contains(me) {
                for pid in members { _ = Glibc.kill(pid, SIGKILL) }
                return members
            }
        }
        guard !members.isEmpty else { return [] }
        if !write("1", to: "\(path)/cgroup.kill") {
            // Before Linux 5.14: kill the members; repeat while forks race the kill.
            var pass = members
            for _ in 0..<16 where !pass.isEmpty {
                for pid in pass where pid != me { _ = Glibc.kill(pid, SIGKILL) }
                pass = Self.members(path)
            }
        }
        return members
    }

    /// Removes an emptied cgroup. False while killed processes have not finished exiting.
    func remove(_ path: String) -> Bool {
        rmdir(path) == 0 || errno == ENOENT
    }

    /// The run cgroups of this instance that exist now (a dead refreshd's, at a restart).
    func existing() -> [(runID: Int64, path: String)] {
        ConditionsProbe.list(parent).compactMap { name in
            guard name.hasPrefix(prefix), let runID = Int64(name.dropFirst(prefix.count)) else { return nil }
            return (runID, "\(parent)/\(name)")
        }
    }

    static func members(_ path: String) -> [Int32] {
        guard let text = ConditionsProbe.readFile("\(path)/cgroup.procs") else { return [] }
        return text.split(whereSeparator: \.isNewline).compactMap { Int32($0) }
    }

    private func write(_ text: String, to file: String) -> Bool {
        let fd = open(file, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) } == bytes.count
    }

    /// refreshd's path in the cgroup v2 hierarchy (the `0::` line of /proc/self/cgroup).
    static func ownCgroup(procDirectory: String) -> String? {
        guard let text = ConditionsProbe.readFile("\(procDirectory)/self/cgroup") else { return nil }
        for line in text.split(whereSeparator: \.isNewline) where line.hasPrefix("0::") {
            let path = String(line.dropFirst(3))
            return path.hasPrefix("/") && !path.hasSuffix(" (deleted)") ? path : nil
        }
        return nil
    }

    /// Where the cgroup2 file system is mounted, and which of its cgroups is the mount's root.
    static func cgroup2Mount(procDirectory: String) -> (point: String, root: String)? {
        guard let text = ConditionsProbe.readFile("\(procDirectory)/self/mountinfo") else { return nil }
        for line in text.split(whereSeparator: \.isNewline) {
            let fields = line.split(separator: " ")
            guard let dash = fields.firstIndex(of: "-"), dash + 1 < fields.count, dash >= 5,
                  fields[dash + 1] == "cgroup2" else { continue }
            return (unescape(fields[4]), unescape(fields[3]))
        }
        return nil
    }

    /// mountinfo writes space, tab, newline and backslash as octal escapes (`\040`).
    static func unescape(_ field: Substring) -> String {
        var bytes: [UInt8] = []
        var utf8 = Array(field.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "\\"), utf8.count >= 3,
               let value = UInt8(String(decoding: utf8.prefix(3), as: UTF8.self), radix: 8) {
                bytes.append(value)
                utf8 = utf8.dropFirst(3)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether systemd delegated this cgroup (it sets the attribute on delegated ones).
    static func isDelegated(_ path: String) -> Bool {
        for name in ["trusted.delegate", "user.delegate"] where getxattr(path, name, nil, 0) >= 0 {
            return true
        }
        return false
    }
}
