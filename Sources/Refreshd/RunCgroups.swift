import CLibUV
import Glibc

/// One cgroup v2 per command run, under refreshd's own cgroup, so that every process a run
/// starts can be found and killed however it detached (new session, cleared environment,
/// double fork): a process cannot leave its cgroup without write access to another one.
///
/// Used only where the system allows it: a cgroup2 hierarchy is mounted, refreshd's cgroup in it
/// is writable, and it is not a systemd unit's cgroup that was not delegated (`Delegate=yes`;
/// systemd marks delegated ones with a `trusted.delegate` or `user.delegate` attribute), since
/// systemd owns the inside of the others. What is used is decided by `plan`, a pure function of
/// what the system shows (the tests give it planted texts and facts).
///
/// In a delegated subtree (the unit `Scripts/install-service` writes), refreshd moves its own
/// process into the leaf `supervisor/` and enables the controllers runs can use (`cpu`, `io`,
/// `memory`, `pids`, those the subtree offers) in the subtree's `cgroup.subtree_control`: cgroup
/// v2's "no internal processes" rule forbids a cgroup with controllers enabled for its children
/// to hold processes itself, so refreshd and its runs are siblings. Elsewhere (a writable cgroup
/// that is not delegated, e.g. root in a container) the run cgroups only group: no controller.
///
/// A run's cgroup is `<subtree>/refreshd-<instance>-run-<run id>`. The command is born in it
/// (`refreshd_spawn`: clone3 with `CLONE_INTO_CGROUP`, or where that is refused the child
/// writing itself into `cgroup.procs` before its exec); no thread of refreshd's ever enters it.
/// Moving the command in after the spawn would race its first forks: the spawn returns after
/// the exec, and on a loaded machine a shell has started its background children by then. Where
/// the child could not enter it, the command is moved after the spawn and the sweep catches
/// early forks.
final class RunCgroups {
    /// The runs' parent: refreshd's own cgroup directory, or the delegated subtree it left for
    /// its `supervisor/` leaf.
    let parent: String
    /// Where refreshd's process lives between spawns (`parent`, or `parent/supervisor`).
    let home: String
    /// The controllers enabled for the runs (empty where the cgroups only group).
    let controllers: [String]
    /// Why this layout, in words (the start log line and `status` show it).
    let why: String
    let prefix: String

    init(plan: Plan, instance: String) {
        parent = plan.parent
        home = plan.home
        controllers = plan.enable
        why = plan.why
        prefix = "refreshd-\(instance)-run-"
    }

    /// The controllers refreshd enables for its runs where the subtree offers them.
    static let wantedControllers = ["cpu", "io", "memory", "pids"]

    /// What refreshd reads about its own cgroup directory before deciding.
    struct Facts: Equatable {
        /// `cgroup.procs` is writable and a cgroup can be made in it.
        var writable: Bool
        /// systemd marked it delegated (`trusted.delegate` or `user.delegate`).
        var delegated: Bool
        /// The hierarchy's real root (no `cgroup.type`): exempt from "no internal processes".
        var isRoot: Bool
        /// Its `cgroup.controllers`.
        var controllers: [String]
    }

    /// The layout decided: where runs go, where refreshd lives, which controllers to enable.
    struct Plan: Equatable {
        var parent: String
        var home: String
        var enable: [String]
        var why: String
    }

