import Foundation
#if canImport(Glibc)
import Glibc
#endif
import RefreshdPostgres
import Testing

/// Three real `refreshd run --store` processes on one private PostgreSQL (issue 24): a job every
/// 2 s appends (run id, slot, node) to a file; the node running it is killed with SIGKILL and
/// another takes the job over within lease + lease/3 + a few seconds; no slot appears twice;
/// then the job's new node is paused (SIGSTOP) past its lease and resumed: it is fenced and runs
/// no slot more; SIGTERM stops the others cleanly and no job process is left.
@Suite(.serialized) struct ClusterDaemonTests {
    @Test func aKilledLeadersJobMovesToAnotherNodeAndNoSlotRunsTwice() throws {
        let server = try PrivateServer.shared.get()
        let conninfo = try server.freshDatabase()
        // 4 shards (the nodes read the count from the database): fewer threads on a busy machine.
        try PostgresDatabase(connection: conninfo, shardCount: 4).close()
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("refreshd-cluster-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/jobs", withIntermediateDirectories: true)
        let out = root + "/runs.txt"
        let tag = "cluster-\(UUID().uuidString.prefix(8))"
        try """
            identifier: test.tick
            kind: processing
            command: ["/bin/sh", "-c", "s=$(date -u -d \\"$REFRESH_NOW\\" +%s); echo \\"$REFRESH_RUN_ID $((s - s % 2)) $NODE\\" >> \(out); sleep 1.2"]
            resubmit: {calendar: "*:*:00/2"}
            missed: skip
            allowance: 5s
            """.write(toFile: root + "/jobs/tick.yaml", atomically: true, encoding: .utf8)
        var nodes: [String: Node] = [:]
        defer { for node in nodes.values { node.kill(SIGKILL) } }
        for name in ["a", "b", "c"] {
            nodes[name] = try Node.start(
                ["run", "--jobs", root + "/jobs", "--state", root + "/state-" + name, "--shared", root + "/shared",
                 "--store", conninfo, "--node", name, "--lease", "3s"],
                environment: ["NODE": name, "REFRESHD_TEST_TAG": tag], output: root + "/\(name).log")
        }
        func lines() -> [[Substring]] {
            ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").split(separator: "\n").map { $0.split(separator: " ") }
        }
        // Warm-up: the first node takes every shard and hands the surplus over as the others join.
        #expect(waitFor(20) { lines().count >= 4 }, "no runs: \(logs(nodes))")
        guard let leader = lines().last?[2].description, let killed = nodes[leader] else { return }
        killed.kill(SIGKILL)
        let killedAt = Date()
        let before = lines().count
        // Lease 3 s, renewals every 1 s, a restore: another node runs the job within a few seconds.
        let tookOver = waitFor(15) { lines().dropFirst(before).contains { $0[2] != leader[...] } }
        let takeover = Date().timeIntervalSince(killedAt)
        #expect(tookOver, "no other node ran the job after \(leader) was killed: \(logs(nodes))")
        #expect(takeover < 3 + 1 + 5, "takeover took \(takeover) s")
        let taken = lines().count
        #expect(waitFor(10) { lines().count >= taken + 2 })
        // A zombie: the job's node now is stopped (SIGSTOP) past its lease, the other takes the
        // job over, then the zombie resumes: it fences itself before it acts, its commits are
        // refused by the epoch, and it runs no slot of its own any more.
        if let paused = lines().last?[2].description, paused != leader, let zombie = nodes[paused] {
            let pausedAt = Int(Date().timeIntervalSince1970)
            zombie.kill(SIGSTOP)
            let beforePause = lines().count
            let replaced = waitFor(15) { lines().dropFirst(beforePause).contains { $0[2] != paused[...] } }
            #expect(replaced, "nobody replaced the paused \(paused): \(logs(nodes))")
            zombie.kill(SIGCONT)
            let resumedAt = lines().count
            #expect(waitFor(10) { lines().count >= resumedAt + 2 })
            #expect(zombie.log().contains("fenced"), "the resumed zombie did not fence: \(logs(nodes))")
            let late = lines().filter { $0[2] == paused[...] && (Int($0[1]) ?? 0) > pausedAt + 1 }
            #expect(late.isEmpty, "the paused node ran slots after its pause: \(late)")
        }
        for (name, node) in nodes where name != leader { node.kill(SIGTERM) }
        for (name, node) in nodes where name != leader {
            #expect(node.wait(15) == 0, "\(name) did not stop cleanly: \(logs(nodes))")
        }
        let all = lines()
        let slots = all.map { $0[1] }
        #expect(Set(slots).count == slots.count, "a slot ran twice: \(all)")
        let runs = all.map { $0[0] }
        #expect(Set(runs).count == runs.count, "a run id appears twice: \(all)")
        // Each run lingers 1.2 s after its line: the stop signal finds one in flight, and its
        // processes must be gone with the node (the killed node's last one was reaped by the
        // takeover's restore, or had ended long ago).
        usleep(300_000)
        #expect(processes(tagged: tag).isEmpty, "job processes left: \(processes(tagged: tag))")
        if ProcessInfo.processInfo.environment["CLUSTER_LOGS"] != nil { print(logs(nodes)) }
        print("cluster daemon: takeover after SIGKILL of \(leader) in \(String(format: "%.1f", takeover)) s, \(all.count) runs, 0 duplicate slots")
    }

