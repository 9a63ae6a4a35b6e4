import Foundation
import Testing
@testable import Refreshd

/// The parsing under the sweep and the run cgroups, on planted /proc-like trees: a command name
/// cannot forge fields, mountinfo escapes are undone, systemd units that were not delegated are
/// left alone.
@Suite struct ProcessTrackingTests {
    func tree(_ files: [String: String]) throws -> String {
        let root = TempDirectory.make()
        for (path, text) in files {
            let full = root + "/" + path
            try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            try text.write(toFile: full, atomically: true, encoding: .utf8)
        }
        return root
    }

    /// A command name with spaces and a `)` cannot shift the fields: they are read after the last `)`.
    @Test func statFieldsAfterTheLastParenthesis() throws {
        let root = try tree([
            "4242/stat": "4242 (evil) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99) Z 7 4242 4242 0 -1 4194304 98 0 0 0 0 0 0 0 20 0 1 0 277858 3133440 390\n",
            "77/stat": "77 (sh) S 1 77 77 0 -1 4194304 98 0 0 0 0 0 0 0 20 0 1 0 12 3133440 390\n",
            "self/stat": "not a process",
            "notes/stat": "ignored",
        ])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let evil = try #require(OrphanReaper.stat(pid: 4242, procDirectory: root))
        #expect(evil.state == "Z" && evil.isZombie)
        #expect(evil.parent == 7 && evil.processGroup == 4242 && evil.session == 4242)
        #expect(evil.startTicks == 277858)
        let all = OrphanReaper.allProcesses(procDirectory: root).sorted { $0.pid < $1.pid }
        #expect(all.map(\.pid) == [77, 4242])
        #expect(all.first?.stat.startTicks == 12)
        #expect(all.first?.stat.state == "S")
    }

    @Test func truncatedStatIsRefused() throws {
        let root = try tree(["5/stat": "5 (x) S 1 5 5"])
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(OrphanReaper.stat(pid: 5, procDirectory: root) == nil)
    }

    /// The cgroup2 mount is found among others, with its octal escapes undone.
    @Test func cgroup2MountAndOwnCgroup() throws {
        let root = try tree([
            "self/mountinfo": """
                25 30 0:23 / /sys/fs/cgroup rw,nosuid - tmpfs tmpfs rw,mode=755
                26 25 0:24 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu
                35 25 0:33 / /sys/fs/cgroup/uni\\040fied rw,relatime shared:9 - cgroup2 cgroup2 rw
                """,
            "self/cgroup": "4:memory:/x\n0::/system.slice/refreshd.service\n",
        ])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let mount = try #require(RunCgroups.cgroup2Mount(procDirectory: root))
        #expect(mount.point == "/sys/fs/cgroup/uni fied")
        #expect(mount.root == "/")
        #expect(RunCgroups.ownCgroup(procDirectory: root) == "/system.slice/refreshd.service")
    }

    /// A systemd service's cgroup without `Delegate=yes` is systemd's: no run cgroups there.
    @Test func undelegatedSystemdUnitIsLeftAlone() throws {
        let root = try tree([
            "self/mountinfo": "35 25 0:33 / /nonexistent-cgroup2 rw - cgroup2 cgroup2 rw\n",
            "self/cgroup": "0::/system.slice/refreshd.service\n",
        ])
        defer { try? FileManager.default.removeItem(atPath: root) }
        guard case let .failure(unusable) = RunCgroups.detect(instance: "t", procDirectory: root) else {
            Issue.record("run cgroups in a systemd unit that was not delegated")
            return
        }
        #expect(unusable.reason.contains("not delegated"))
        #expect(unusable.reason.contains("Delegate=yes"))
    }

    // The decision (issue 35), a pure function of /proc/self/cgroup, mountinfo, whether
    // refreshd owns its process, and the facts read about the directory found.

    static let unifiedMount = "24 18 0:22 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate\n"
    static let allControllers = ["cpuset", "cpu", "io", "memory", "hugetlb", "pids", "rdma", "misc"]

