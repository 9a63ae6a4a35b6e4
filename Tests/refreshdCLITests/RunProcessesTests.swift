import Foundation
import Testing

/// No process of a run outlives it, even one that left the run's session: against the real
/// daemon, at the run's normal end, at its expiration, and with refreshd killed -9 at the exact
/// instants around a run's end (`REFRESHD_CRASH_AT`), in both tracking modes (a cgroup per run,
/// and the child subreaper where no cgroup is used).
@Suite(.serialized) struct RunProcessesTests {
    /// A job whose command starts two processes in sessions of their own (one keeps the
    /// environment, one clears it: `env -i`), waits until both wrote their pid, then `then`.
    func writeDetachingJob(_ box: Sandbox, allowance: String = "1m", then: String = "exit 0") throws {
        let detach = "setsid /bin/sh -c 'echo $$ >> \(box.root)/kept.pid; exec sleep 1000' </dev/null >/dev/null 2>&1 3>&- &"
            + " setsid env -i /bin/sh -c 'echo $$ >> \(box.root)/cleared.pid; exec /bin/sleep 1000' </dev/null >/dev/null 2>&1 3>&- &"
            + " while [ ! -s \(box.root)/kept.pid ] || [ ! -s \(box.root)/cleared.pid ]; do sleep 0.01; done; \(then)"
        try box.write("detach.yaml", """
            identifier: test.detach
            kind: processing
            command: ["/bin/sh", "-c", "\(detach)"]
            allowance: \(allowance)
            grace: 1s
            """)
    }

    /// The detached processes' pids of the first run, once written.
    func detachedPIDs(_ box: Sandbox) -> [Int32] {
        ["kept.pid", "cleared.pid"].compactMap { allPIDs(box, $0).first }
    }

    /// Every pid written to a file (each run appends its own).
    func allPIDs(_ box: Sandbox, _ file: String) -> [Int32] {
        (box.read(file) ?? "").split(whereSeparator: \.isNewline).compactMap { Int32($0) }
    }

    /// Kills whatever the test's runs left (pids written, and every process whose environment
    /// names this sandbox), so a failing test leaves nothing behind.
    func killLeftovers(_ box: Sandbox) {
        // A pid from a file only while it is still the test's `sleep 1000` (not a reused pid).
        let written = (allPIDs(box, "kept.pid") + allPIDs(box, "cleared.pid")).filter { pid in
            let cmdline = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline").map { String(decoding: $0, as: UTF8.self) }
            return cmdline?.hasSuffix("sleep\u{0}1000\u{0}") == true
        }
        for pid in written + sandboxProcesses(box) where pid > 1 { kill(pid, SIGKILL) }
    }

    static let modes = ["cgroup", "subreaper"]