    func logs(_ nodes: [String: Node]) -> String {
        nodes.keys.sorted().map { "\n--- \($0):\n" + (nodes[$0]?.log().suffix(3000) ?? "") }.joined()
    }
}

/// Polls `condition` every 50 ms for up to `seconds`.
func waitFor(_ seconds: Double, _ condition: () -> Bool) -> Bool {
    let end = Date().addingTimeInterval(seconds)
    while Date() < end {
        if condition() { return true }
        usleep(50_000)
    }
    return condition()
}

/// Every process whose environment holds REFRESHD_TEST_TAG=`tag` (a node or a job of one).
func processes(tagged tag: String) -> [Int32] {
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
    let needle = Array("REFRESHD_TEST_TAG=\(tag)".utf8)
    return entries.compactMap { entry -> Int32? in
        guard let pid = Int32(entry), pid != getpid(),
              let data = FileManager.default.contents(atPath: "/proc/\(entry)/environ") else { return nil }
        let alive = ((try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8)) ?? "").contains(") Z ") == false
        return alive && data.split(separator: 0).contains { Array($0) == needle } ? pid : nil
    }
}

/// A `refreshd` process the test started (posix_spawn: test threads block signals, so
/// Foundation's Process would never see its end), its output in one file.
final class Node: @unchecked Sendable {
    /// The process spawned (waited for).
    let pid: pid_t
    /// Where signals go: refreshd itself (in a PID namespace of its own, `unshare`'s child).
    let target: pid_t
    let output: String
    private var status: Int32?

    init(pid: pid_t, target: pid_t? = nil, output: String) {
        self.pid = pid
        self.target = target ?? pid
        self.output = output
    }

    /// The node's processes as the test sees them (not its jobs).
    var pids: Set<pid_t> { [pid, target] }

    /// The refreshd built beside this test bundle.
    static var binary: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
        if dir.lastPathComponent.hasSuffix(".xctest") { dir = dir.deletingLastPathComponent() }
        return dir.appendingPathComponent("refreshd").path
    }

    /// Starts `refreshd ARGUMENTS` through `setpriv --pdeathsig SIGKILL` (which execs it: same
    /// pid), so that a test process killed outright leaves no node running: the signal comes when
    /// the spawning thread ends, and that thread is the test's, busy until the test has stopped
    /// its nodes anyway.
    /// `executable`: another program than the built refreshd (a test's browser script).
    /// `pidNamespace`: refreshd runs as the init of a PID namespace (and a /proc) of its own, as
    /// on a machine of its own: no other node's restore or sweep can see, let alone reap, its
    /// job processes (`unshare`; signals go to refreshd, its host pid).
    static func start(_ arguments: [String], environment extra: [String: String], output: String,
                      directory: String? = nil, executable: String? = nil, pidNamespace: Bool = false) throws -> Node {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // `env -C DIR` execs refreshd in DIR (same pid): Glibc's addchdir is not in Swift's module.
        let argv = ["/usr/bin/setpriv", "--pdeathsig", "SIGKILL", "--"]
            + (pidNamespace ? ["/usr/bin/unshare", "--pid", "--fork", "--mount-proc", "--kill-child", "--"] : [])
            + (directory.map { ["/usr/bin/env", "-C", $0] } ?? []) + [executable ?? binary] + arguments
        var cArgs = argv.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) } }
        var environment = ProcessInfo.processInfo.environment
        for (key, value) in extra { environment[key] = value }
        var cEnv = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { cEnv.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, argv[0], &actions, nil, &cArgs, &cEnv)
        guard rc == 0 else { throw PrivateServer.Failure("posix_spawn \(argv[0]): \(String(cString: strerror(rc)))") }
        guard pidNamespace else { return Node(pid: pid, output: output) }
        // unshare's one child is refreshd (pid 1 inside).
        var child: pid_t?
        _ = waitFor(5) {
            let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
            child = text.split(separator: " ").first.flatMap { Int32($0) }
            return child != nil
        }
        guard let child else {
            Glibc.kill(pid, SIGKILL)
            throw PrivateServer.Failure("unshare --pid started no refreshd: \((try? String(contentsOfFile: output, encoding: .utf8)) ?? "")")
        }
        return Node(pid: pid, target: child, output: output)
    }

    func log() -> String { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }

    /// It has not exited (reaps it if it has).
    var alive: Bool {
        guard status == nil else { return false }
        var raw: Int32 = 0
        guard waitpid(pid, &raw, WNOHANG) == pid else { return true }
        let signal = raw & 0x7f
        status = signal == 0 ? (raw >> 8) & 0xff : 128 + signal
        return false
    }

    func kill(_ signal: Int32) {
        guard status == nil else { return }
        _ = Glibc.kill(target, signal)
        if signal == SIGKILL { _ = wait(5) }
    }

    /// The exit status (128 + signal when a signal ended it), or nil after `seconds` (then killed).
    @discardableResult
    func wait(_ seconds: Double) -> Int32? {
        if let status { return status }
        var raw: Int32 = 0
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if waitpid(pid, &raw, WNOHANG) == pid {
                let signal = raw & 0x7f
                status = signal == 0 ? (raw >> 8) & 0xff : 128 + signal
                return status
            }
            usleep(20_000)
        }
        _ = Glibc.kill(pid, SIGKILL)
        waitpid(pid, &raw, 0)
        status = -1
        return nil
    }
}