    func plan(_ selfCgroup: String?, mount mountinfo: String? = unifiedMount, ownsProcess: Bool = true,
              _ facts: RunCgroups.Facts, seen: UnsafeMutablePointer<String>? = nil) -> Result<RunCgroups.Plan, RunCgroups.Unusable> {
        RunCgroups.plan(selfCgroup: selfCgroup, mountinfo: mountinfo, ownsProcess: ownsProcess) { directory in
            seen?.pointee = directory
            return facts
        }
    }

    /// The unit install-service writes (Delegate=yes): refreshd moves into `supervisor/`, the
    /// runs are its siblings, and the controllers the subtree offers among cpu, io, memory and
    /// pids are enabled.
    @Test func delegatedServiceMovesIntoItsLeafAndEnablesControllers() throws {
        let facts = RunCgroups.Facts(writable: true, delegated: true, isRoot: false, controllers: Self.allControllers)
        let service = "/sys/fs/cgroup/system.slice/refreshd.service"
        #expect(try plan("0::/system.slice/refreshd.service\n", facts).get() == RunCgroups.Plan(
            parent: service, home: service + "/supervisor", enable: ["cpu", "io", "memory", "pids"],
            why: "delegated \(service): refreshd in supervisor/, controllers cpu io memory pids"))
        // Only what the subtree offers (a user manager delegates cpu, memory and pids).
        let user = RunCgroups.Facts(writable: true, delegated: true, isRoot: false, controllers: ["memory", "pids"])
        let unit = "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/refreshd.service"
        #expect(try plan("0::/user.slice/user-1000.slice/user@1000.service/app.slice/refreshd.service\n", user).get() == RunCgroups.Plan(
            parent: unit, home: unit + "/supervisor", enable: ["memory", "pids"],
            why: "delegated \(unit): refreshd in supervisor/, controllers memory pids"))
        let none = RunCgroups.Facts(writable: true, delegated: true, isRoot: false, controllers: [])
        #expect(try plan("0::/system.slice/refreshd.service\n", none).get().why == "delegated \(service): refreshd in supervisor/, controllers none offered")
    }

    /// Without Delegate=yes a unit's cgroup is systemd's, writable or not: the reason says so.
    @Test func undelegatedUnitIsRefusedWithItsReason() {
        let facts = RunCgroups.Facts(writable: true, delegated: false, isRoot: false, controllers: Self.allControllers)
        guard case let .failure(unusable) = plan("0::/system.slice/refreshd.service\n", facts) else {
            Issue.record("run cgroups in a systemd unit that was not delegated")
            return
        }
        #expect(unusable.reason == "not delegated: refreshd's cgroup /system.slice/refreshd.service belongs to systemd (the unit has no Delegate=yes)")
        let scope = plan("0::/user.slice/user-1000.slice/session-3.scope\n", facts)
        #expect((try? scope.get()) == nil)
    }

    /// Delegated to someone else (a system unit delegated to root while refreshd runs as a user):
    /// not writable, and the reason names the directory.
    @Test func notWritableIsRefusedNamingTheDirectory() {
        let facts = RunCgroups.Facts(writable: false, delegated: true, isRoot: false, controllers: Self.allControllers)
        guard case let .failure(unusable) = plan("0::/system.slice/refreshd.service\n", facts) else {
            Issue.record("run cgroups in a directory that is not writable")
            return
        }
        #expect(unusable.reason == "not delegated: /sys/fs/cgroup/system.slice/refreshd.service is not writable")
    }

    /// A writable cgroup that is not delegated (root in a container, the hierarchy's root): the
    /// run cgroups only group; refreshd stays where it is and enables nothing.
    @Test func writableButNotDelegatedOnlyGroups() throws {
        var seen = ""
        let facts = RunCgroups.Facts(writable: true, delegated: false, isRoot: true, controllers: ["hugetlb"])
        let hybrid = "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
        #expect(try plan("4:memory:/x\n0::/\n", mount: hybrid, facts, seen: &seen).get() == RunCgroups.Plan(
            parent: "/sys/fs/cgroup/unified", home: "/sys/fs/cgroup/unified", enable: [],
            why: "/sys/fs/cgroup/unified is writable but not a delegated subtree: the run cgroups only group, no controller"))
        #expect(seen == "/sys/fs/cgroup/unified")
        // A mount whose root is a cgroup (a container's view): the path is taken below it.
        let container = "30 20 0:26 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
        #expect(try plan("0::/docker/abc/jobs\n", mount: container, facts, seen: &seen).get().parent == "/sys/fs/cgroup/jobs")
        #expect(seen == "/sys/fs/cgroup/jobs")
        // The real root is never left for a leaf, even when marked delegated.
        let root = RunCgroups.Facts(writable: true, delegated: true, isRoot: true, controllers: Self.allControllers)
        #expect(try plan("0::/\n", root).get().home == "/sys/fs/cgroup")
    }

    /// Embedded (a library in another program's process): refreshd does not move the process it
    /// shares, so it enables no controller even in a delegated subtree.
    @Test func embeddedStaysInItsCgroup() throws {
        let facts = RunCgroups.Facts(writable: true, delegated: true, isRoot: false, controllers: Self.allControllers)
        let service = "/sys/fs/cgroup/system.slice/app.service"
        #expect(try plan("0::/system.slice/app.service\n", ownsProcess: false, facts).get() == RunCgroups.Plan(
            parent: service, home: service, enable: [],
            why: "delegated \(service), but refreshd shares its process (embedded): it stays in its cgroup, no controller"))
    }

    /// As a subreaper refreshd reaps dead orphans, never a child it spawned itself: not one in
    /// its own session, not a registered one (its commands, waited for by pid). The three
    /// dead children are real; a planted /proc tree says which is which, so the sweep cannot
    /// touch another test's children.
    @Test func reapsOrphansButNotItsOwnChildren() throws {
        var pids: [Int32] = []
        for _ in 0..<3 {
            var pid: pid_t = 0
            var argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
            defer { free(argv[0]) }
            #expect(posix_spawn(&pid, "/bin/true", nil, nil, &argv, nil) == 0)
            pids.append(pid)
        }
        defer { for pid in pids { var status: Int32 = 0; _ = waitpid(pid, &status, WNOHANG) } }
        // Dead and not waited for: zombies.
        #expect(waitFor(timeout: 5) { pids.allSatisfy { OrphanReaper.stat(pid: $0)?.isZombie == true } })
        let me = getpid(), session = getsid(0)
        let line = { (pid: Int32, sid: Int32) in "\(pid) (true) Z \(me) \(pid) \(sid) 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0\n" }
        let root = try tree([
            "\(pids[0])/stat": line(pids[0], session),  // spawned in refreshd's session
            "\(pids[1])/stat": line(pids[1], pids[1]),  // detached, registered (a command)
            "\(pids[2])/stat": line(pids[2], pids[2]),  // detached, unregistered: an orphan
        ])
        defer { try? FileManager.default.removeItem(atPath: root) }
        OrphanReaper.ownChildren.withLock { _ = $0.insert(pids[1]) }
        defer { OrphanReaper.ownChildren.withLock { _ = $0.remove(pids[1]) } }
        #expect(OrphanReaper.reapOrphanZombies(procDirectory: root) == [pids[2]])
        var status: Int32 = 0
        #expect(waitpid(pids[0], &status, 0) == pids[0])
        #expect(waitpid(pids[1], &status, 0) == pids[1])
        #expect(waitpid(pids[2], &status, WNOHANG) == -1 && errno == ECHILD)
    }

    /// The run's-end sweep reads the pids allocated since the oldest leader (issue 35): the
    /// window runs from it to the last pid allocated, across the wrap at pid_max; there is none
    /// (every process is read) when a leader or the fork counter is unknown, or when as many
    /// processes may have been created since as could bring the pids round to the leader again.
    @Test func theSweepWindowRunsFromTheOldestLeaderToTheLastPID() {
        let window = SweepWindow.since(leaders: [500, 420, 700], last: 900, pidMax: 32768, forksSince: 40)
        #expect(window == SweepWindow(first: 420, last: 900))
        #expect(window?.contains(420) == true && window?.contains(900) == true && window?.contains(650) == true)
        #expect(window?.contains(419) == false && window?.contains(901) == false && window?.contains(30000) == false)
        #expect(window?.pids(atMost: 1000, pidMax: 32768)?.count == 481)
        #expect(window?.pids(atMost: 480, pidMax: 32768) == nil)
        // Across the wrap: 32700 was allocated before 310 (the oldest is the farthest behind the last).
        let wrapped = SweepWindow.since(leaders: [310, 32700], last: 400, pidMax: 32768, forksSince: 600)
        #expect(wrapped == SweepWindow(first: 32700, last: 400))
        #expect(wrapped?.contains(32767) == true && wrapped?.contains(1) == true && wrapped?.contains(400) == true)
        #expect(wrapped?.contains(401) == false && wrapped?.contains(32699) == false)
        #expect(wrapped?.pids(atMost: 1000, pidMax: 32768) == Array(32700...32767) + Array(0...400))
        // Nothing known, or too many forks since: no window.
        #expect(SweepWindow.since(leaders: [500], last: 900, pidMax: 32768, forksSince: nil) == nil)
        #expect(SweepWindow.since(leaders: [], last: 900, pidMax: 32768, forksSince: 1) == nil)
        #expect(SweepWindow.since(leaders: [500, 0], last: 900, pidMax: 32768, forksSince: 1) == nil)
        #expect(SweepWindow.since(leaders: [500], last: 900, pidMax: 32768, forksSince: 32768 - SweepWindow.margin) == nil)
        #expect(SweepWindow.since(leaders: [500], last: 900, pidMax: 32768, forksSince: 32767 - SweepWindow.margin) != nil)
    }

    /// The counters the window needs, read as the kernel writes them.
    @Test func forkCountersAreReadFromProc() throws {
        let root = try tree(["sys/kernel/ns_last_pid": "4242\n",
                             "stat": "cpu  1 2 3\nintr 5 6 7\nctxt 99\nbtime 1\nprocesses 123456\nprocs_running 2\n"])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let counters = OrphanReaper.forkCounters(procDirectory: root)
        #expect(counters?.lastPID == 4242 && counters?.forks == 123456)
        #expect(OrphanReaper.forkCounters(procDirectory: root + "/none") == nil)
        let real = try #require(OrphanReaper.forkCounters())
        #expect(real.lastPID > 0 && real.forks > 0)
    }

    /// A child's start time from the boot clock read around its spawn is the one /proc shows
    /// (the restart tells a run's leader from a reused pid by it, exactly): real children of
    /// this test, each waited for.
    @Test func aChildsStartTicksFromTheBootClockAreThoseOfProc() throws {
        var compared = 0
        for _ in 0..<200 {
            var pid: Int32 = 0
            let before = OrphanReaper.bootTicks()
            let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
            defer { free(argv[0]) }
            try #require(posix_spawn(&pid, "/bin/true", nil, nil, argv, environ) == 0)
            let after = OrphanReaper.bootTicks()
            // Read before the wait: a zombie's stat is still there.
            let proc = OrphanReaper.stat(pid: pid)?.startTicks
            let given = OrphanReaper.startTicks(pid: pid, before: before, after: after)
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
            #expect(proc != nil && given == proc, "pid \(pid): /proc says \(proc.map(String.init) ?? "nothing"), given \(given.map(String.init) ?? "nothing")")
            if before != nil, before == after { compared += 1 }
        }
        #expect(compared > 100, "only \(compared) spawns within one tick")
    }

    /// No cgroup v2 line (a cgroup v1 only system): no run cgroups, and the reason says so.
    @Test func noCgroup2Hierarchy() throws {
        let root = try tree(["self/cgroup": "4:memory:/x\n", "self/mountinfo": ""])
        defer { try? FileManager.default.removeItem(atPath: root) }
        guard case let .failure(unusable) = RunCgroups.detect(instance: "t", procDirectory: root) else {
            Issue.record("run cgroups without a cgroup2 hierarchy")
            return
        }
        #expect(unusable.reason == "refreshd is in no cgroup v2 hierarchy")
    }
}

private func waitFor(timeout: Double, _ condition: () -> Bool) -> Bool {
    let end = Date().addingTimeInterval(timeout)
    while Date() < end {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}
