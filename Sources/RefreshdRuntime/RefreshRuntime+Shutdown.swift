
/// The stop rules, on every host: a first stop signal stops gracefully (running work gets its
/// expiration and its grace), a second one kills every run at once. The host only reports that
/// a stop signal arrived (`stopSignalReceived`); the runtime decides, and its effects (`.kill`
/// per run in flight) are what the host carries out, so the simulator runs the same rule.
extension RefreshRuntime {
    /// A stop signal (SIGTERM, SIGINT: `name`) reached the host. The first stops gracefully; one
    /// that arrives while the runtime is already stopping kills every run now. Any thread.
    package func stopSignalReceived(_ name: String) { perform(.stopSignal(name: name)) }

    /// Stops; `immediate` does not wait for the graces: every run in flight is killed at once
    /// (a command's whole process group, SIGKILL; an in-process task or an action is abandoned),
    /// and each ends `interrupted`, recorded as any stop records it. Any thread.
    package func stop(immediate: Bool, reason: String = "immediate stop") {
        perform(immediate ? .stopImmediately(reason: reason) : .stop)
    }
}
