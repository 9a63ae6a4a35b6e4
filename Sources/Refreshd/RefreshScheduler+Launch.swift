import CLibUV
import Glibc
import RefreshdCore

extension RefreshScheduler {
    /// Starts a run with its registered handler (loop thread).
    func launch(_ order: LaunchOrder) {
        CrashPoint.reach(.launchCommitted)
        switch lock.withLock({ handlers[order.identifier] }) {
        case let .command(job):
            spawn(order, job)
        case let .inProcess(handler):
            let task = RefreshTask(order: order, sharedContainer: sharedContainer) { [weak self] runID, success in
                guard let self else { return }
                let live = self.lock.withLock { self.tasks.removeValue(forKey: runID) != nil }
                if live { self.send(.runFinished(runID: runID, exit: .completed(success: success))) }
            }
            lock.withLock { tasks[order.runID] = task }
            handler(task)
        case nil:
            logger.error("no handler for \(order.identifier) run \(order.runID)")
            send(.runFinished(runID: order.runID, exit: .exited(127)))
        }
    }

    /// The environment a command job sees: refreshd's own, the job's, and the REFRESH_ variables.
    func environment(for order: LaunchOrder, _ job: CommandJob) -> [String] {
        var env = baseEnvironment
        for (key, value) in job.environment { env[key] = value }
        env["REFRESH_TASK_IDENTIFIER"] = order.identifier
        env["REFRESH_RUN_ID"] = String(order.runID)
        // With REFRESH_RUN_ID, names this run's processes from their first instant (see OrphanReaper).
        env["REFRESH_INSTANCE"] = instance
        env["REFRESH_DEADLINE"] = order.deadline.iso8601
        env["REFRESH_KIND"] = order.kind.rawValue
        env["REFRESH_ATTEMPT"] = String(order.attempt)
        if let sharedContainer { env["REFRESH_SHARED_CONTAINER"] = sharedContainer }
        return env.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
    }

    static func processEnvironment() -> [String: String] {
        var env: [String: String] = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let s = String(cString: entry)
            if let eq = s.firstIndex(of: "=") { env[String(s[..<eq])] = String(s[s.index(after: eq)...]) }
            pointer += 1
        }
        return env
    }

    func spawn(_ order: LaunchOrder, _ job: CommandJob) {
        let tag = "\(order.identifier)[\(order.runID)]"
        let logger = self.logger
        let process = CommandProcess(
            runID: order.runID, identifier: order.identifier,
            onLine: { stream, line in logger.info("\(tag) \(stream): \(line)") },
            onNotice: { text in logger.warning("\(tag) \(text)") },
            onExit: { [weak self] exit in
                guard let self else { return }
                self.processes[order.runID] = nil
                self.send(.runFinished(runID: order.runID, exit: exit))
            })
        if let error = process.spawn(loop: loop, argv: job.argv, environment: environment(for: order, job),
                                     workingDirectory: job.workingDirectory) {
            logger.error("\(tag) could not start \(job.argv.first ?? "?"): \(error)")
            send(.runFinished(runID: order.runID, exit: .exited(127)))
            return
        }
        processes[order.runID] = process
        CrashPoint.reach(.spawned)
        let ticks = OrphanReaper.stat(pid: process.pid)?.startTicks
        lock.withLock {
            do {
                try store?.apply([.processStarted(runID: order.runID, processGroup: process.pid, startTicks: ticks)])
            } catch {
                logger.error("\(tag) process group not recorded: \(error)")
            }
        }
        logger.info("\(tag) started pid \(process.pid)")
    }
}
