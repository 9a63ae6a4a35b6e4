@_spi(Benchmarks) import RefreshdCore

/// The stop rules, on every host: a first stop signal stops gracefully (running work gets its
/// expiration and its grace), a second one kills every run at once. The host only reports that
/// a stop signal arrived (`stopSignalReceived`); the runtime decides, and its effects (`.kill`
/// per run in flight) are what the host carries out, so the simulator runs the same rule.
extension RefreshRuntime {
    /// A stop signal (SIGTERM, SIGINT: `name`) reached the host. The first stops gracefully; one
    /// that arrives while the runtime is already stopping kills every run now. Any thread.
    package func stopSignalReceived(_ name: String) {
        switch lock.withLock({ machine.stopSignal(name) }) {
        case let .stopImmediately(reason):
            stop(immediate: true, reason: reason)
        case let .stopGracefully(log):
            report(RuntimeObservation(log, at: host?.now() ?? clock()))
            stop()
        }
    }

    /// Stops; `immediate` does not wait for the graces: every run in flight is killed at once
    /// (a command's whole process group, SIGKILL; an in-process task or an action is abandoned),
    /// and each ends `interrupted`, recorded as any stop records it. Any thread.
    package func stop(immediate: Bool, reason: String = "immediate stop") {
        guard immediate else {
            stop()
            return
        }
        let host = self.host
        let notice = lock.withLock { () -> RuntimeObservation in
            startIfNeeded()
            let now = host?.now() ?? clock()
            // The shutdown first (idempotent): the core stops launching and marks every run as
            // stopped by it, so the kills below end them `interrupted`. It does not wait for
            // sweeps under way: an immediate stop waits for nothing.
            applyLiveBacklog()
            scratch.removeAll(keepingCapacity: true)
            // Effects, not host calls: carried out in order after the shutdown's expirations, on
            // the execution context; a run that ended meanwhile is skipped there.
            var kills: [SchedulerEffect] = []
            let log = machine.stopImmediately(reason, at: now, into: &scratch, kills: &kills)
            _ = commit(scratch)
            outbox.append(contentsOf: kills)
            return RuntimeObservation(log, at: now)
        }
        report(notice)
        kick(host)
    }
}