    /// The run ends by itself: its detached processes are killed at its end and the log says so.
    @Test(arguments: modes) func detachedProcessesDieAtTheRunsEnd(mode: String) throws {
        let box = Sandbox()
        defer { killLeftovers(box); box.remove() }
        try writeDetachingJob(box)
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state],
                                   environment: ["REFRESHD_PROCESS_TRACKING": mode])
        defer { daemon.cleanUp() }
        #expect(waitFor { box.runs().map(\.1) == ["success"] })
        let pids = detachedPIDs(box)
        #expect(pids.count == 2)
        #expect(waitFor(timeout: 3) { pids.allSatisfy(processIsGone) }, "left running: \(pids.filter { !processIsGone($0) })")
        #expect(sandboxProcesses(box, runID: 1).isEmpty)
        #expect(daemon.errors().contains("leftover process"))
        // As a subreaper refreshd inherited the killed orphans: it waited for them.
        #expect(waitFor(timeout: 3) { zombieChildren(of: daemon.pid).isEmpty }, "zombies: \(zombieChildren(of: daemon.pid))")
        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)
    }

    /// The run expires (its leader gets SIGTERM and dies): the detached processes die with it.
    @Test(arguments: modes) func detachedProcessesDieWithAnExpiredRun(mode: String) throws {
        let box = Sandbox()
        defer { killLeftovers(box); box.remove() }
        try writeDetachingJob(box, allowance: "1s", then: "exec sleep 60")
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state],
                                   environment: ["REFRESHD_PROCESS_TRACKING": mode])
        defer { daemon.cleanUp() }
        #expect(waitFor { box.runs().first?.1 == "expired" })
        let pids = detachedPIDs(box)
        #expect(pids.count == 2)
        #expect(waitFor(timeout: 3) { pids.allSatisfy(processIsGone) }, "left running: \(pids.filter { !processIsGone($0) })")
        #expect(sandboxProcesses(box, runID: 1).isEmpty)
        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)
    }

    /// refreshd dies just after a run's end is committed: the detached processes were killed
    /// before that commit, so nothing of the run is left, before or after a restart.
    @Test(arguments: modes) func killedRightAfterTheRunsEndIsCommitted(mode: String) throws {
        let box = Sandbox()
        defer { killLeftovers(box); box.remove() }
        try writeDetachingJob(box)
        let first = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state],
                                  environment: ["REFRESHD_PROCESS_TRACKING": mode, "REFRESHD_CRASH_AT": "run-ended"])
        defer { first.cleanUp() }
        #expect(first.wait() == 128 + SIGKILL)
        #expect(box.runs().map(\.1) == ["success"])
        let pids = detachedPIDs(box)
        #expect(pids.count == 2)
        #expect(waitFor(timeout: 3) { pids.allSatisfy(processIsGone) }, "left running: \(pids.filter { !processIsGone($0) })")

        let second = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state],
                                   environment: ["REFRESHD_PROCESS_TRACKING": mode])
        defer { second.cleanUp() }
        #expect(waitFor { second.errors().contains("refreshd started") })
        #expect(sandboxProcesses(box, runID: 1).isEmpty)
        second.signal(SIGTERM)
        #expect(second.wait() == 0)
        #expect(waitFor(timeout: 3) { sandboxProcesses(box).isEmpty })
    }

    /// refreshd dies just after the leader's exit, before the rest of the run is killed: the
    /// restart finds the run unfinished and kills its processes (by environment; with a cgroup
    /// also the one that cleared its environment: the dead refreshd's run cgroup is swept).
    @Test(arguments: modes) func killedBetweenTheLeadersExitAndTheSweep(mode: String) throws {
        let box = Sandbox()
        defer { killLeftovers(box); box.remove() }
        try writeDetachingJob(box)
        let first = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state],
                                  environment: ["REFRESHD_PROCESS_TRACKING": mode, "REFRESHD_CRASH_AT": "leader-exited"])
        defer { first.cleanUp() }
        #expect(first.wait() == 128 + SIGKILL)
        let pids = detachedPIDs(box)
        #expect(pids.count == 2)
        #expect(!pids.contains(where: processIsGone))  // sessions of their own: they outlived refreshd

        let second = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state],
                                   environment: ["REFRESHD_PROCESS_TRACKING": mode])
        defer { second.cleanUp() }
        #expect(waitFor { second.errors().contains("interrupted test.detach run 1") })
        #expect(waitFor(timeout: 3) { sandboxProcesses(box, runID: 1).isEmpty })
        #expect(second.errors().contains("leftover process"))
        if mode == "cgroup", cgroupsUsable {
            // Without a cgroup, a process that cleared its environment and left the session of a
            // run whose refreshd was killed cannot be told from any other (README).
            #expect(waitFor(timeout: 3) { processIsGone(pids[1]) })
        }
        second.signal(SIGTERM)
        #expect(second.wait() == 0)
    }

    /// Whether this machine lets refreshd make cgroups (else both modes use the subreaper).
    var cgroupsUsable: Bool {
        guard let text = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return false }
        return text.contains(" - cgroup2 ") && getuid() == 0
    }
}

/// Living processes whose environment came from this sandbox's refreshd (its shared container),
/// of one run if `runID` is given.
func sandboxProcesses(_ box: Sandbox, runID: Int? = nil) -> [Int32] {
    let marker = Array("REFRESH_SHARED_CONTAINER=\(box.state)/shared".utf8)
    let run = runID.map { Array("REFRESH_RUN_ID=\($0)".utf8) }
    let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return names.compactMap { name -> Int32? in
        guard let pid = Int32(name), pid != getpid(),
              let data = FileManager.default.contents(atPath: "/proc/\(pid)/environ") else { return nil }
        let entries = Array(data).split(separator: 0).map(Array.init)
        guard entries.contains(marker), run.map(entries.contains) ?? true, !processIsGone(pid) else { return nil }
        return pid
    }
}

/// The children of `parent` that died and were not waited for.
func zombieChildren(of parent: Int32) -> [Int32] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return names.compactMap { name -> Int32? in
        guard let pid = Int32(name), let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 1, fields[0] == "Z", Int32(fields[1]) == parent else { return nil }
        return pid
    }
}
