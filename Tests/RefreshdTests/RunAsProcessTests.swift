import Foundation
import Testing
@testable import Refreshd
import RefreshdCore
import RefreshdConfig

/// `user:` and `group:` on the libuv host (issue 35), with real processes: the command runs as
/// the account the job file resolved, with its supplementary groups and HOME/USER/LOGNAME; its
/// results channel works; what it leaves behind, as that user, is killed with the run. Needs
/// root (the machine and CI run the suite as root); `nobody` (65534) and `nogroup` exist on
/// every Debian.
@Suite(.serialized) struct RunAsProcessTests {
    static let isRoot = geteuid() == 0

    /// The account a job file's `user:` (and `group:`) resolves to on this machine.
    static func runAs(_ user: String, group: String? = nil) throws -> RunAs {
        RunAs(user: user, group: group, account: try Accounts.system.account(user: user, group: group).get())
    }

    /// Runs `script` (sh) as `runAs` once; returns its stdout lines and the run.
    static func run(_ script: String, as runAs: RunAs, identifier: String = "t.asuser") throws -> (lines: [String], run: RunRecord?) {
        let h = try LoopHarness { s in
            var command = CommandJob(argv: ["/bin/sh", "-c", script])
            command.runAs = runAs
            s.register(TaskDefinition(identifier: identifier, kind: .processing, allowance: .seconds(20)), command: command)
        }
        defer { h.removeDirectory() }
        try h.scheduler.submit(TaskRequest(identifier: identifier, kind: .processing))
        h.start()
        #expect(h.wait { h.outcomes()[identifier] == [.success] }, "\(h.lines.all)")
        #expect(h.stop())
        let prefix = "\(identifier)[1] stdout: "
        return (h.lines.all.compactMap { line in line.range(of: prefix).map { String(line[$0.upperBound...]) } }, h.runs().first)
    }

    @Test(.enabled(if: isRoot, "switching users needs root"))
    func aJobRunsAsNobodyWithItsHomeAndNameAndItsResultsStillArrive() throws {
        let script = """
            echo "uid $(id -u)"; echo "gid $(id -g)"; echo "groups $(id -G)"
            echo "home $HOME"; echo "user $USER"; echo "logname $LOGNAME"
            echo "ids $(sed -n 's/^Uid:[[:space:]]*//p' /proc/self/status | tr -s '[:space:]' ' ')"
            echo "capabilities $(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status) $(sed -n 's/^CapPrm:[[:space:]]*//p' /proc/self/status)"
            printf '{"uid": %s, "user": "%s"}\\n' "$(id -u)" "$USER" >&3
            sleep 0.2; cg=$(awk '$3 == "cgroup2" {print $2; exit}' /proc/mounts)$(sed -n 's/^0:://p' /proc/self/cgroup)
            if [ ! -e "$cg/cgroup.procs" ]; then echo "cgroup none"
            elif [ -w "$cg/cgroup.procs" ] || [ -w "$cg/pids.max" ] || [ -w "$cg/memory.max" ]; then echo "cgroup writable $cg"
            else echo "cgroup refused"; fi
            """
        let (lines, run) = try Self.run(script, as: Self.runAs("nobody"))
        #expect(Array(lines.prefix(6)) == ["uid 65534", "gid 65534", "groups 65534", "home /nonexistent", "user nobody", "logname nobody"])
        // Real, effective, saved and file-system uids all switched, and no capability left.
        #expect(Array(lines.dropFirst(6).prefix(2)) == ["ids 65534 65534 65534 65534 ", "capabilities 0000000000000000 0000000000000000"], "\(lines)")
        let results = run?.output.results ?? []
        #expect(results.count == 1 && results[0].contains("65534") && results[0].contains("\"nobody\""), "\(results)")
        // The run's cgroup and its limit files stay root's: the job cannot raise its limits
        // nor leave it (where there is a cgroup per run; elsewhere its cgroup is not refreshd's).
        #expect(lines.last == "cgroup refused" || (!RunLimitsTests.runCgroupsAvailable && lines.last == "cgroup none"), "\(lines)")
    }

    /// A user listed as a member of a group keeps it: libuv's own switch (`setgroups(0, NULL)`)
    /// would drop it. `group:` replaces the primary group only.
    @Test(.enabled(if: isRoot && memberUser != nil, "needs root and a user listed as a member of a group"))
    func supplementaryGroupsAreKeptAndGroupReplacesThePrimaryOne() throws {
        let (user, memberOf) = try #require(Self.memberUser)
        let runAs = try Self.runAs(user, group: "nogroup")
        let expected = try #require(runAs.account?.groups)
        #expect(expected.contains(memberOf) && expected.first == 65534)
        let (lines, _) = try Self.run("echo \"gid $(id -g)\"; echo \"groups $(id -G)\"; echo \"user $USER\"", as: runAs)
        #expect(lines.first == "gid 65534")
        let groups = lines.dropFirst().first.map { $0.dropFirst("groups ".count).split(separator: " ").compactMap { UInt32($0) } } ?? []
        #expect(Set(groups) == Set(expected), "\(lines), expected \(expected)")
        #expect(lines.last == "user \(user)")
    }

    /// What the job leaves behind as `nobody`, in a session of its own, is killed by refreshd
    /// (root) at the run's end: the group kill and the sweep work across the uid change.
    @Test(.enabled(if: isRoot, "switching users needs root"))
    func aProcessLeftByTheJobAsAnotherUserIsKilledAtTheRunsEnd() throws {
        let script = "setsid /bin/sh -c 'echo \"left $$ uid $(id -u)\"; exec sleep 30 >/dev/null 2>&1' 3>&- &"
            + " sleep 0.3; exit 0"
        let (lines, _) = try Self.run(script, as: Self.runAs("nobody"), identifier: "t.leaves")
        let left = try #require(lines.first { $0.hasPrefix("left ") }?.split(separator: " "), "\(lines)")
        #expect(left.last == "65534", "\(lines)")
        let pid = try #require(Int32(left[1]))
        defer { if !processIsGone(pid) { kill(pid, SIGKILL) } }
        #expect(processIsGone(pid) || LoopHarness.waitGone(pid), "pid \(pid) (nobody's) outlived its run")
    }

    /// The first user of this machine listed as a member of a group (`/etc/group`'s fourth
    /// field), and that group's gid: postgres in ssl-cert where PostgreSQL is installed.
    static let memberUser: (String, UInt32)? = {
        guard let text = try? String(contentsOfFile: "/etc/group", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: ":", omittingEmptySubsequences: false)
            guard fields.count == 4, let gid = UInt32(fields[2]), gid != 0,
                  let member = fields[3].split(separator: ",").first.map(String.init),
                  member != "root", Accounts.system.user(member) != nil else { continue }
            return (member, gid)
        }
        return nil
    }()
}

extension LoopHarness {
    /// Polls for 2 s until `pid` is gone.
    static func waitGone(_ pid: Int32) -> Bool {
        let end = Date().addingTimeInterval(2)
        while Date() < end {
            if processIsGone(pid) { return true }
            usleep(10_000)
        }
        return processIsGone(pid)
    }
}