    /// The decision, from the texts of /proc/self/cgroup and /proc/self/mountinfo, whether
    /// refreshd owns its process (a daemon, not a library in someone's process), and the facts
    /// `inspect` reads about the directory found. No I/O of its own.
    static func plan(selfCgroup: String?, mountinfo: String?, ownsProcess: Bool,
                     inspect: (String) -> Facts) -> Result<Plan, Unusable> {
        guard let own = selfCgroup.flatMap(ownCgroup(text:)) else {
            return .failure(Unusable(reason: "refreshd is in no cgroup v2 hierarchy"))
        }
        guard let mount = mountinfo.flatMap(cgroup2Mount(text:)) else {
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
        let directory = mount.point + (relative == "/" ? "" : relative)
        let facts = inspect(directory)
        let last = own.split(separator: "/").last.map(String.init) ?? ""
        if last.hasSuffix(".service") || last.hasSuffix(".scope"), !facts.delegated {
            return .failure(Unusable(reason: "not delegated: refreshd's cgroup \(own) belongs to systemd (the unit has no Delegate=yes)"))
        }
        guard facts.writable else {
            return .failure(Unusable(reason: "not delegated: \(directory) is not writable"))
        }
        guard facts.delegated, !facts.isRoot else {
            return .success(Plan(parent: directory, home: directory, enable: [],
                                 why: "\(directory) is writable but not a delegated subtree: the run cgroups only group, no controller"))
        }
        guard ownsProcess else {
            return .success(Plan(parent: directory, home: directory, enable: [],
                                 why: "delegated \(directory), but refreshd shares its process (embedded): it stays in its cgroup, no controller"))
        }
        let enable = wantedControllers.filter(facts.controllers.contains)
        return .success(Plan(parent: directory, home: directory + "/supervisor", enable: enable,
                             why: "delegated \(directory): refreshd in supervisor/, controllers \(enable.isEmpty ? "none offered" : enable.joined(separator: " "))"))
    }

    /// The run cgroups for this state's instance, or why they cannot be used: reads the system,
    /// decides (`plan`), and applies the plan (moves refreshd into its leaf, enables the
    /// controllers). What cannot be applied falls back to cgroups that only group, and says why.
    static func detect(instance: String, ownsProcess: Bool = false, procDirectory: String = "/proc") -> Result<RunCgroups, Unusable> {
        let decided = plan(selfCgroup: ConditionsProbe.readFile("\(procDirectory)/self/cgroup"),
                           mountinfo: ConditionsProbe.readFile("\(procDirectory)/self/mountinfo"),
                           ownsProcess: ownsProcess, inspect: { inspect($0, instance: instance) })
        guard case var .success(plan) = decided else { return decided.map { RunCgroups(plan: $0, instance: instance) } }
        if plan.home != plan.parent {
            guard mkdir(plan.home, 0o755) == 0 || errno == EEXIST, write("\(getpid())", to: plan.home + "/cgroup.procs") else {
                let error = String(cString: strerror(errno))
                plan = Plan(parent: plan.parent, home: plan.parent, enable: [],
                            why: "delegated \(plan.parent), but refreshd cannot move into \(plan.home) (\(error)): the run cgroups only group, no controller")
                return .success(RunCgroups(plan: plan, instance: instance))
            }
        }
        if !plan.enable.isEmpty,
           !write(plan.enable.map { "+" + $0 }.joined(separator: " "), to: plan.parent + "/cgroup.subtree_control") {
            let error = String(cString: strerror(errno))
            plan.why = "delegated \(plan.parent): refreshd in supervisor/, but no controller could be enabled (\(error): another process shares the subtree's top?)"
            plan.enable = []
        }
        return .success(RunCgroups(plan: plan, instance: instance))
    }

    /// Reads the facts `plan` needs about refreshd's cgroup directory (a probe cgroup is made
    /// and removed to check that cgroups can be made there).
    static func inspect(_ directory: String, instance: String) -> Facts {
        var writable = access(directory + "/cgroup.procs", W_OK) == 0
        if writable {
            let probe = "\(directory)/refreshd-\(instance)-probe"
            writable = mkdir(probe, 0o755) == 0 || errno == EEXIST
            _ = rmdir(probe)
        }
        let controllers = ConditionsProbe.readFile(directory + "/cgroup.controllers")?
            .split(whereSeparator: \.isWhitespace).map(String.init) ?? []
        return Facts(writable: writable, delegated: isDelegated(directory),
                     isRoot: access(directory + "/cgroup.type", F_OK) != 0, controllers: controllers)
    }

    struct Unusable: Error {
        var reason: String
    }

    func path(of runID: Int64) -> String { "\(parent)/\(prefix)\(runID)" }

    /// Creates the run's cgroup (an existing one, left by a dead refreshd, is reused after its
    /// processes are killed). Nil with errno's text when it cannot be made. Named for the run it
    /// is made for; a reused one names its run in `RunCgroup.runAttribute` (`RunCgroupPool`).
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

    /// Kills every process in the cgroup (`cgroup.kill`, or SIGKILL to each member where the
    /// kernel predates it) and returns the pids that were in it.
    /// `members`: `cgroup.procs` as just read by the caller (not read again).
    @discardableResult
    func kill(_ path: String, members read: [Int32]? = nil) -> [Int32] {
        let members = read ?? Self.members(path)
        guard !members.isEmpty else { return [] }
        if !write("1", to: "\(path)/cgroup.kill") {
            // Before Linux 5.14: kill the members; repeat while forks race the kill.
            var pass = members
            for _ in 0..<16 where !pass.isEmpty {
                for pid in pass { _ = Glibc.kill(pid, SIGKILL) }
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

    private func write(_ text: String, to file: String) -> Bool { Self.write(text, to: file) }

    static func write(_ text: String, to file: String) -> Bool {
        let fd = open(file, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) } == bytes.count
    }

    /// refreshd's path in the cgroup v2 hierarchy (the `0::` line of /proc/self/cgroup).
    static func ownCgroup(procDirectory: String) -> String? {
        ConditionsProbe.readFile("\(procDirectory)/self/cgroup").flatMap(ownCgroup(text:))
    }

    static func ownCgroup(text: String) -> String? {
        for line in text.split(whereSeparator: \.isNewline) where line.hasPrefix("0::") {
            let path = String(line.dropFirst(3))
            return path.hasPrefix("/") && !path.hasSuffix(" (deleted)") ? path : nil
        }
        return nil
    }

    /// Where the cgroup2 file system is mounted, and which of its cgroups is the mount's root.
    static func cgroup2Mount(procDirectory: String) -> (point: String, root: String)? {
        ConditionsProbe.readFile("\(procDirectory)/self/mountinfo").flatMap(cgroup2Mount(text:))
    }

    static func cgroup2Mount(text: String) -> (point: String, root: String)? {
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
