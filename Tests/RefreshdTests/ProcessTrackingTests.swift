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

    /// As a subreaper refreshd reaps dead orphans, never a child it spawned itself: not one in
    /// its own session, not a registered one (libuv's commands, waited for by pid). The three
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
