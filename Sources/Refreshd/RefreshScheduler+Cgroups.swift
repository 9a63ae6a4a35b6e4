import CLibUV
import Glibc
import RefreshdCore
import Synchronization

/// A command run's cgroup (issue 35): taken from the pool or made, and limited, before the spawn,
/// its leader born in it (`refreshd_spawn`; moved in after the spawn where it could not be), and
/// given back to the pool once emptied and read, or removed (`RunCgroupPool`). Moved out of RefreshScheduler+Processes.swift,
/// which keeps the nets that find every process of a run.
extension RefreshScheduler {
    /// The run's cgroup before the spawn, with its job's limit files written (nil where none is
    /// used or it cannot be made): an idle one of the pool, or a new one (`RunCgroupPool`).
    func takeRunCgroup(_ order: LaunchOrder, limits: JobLimits) -> RunCgroup? {
        guard let cgroupPool else { return nil }
        let files = limits.isEmpty ? [] : RunLimits.cgroupFiles(limits, controllers: cgroupPool.cgroups.controllers)
        switch cgroupPool.take(runID: order.runID, files: files) {
        case let .success(taken):
            if !taken.failures.isEmpty {
                logger.warning("\(order.identifier)[\(order.runID)] cannot set limits in \(taken.cgroup.path): \(taken.failures.joined(separator: "; "))")
            }
            return taken.cgroup
        case let .failure(unusable):
            logger.warning("\(order.identifier)[\(order.runID)] runs without a cgroup: \(unusable.reason)")
            return nil
        }
    }

    /// A run cgroup that will not be reused: its descriptors closed, the directory removed.
    func dropRunCgroup(_ cgroup: RunCgroup) {
        cgroupPool?.close(cgroup)
        removeCgroup(cgroup.path)
    }

    /// After the spawn: the command in the run's cgroup (moved there now if it was not born
    /// there), then its process limits; the log says which apply.
    func enterRunCgroup(_ order: LaunchOrder, pid: Int32, cgroup: RunCgroup?, born: Bool, limits: JobLimits) {
        defer { limitProcess(order, pid: pid, limits: limits, inCgroup: cgroup != nil && runCgroups[order.runID] != nil) }
        guard let cgroup, let cgroups else { return }
        if born || cgroups.attach(pid: pid, to: cgroup.path) {
            runCgroups[order.runID] = cgroup.path
            heldCgroups[order.runID] = cgroup
            if born { bornInCgroup.insert(order.runID) }
        } else {
            logger.warning("\(order.identifier)[\(order.runID)] runs without a cgroup: cannot move pid \(pid) into \(cgroup.path): \(String(cString: strerror(errno)))")
            dropRunCgroup(cgroup)
        }
    }

    /// The limits set on the command itself (`nice`, and `memory` without the memory
    /// controller), and the run's log line saying where each limit went.
    func limitProcess(_ order: LaunchOrder, pid: Int32, limits: JobLimits, inCgroup: Bool) {
        guard !limits.isEmpty else { return }
        let controllers = inCgroup ? cgroups?.controllers : nil
        let failures = RunLimits.applyToProcess(limits, pid: pid, controllers: controllers)
        logger.info("\(order.identifier)[\(order.runID)] \(RunLimits.describe(RunLimits.placement(limits, controllers: controllers)))")
        if !failures.isEmpty {
            logger.warning("\(order.identifier)[\(order.runID)] cannot set limits on pid \(pid): \(failures.joined(separator: "; "))")
        }
    }

    /// Removes an emptied run cgroup; while its killed processes finish exiting, tries again
    /// every 50 ms for 5 s (then the next start removes it).
    func removeCgroup(_ path: String) {
        guard let cgroups, !cgroups.remove(path) else { return }
        cgroupsToRemove.append((path, 0))
        scheduleCgroupRemoval()
    }

    private func scheduleCgroupRemoval() {
        // Armed once: re-arming at each failure would put the retry off for as long as runs end
        // more often than every 50 ms.
        guard !cgroupsToRemove.isEmpty, !closing, !cgroupRemovalArmed else { return }
        if cgroupRemovalTimer == nil { cgroupRemovalTimer = makeTimer() }
        cgroupRemovalArmed = true
        cgroupRemovalTimer?.start(after: .milliseconds(50)) { [unowned self] in
            cgroupRemovalArmed = false
            guard let cgroups else { return }
            var left: [(path: String, tries: Int)] = []
            for (path, tries) in cgroupsToRemove where !cgroups.remove(path) {
                if tries >= 100 {
                    logger.warning("cannot remove \(path): \(String(cString: strerror(errno))); the next start will")
                } else {
                    left.append((path, tries + 1))
                }
            }
            cgroupsToRemove = left
            scheduleCgroupRemoval()
        }
    }

    /// At the stop: the cgroups still to remove, waiting up to a second for their killed
    /// processes to finish exiting (else the next start removes them).
    func removeLeftCgroups() {
        guard let cgroups else { return }
        cgroupPool?.drain()
        for cgroup in heldCgroups.values { cgroupPool?.close(cgroup) }
        for _ in 0..<100 {
            cgroupsToRemove.removeAll { cgroups.remove($0.path) }
            if cgroupsToRemove.isEmpty { return }
            usleep(10_000)
        }
    }
}
