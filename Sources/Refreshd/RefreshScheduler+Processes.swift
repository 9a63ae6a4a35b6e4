import CLibUV
import Glibc
import RefreshdCore
import RefreshdRuntime
import Synchronization

/// Finding every process of a command run, however it detached, so none outlives its run.
///
/// Three nets, each catching what the one before may miss:
/// - the run's cgroup (`RunCgroups`), where the system allows one: every descendant, even one
///   in a new session with a cleared environment. Killed when the leader exits and again at the
///   run's end, then removed;
/// - otherwise refreshd is a child subreaper (`PR_SET_CHILD_SUBREAPER`, daemon only): orphans of
///   its runs are re-parented to it instead of init, and it reaps them when they die;
/// - at every run's end (the runtime asks, `sweepRun`) and at a restart, the /proc sweep
///   (`OrphanReaper`): every process whose initial environment names the run
///   (`REFRESH_INSTANCE` and `REFRESH_RUN_ID`), and every process of the run's session.
extension RefreshScheduler {
    /// Picks how runs' processes are tracked (at init; logged when the loop is prepared). A
    /// daemon in a delegated subtree moves itself into its `supervisor/` leaf here.
    func prepareProcessTracking() {
        guard options.runCgroups else {
            trackingNote = "run cgroups are off"
            return
        }
        switch RunCgroups.detect(instance: runtime.instance, ownsProcess: options.ownsProcess) {
        case let .success(found):
            cgroups = found
            cgroupPool = RunCgroupPool(cgroups: found)
        case let .failure(unusable):
            trackingNote = unusable.reason
        }
    }

    /// How runs' processes are tracked and why (`status` shows it).
    package var processTracking: ProcessTracking {
        if let cgroups {
            return ProcessTracking(mode: "cgroup", reason: cgroups.why, cgroup: cgroups.parent, home: cgroups.home,
                                   controllers: cgroups.controllers)
        }
        return ProcessTracking(mode: subreaping ? "subreaper" : "sweep", reason: trackingNote ?? "")
    }

    /// Becomes a subreaper where no cgroup is used (if asked to), and says how runs are tracked.
    func startProcessTracking() {
        guard cgroups == nil, options.ownsProcess else {
            logger.info("process tracking: \(processTracking.summary)")
            return
        }
        guard refreshd_set_child_subreaper() == 0 else {
            logger.warning("process tracking: no cgroup per run (\(trackingNote ?? "")) and cannot become a child subreaper (\(String(cString: strerror(errno)))): a run's processes are found by process group, session and environment")
            return
        }
        subreaping = true
        // At each SIGCHLD, once the commands' watch has waited for the commands that exited.
        childWatch.others = { [unowned self] in reapOrphans() }
        logger.info("process tracking: \(processTracking.summary)")
    }

    /// Waits for dead orphans of runs (SIGCHLD, loop thread), never for a command (its `CommandProcess` waits for it).
    ///
    /// Cheap in the common case: it peeks at the next dead child (`waitid` with `WNOWAIT`) and
    /// waits for it only if it is not refreshd's own. When the one it sees is a command (one that
    /// exited since `ChildWatch` looked), it looks again on the next turn, and if a command still
    /// hides the others then, reads /proc for them.
    func reapOrphans(again: Bool = false) {
        guard subreaping else { return }
        let session = getsid(0)
        while true {
            let pid = refreshd_peek_zombie()
            guard pid > 0 else { return }
            let own = OrphanReaper.ownChildren.withLock { $0.contains(pid) } || getsid(pid) == session
            guard !own else { break }
            var status: Int32 = 0
            guard waitpid(pid, &status, WNOHANG) == pid else { break }
        }
        guard again else {
            performOnLoop { [weak self] in self?.reapOrphans(again: true) }
            return
        }
        OrphanReaper.reapOrphanZombies()
    }

    /// The leader exited: its group is remembered for the sweep (what dies in it is no leftover).
    func leaderExited(runID: Int64) {
        if let group = processes[runID]?.pid { exitedGroups[runID] = group }
    }

    /// The runtime's kill at the leader's exit (its group was just sent SIGKILL): everything else
    /// in its cgroup dies too. What had left the group is counted, reported with the run's sweep.
    /// `cgroup.procs` is read once: a cgroup found empty stays so (`emptyAtExit`).
    func killCgroupAtExit(runID: Int64, group: Int32) {
        guard let cgroups, let cgroup = runCgroups[runID] else { return }
        let members = heldCgroups[runID]?.members ?? RunCgroups.members(cgroup)
        guard !members.isEmpty else {
            emptyAtExit.insert(runID)
            return
        }
        let escaped = members.filter { getpgid($0) != group }
        cgroups.kill(cgroup, members: members)
        heldCgroups[runID]?.killed = true
        if !escaped.isEmpty { killedAtExit[runID, default: []].formUnion(escaped) }
    }

