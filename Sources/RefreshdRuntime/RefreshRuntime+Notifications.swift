import RefreshdCore

/// Failure and recovery notifications (issue 25): the machine decides (`NotificationMachine`),
/// the host delivers. A `.notify` effect is carried out only after the commit that recorded
/// it; the attempt's outcome comes back here as an event, committed like any other.
extension RefreshRuntime {
    /// Under `lock`: the notifiers of the jobs in force, for the machine.
    func setNotifiers() {
        var notifiers: [String: JobNotifiers] = [:]
        for (identifier, job) in jobs where !job.notifiers.isEmpty { notifiers[identifier] = job.notifiers }
        machines.notifications.notifiers = notifiers
    }

    /// Execution context: one attempt, by the host.
    func deliver(_ notification: RunNotification, on host: any RuntimeHost) {
        let id = notification.id
        host.deliver(notification) { [weak self] outcome in
            self?.notificationFinished(id, outcome)
        }
    }

    /// The host's report of one attempt (any thread): delivered, or failed and retried.
    package func notificationFinished(_ id: String, _ outcome: NotificationOutcome) {
        perform(.notification(id: id, outcome))
    }

    /// What the notifications came to since this runtime started.
    package var notificationCounts: NotificationCounts { lock.withLock { machines.notifications.counts } }

    /// Notifications written and not yet delivered or given up.
    package var heldNotifications: [RunNotification] { lock.withLock { machines.notifications.held } }
}
