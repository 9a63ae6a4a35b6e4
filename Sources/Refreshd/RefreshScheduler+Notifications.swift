import CLibUV
import Glibc
import RefreshdCore

/// Delivering failure and recovery notifications (issue 25): I/O only. The machine decided
/// that this attempt is due and its record is committed; the outcome goes back to the runtime
/// (`notificationFinished`), which decides about retries.
extension RefreshScheduler {
    package func deliver(_ notification: RunNotification, done: @escaping @Sendable (NotificationOutcome) -> Void) {
        CrashPoint.reach(.notificationCommitted)
        let report: @Sendable (NotificationOutcome) -> Void = { outcome in
            if outcome == .delivered { CrashPoint.reach(.notificationDelivered) }
            done(outcome)
        }
        switch notification.notifier.target {
        case let .command(argv, workingDirectory):
            runNotifier(notification, argv: argv, workingDirectory: workingDirectory, report)
        case .webhook:
            guard let webhookSender else { return report(.failed("this refreshd has no HTTP client")) }
            webhookSender(notification, report)
        }
    }

    /// Runs a notifier command as a job's command is run (`CommandProcess`: a new session, its
    /// output read and its group killed at its exit), with the notification in REFRESHD_*
    /// variables; killed (its whole group) at the notifier's timeout, and when refreshd stops
    /// (`killNotifiers`: its record stays, and the next start sends it again).
    func runNotifier(_ notification: RunNotification, argv: [String], workingDirectory: String?,
                     _ report: @escaping @Sendable (NotificationOutcome) -> Void) {
        let timer = OneShotTimer(loop: loop)
        var lastLine: String?
        var timedOut = false
        var leader: CommandProcess?
        let process = CommandProcess(
            runID: notification.runID, identifier: "notify \(notification.job)", watch: childWatch, isOverLimit: { false },
            onLines: { _, lines in if let last = lines.last(where: { !$0.isEmpty }) { lastLine = last } },
            onSkipped: { _, _ in },
            onExit: { [weak self] exit in
                timer.close()
                leader?.signalGroup(SIGKILL)  // nothing it started outlives it, in its group
                if let instance = self?.runtime.instance {  // or in a session of its own
                    OrphanReaper.reapNotifiers(instance: instance, notification: notification.id)
                }
                if let pid = leader?.pid { self?.notifierProcesses[pid] = nil }
                leader = nil
                let outcome: NotificationOutcome
                switch exit {
                case .exited(0) where !timedOut:
                    outcome = .delivered
                case .exited(let code) where !timedOut:
                    outcome = .failed("exit \(code)" + (lastLine.map { ": " + EchoText.quoted($0, limit: 200) } ?? ""))
                case .signaled(let signal) where !timedOut:
                    outcome = .failed("killed by signal \(signal)")
                default:
                    outcome = .failed("timed out after \(notification.notifier.timeout.compactText)")
                }
                report(outcome)
            })
        var environment = runtime.baseEnvironment
        for (name, value) in notification.environment { environment[name] = value }
        // Its names for the reaper, as a run's commands carry theirs: a refreshd killed while
        // it runs finds and kills it at the next start (`reapNotifierLeftovers`).
        environment["REFRESH_INSTANCE"] = runtime.instance
        environment["REFRESH_NOTIFIER"] = notification.id
        let env = environment.map { "\($0.key)=\($0.value)" }.sorted()
        if let error = process.spawn(loop: loop, argv: argv, environment: env, workingDirectory: workingDirectory) {
            timer.close()
            report(.failed("\(argv.first ?? "?"): \(error)"))
            return
        }
        leader = process
        notifierProcesses[process.pid] = process
        timer.start(after: notification.notifier.timeout) {
            timedOut = true
            process.signalGroup(SIGKILL)
        }
    }

    /// At the restore: notifier commands of this state that a dead refreshd left running.
    package func reapNotifierLeftovers(instance: String) -> [Int32] {
        OrphanReaper.reapNotifiers(instance: instance)
    }

    /// refreshd stops: every notifier command still running is killed with its group.
    func killNotifiers() {
        guard !notifierProcesses.isEmpty else { return }
        for process in notifierProcesses.values { process.signalGroup(SIGKILL) }
        notifierProcesses.removeAll()
        // What they started in sessions of their own (found by environment).
        OrphanReaper.reapNotifiers(instance: runtime.instance)
    }
}