    /// Sends the expiration or the kill to every process of the run: its group, and in its cgroup
    /// whatever left the group.
    func signalRun(_ runID: Int64, _ number: Int32) {
        guard let process = processes[runID] else { return }
        process.signalGroup(number)
        guard let cgroups, let cgroup = runCgroups[runID] else { return }
        if number == SIGKILL {
            if !cgroups.kill(cgroup).isEmpty { heldCgroups[runID]?.killed = true }
        } else {
            for pid in RunCgroups.members(cgroup) where getpgid(pid) != process.pid {
                _ = Glibc.kill(pid, number)
            }
        }
    }

    /// The end of a run whose command was born in its cgroup (issue 35): every process it
    /// started is in that cgroup (one leaves a cgroup only with write access to another), so
    /// killing the cgroup is the whole sweep, done now on the loop (a few small files): no pass
    /// over /proc, no worker thread, no closure. Nil for any other run (`sweepEndedRun`).
    /// A cgroup empty at the leader's exit is not read again; one that was empty at each read
    /// goes back to the pool once its accounting is read, any other is removed.
    func sweepRunByItsCgroup(_ run: RunRecord) -> [Int32]? {
        guard let cgroups, bornInCgroup.remove(run.runID) != nil, let path = runCgroups.removeValue(forKey: run.runID) else {
            return nil
        }
        forksBeforeSpawn[run.runID] = nil
        let emptied = emptyAtExit.remove(run.runID) != nil
        var killed = killedAtExit.removeValue(forKey: run.runID) ?? []
        let quietGroups = exitedGroups.removeValue(forKey: run.runID).map { Set([$0]) } ?? []
        let cgroup = heldCgroups.removeValue(forKey: run.runID) ?? RunCgroup(path: path)
        let members = emptied ? [] : cgroups.kill(path, members: cgroup.members)
        killed.formUnion(members.filter { !quietGroups.contains(getpgid($0)) })
        let read = RunCgroup.usage(of: cgroup, memory: cgroups.controllers.contains("memory"))
        usages[run.runID] = read.usage
        if !members.isEmpty || !killed.isEmpty || !(cgroupPool?.giveBack(cgroup, cpu: read.cpu, oom: read.oom) ?? false) {
            dropRunCgroup(cgroup)
        }
        // After the run's end is committed (the runtime commits it when this returns).
        if CrashPoint.armed == .runEnded { performOnLoop { CrashPoint.reach(.runEnded) } }
        return killed.sorted()
    }

    /// The sweep at a command run's end: its cgroup on the loop (the files are quick), the /proc
    /// sweep on a worker thread (reading every process's stat takes milliseconds on a busy
    /// machine, which the loop's timers must not wait for), then `done` back on the loop. Runs
    /// that end in the same loop turn, or while a sweep reads /proc, share one pass.
    func sweepEndedRun(_ run: RunRecord, instance: String, done: @escaping @Sendable ([Int32]) -> Void) {
        var killed = killedAtExit.removeValue(forKey: run.runID) ?? []
        let quietGroups = exitedGroups.removeValue(forKey: run.runID).map { Set([$0]) } ?? []
        let cgroup = runCgroups.removeValue(forKey: run.runID)
        bornInCgroup.remove(run.runID)
        emptyAtExit.remove(run.runID)
        if let cgroups, let cgroup {
            killed.formUnion(cgroups.kill(cgroup).filter { !quietGroups.contains(getpgid($0)) })
            // Not reused: the sweep below removes it.
            let held = heldCgroups.removeValue(forKey: run.runID) ?? RunCgroup(path: cgroup)
            usages[run.runID] = RunCgroup.usage(of: held, memory: cgroups.controllers.contains("memory")).usage
            cgroupPool?.close(held)
        }
        // Decided now, on the loop: which runs are in flight (a run launched while the worker
        // reads /proc has a newer id, so it counts as in flight too).
        let orphans = subreaping ? OrphanRule(inFlight: Set(processes.keys), newestRun: newestRunID) : nil
        // The leaders whose processes the pass must see: this run's and those in flight (a run
        // launched later has a newer pid), with the fork counter read before each was spawned.
        let own = forksBeforeSpawn.removeValue(forKey: run.runID)
        let inFlight = (Array(processes.keys) + Array(workers.keys)).filter { $0 != run.runID }
        let leaders = [run.processGroup ?? 0] + processes.values.map(\.pid) + workers.values.map(\.pid)
        let readings = [own] + inFlight.map { forksBeforeSpawn[$0] }
        let reading = readings.contains { $0 == nil } ? nil : readings.compactMap { $0 }.min()
        let item = QueuedSweep(run: run, quietGroups: quietGroups, killed: killed, cgroup: cgroup,
                               orphans: orphans, leaders: leaders, forksBefore: reading, done: done)
        let schedule = sweeps.withLock { (queue: inout SweepQueue) -> Bool in
            queue.items.append(item)
            defer { queue.scheduled = true }
            return !queue.scheduled
        }
        guard schedule else { return }
        // At the next loop turn (a timer due at once), not now: the runs ending in this turn (one
        // SIGCHLD reaps several, their pipes close together) share one pass over /proc.
        guard !closing else { return sweeper.async { [weak self] in self?.sweepQueued(instance: instance) } }
        if sweepDispatch == nil { sweepDispatch = makeTimer() }
        sweepDispatch?.start(after: .zero) { [weak self] in
            self?.sweeper.async { [weak self] in self?.sweepQueued(instance: instance) }
        }
    }

