import RefreshdCore

extension SimulatedHost {
    /// One attempt, answered at once by the modelled receiver (`notificationReceiver`): the
    /// outcome goes back to the runtime as the real host's would, later in the same drain.
    package func deliver(_ notification: RunNotification, done: @escaping @Sendable (NotificationOutcome) -> Void) {
        notificationAttempts.append((notification.id, clock))
        done(notificationReceiver(notification, clock))
    }
}