    /// Notes, before a command's spawn, the fork counter the latest sweep read (`SweepWindow`).
    func noteSpawn(runID: Int64) {
        forksBeforeSpawn[runID] = sweeps.withLock { $0.forks }
    }

    /// One pass over /proc for every run queued (worker thread), then each run's `done` on the
    /// loop. It reads only the processes started since the oldest leader of the runs ending and
    /// in flight (`SweepWindow`), unless the last pass found something (then every process, until
    /// a pass finds nothing: what it killed may leave orphans older than the runs now in flight).
    func sweepQueued(instance: String) {
        let (batch, fullPass) = sweeps.withLock { (queue: inout SweepQueue) -> ([QueuedSweep], Bool) in
            defer { queue.items = []; queue.scheduled = false }
            return (queue.items, queue.fullNext)
        }
        guard !batch.isEmpty else { return }
        var killed = Dictionary(batch.map { ($0.run.runID, $0.killed) }, uniquingKeysWith: { $0.union($1) })
        let quietGroups = batch.reduce(into: Set<Int32>()) { $0.formUnion($1.quietGroups) }
        // One listing of /proc for the runs' leftovers and the orphans (it was one each).
        let leaders = batch.flatMap(\.leaders)
        let before = batch.contains { $0.forksBefore == nil } ? nil : batch.compactMap(\.forksBefore).min()
        let counters = OrphanReaper.forkCounters()
        var window: SweepWindow?
        if !fullPass, let counters, let before {
            window = SweepWindow.since(leaders: leaders, last: counters.lastPID, pidMax: OrphanReaper.pidMax,
                                       forksSince: counters.forks - before)
        }
        let listing = window.map { OrphanReaper.processes(in: $0) } ?? OrphanReaper.allProcesses()
        var signalled: Set<Int32> = []
        for (run, pids) in OrphanReaper.reap(batch.map(\.run), instance: instance, quietGroups: quietGroups,
                                             in: listing, signalled: &signalled) {
            killed[run.runID, default: []].formUnion(pids)
        }
        var unattributed: [Int32] = []
        var survivors = 0
        let rules = batch.compactMap(\.orphans)
        if !rules.isEmpty {
            let ending = Set(batch.map(\.run.runID))
            let rule = OrphanRule(inFlight: rules.reduce(into: Set<Int64>()) { $0.formUnion($1.inFlight) }.subtracting(ending),
                                  newestRun: rules.map(\.newestRun).max() ?? 0)
            // What the reap just killed, and the groups killed at their leaders' exits, may not be
            // dead yet in the listing: not counted again.
            let leftAlone = listing.filter { signalled.contains($0.pid) || quietGroups.contains($0.stat.processGroup) }.map(\.pid)
            let ruled = rule.kill(ending: ending, instance: instance, in: listing, skipping: Set(leftAlone),
                                  unattributed: &unattributed, survivors: &survivors)
            for (runID, pid) in ruled { killed[runID, default: []].insert(pid) }
            survivors += ruled.count
        }
        // Anything killed or left alive: the next pass reads every process.
        let found = !signalled.isEmpty || !unattributed.isEmpty || survivors > 0
        sweeps.withLock { queue in
            queue.fullNext = found
            if let counters { queue.forks = counters.forks }
            queue.lastPass = SweepPass(read: listing.count, window: window, found: found)
        }
        let results = killed.mapValues { $0.sorted() }, others = unattributed
        performOnLoop { [weak self] in
            if let self, !others.isEmpty { self.logUnattributed(others) }
            for item in batch {
                if let self, let cgroup = item.cgroup { self.removeCgroup(cgroup) }
                item.done(results[item.run.runID] ?? [])
                CrashPoint.reach(.runEnded)
            }
        }
    }

    /// Kills the leftovers of `runs` at the restore: every run cgroup a dead refreshd of this
    /// state left, then the /proc sweep.
    func sweep(_ runs: [RunRecord], instance: String) -> [(RunRecord, [Int32])] {
        var killed: [Int64: Set<Int32>] = [:]
        if let cgroups, !staleCgroupsSwept {
            staleCgroupsSwept = true
            let mine = Set(runCgroups.values).union(cgroupPool?.idlePaths ?? [])
            let known = Set(runs.map(\.runID))
            for (named, path) in cgroups.existing() where !mine.contains(path) {
                let runID = RunCgroups.lastRun(of: path, named: named)
                let pids = cgroups.kill(path)
                if known.contains(runID) {
                    if !pids.isEmpty { killed[runID, default: []].formUnion(pids) }
                } else if !pids.isEmpty {
                    logger.warning("killed \(pids.count) leftover process\(pids.count == 1 ? "" : "es") of run \(runID) in \(path) (a finished run's cgroup left by a dead refreshd)")
                }
                removeCgroup(path)
            }
        }
        for (run, pids) in OrphanReaper.reap(runs, instance: instance) {
            killed[run.runID, default: []].formUnion(pids)
        }
        return runs.compactMap { run in
            guard let pids = killed[run.runID], !pids.isEmpty else { return nil }
            return (run, pids.sorted())
        }
    }

    func logUnattributed(_ pids: [Int32]) {
        logger.warning("killed \(pids.count) orphan process\(pids.count == 1 ? "" : "es") of finished runs (pids \(pids.sorted().map(String.init).joined(separator: " ")); no run named in their environment)")
    }
}

/// As a subreaper without cgroups: the orphans that came back to refreshd die once their run has
/// ended. One whose environment names a run still in flight lives on; one that names none (it
/// cleared its environment) could be any run's, so it dies when no command run is in flight.
struct OrphanRule: Sendable {
    /// Runs in flight when the sweep began, and the newest run started then: a newer one started
    /// since, and is in flight too.
    var inFlight: Set<Int64>
    var newestRun: Int64

    /// Kills the orphans whose run has ended; returns those of the `ending` runs, and puts the
    /// others (an earlier run's, or none named) in `unattributed`.
    func kill(ending: Set<Int64>, instance: String, in listing: [(pid: Int32, stat: OrphanReaper.ProcessStat)],
              skipping: Set<Int32>, unattributed: inout [Int32], survivors: inout Int) -> [(runID: Int64, pid: Int32)] {
        var killed: [(runID: Int64, pid: Int32)] = []
        for (pid, runID) in OrphanReaper.orphanChildren(instance: instance, in: listing) where !skipping.contains(pid) {
            if let runID, inFlight.contains(runID) || runID > newestRun { continue }
            if runID == nil, !inFlight.isEmpty {
                survivors += 1  // no run named: it lives while runs are in flight
                continue
            }
            // Checked again under the spawn's lock: a command being spawned is a child not
            // yet known as refreshd's own, with refreshd's environment until its exec.
            let sent = OrphanReaper.ownChildren.withLock { own in !own.contains(pid) && Glibc.kill(pid, SIGKILL) == 0 }
            guard sent else { continue }
            if let runID, ending.contains(runID) { killed.append((runID, pid)) } else { unattributed.append(pid) }
        }
        return killed
    }
}

/// A run's end waiting for the /proc sweep, with what the loop already did for it.
struct QueuedSweep: Sendable {
    var run: RunRecord
    var quietGroups: Set<Int32>
    var killed: Set<Int32>
    var cgroup: String?
    var orphans: OrphanRule?
    /// The pids of this run's leader and of the leaders in flight when it ended.
    var leaders: [Int32]
    /// The lowest fork counter read before their spawns (nil: one is unknown).
    var forksBefore: Int64?
    var done: @Sendable ([Int32]) -> Void
}

/// The runs waiting for a sweep, whether one is queued on the worker, and what the passes
/// carry from one to the next.
struct SweepQueue {
    var items: [QueuedSweep] = []
    var scheduled = false
    /// The last pass found something: the next reads every process.
    var fullNext = false
    /// The fork counter at the last pass (`SweepWindow`); nil before the first.
    var forks: Int64?
    var lastPass: SweepPass?
}

/// What a sweep pass read: the processes whose stat it read, the window (`SweepWindow`; nil:
/// every process), and whether it found anything to kill or left an orphan alive.
struct SweepPass: Equatable {
    var read: Int
    var window: SweepWindow?
    var found: Bool
}
