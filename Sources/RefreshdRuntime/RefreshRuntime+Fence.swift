import RefreshdCore

/// Fencing a shard's runtime (issue 24): the node lost the shard's lease (it fenced itself at
/// send + lease − margin, or the database refused a renewal). The same rule as a commit refused
/// by the fence (`RuntimeMachine.fenced`): no more launches, every run in flight expired and
/// killed at once, nothing more committed. The runtime is then dropped by its node.
extension RefreshRuntime {
    /// Fences this runtime now (any thread); a second call does nothing.
    package func fence(_ reason: String) {
        let host = self.host
        lock.withLock {
            guard storeFailure == nil else { return }
            startIfNeeded()
            storeFailure = reason
            machine.fenced(reason, dropping: [], at: host?.now() ?? clock(), into: &outbox)
        }
        kick(host)
    }

    /// Whether this runtime was fenced or its store failed: it commits nothing more.
    package var isFenced: Bool { lock.withLock { storeFailure != nil } }

    /// Runs in flight in this runtime, by run id (a shard being handed over is drained when
    /// none is left).
    package var runsInFlight: Int { lock.withLock { machines.scheduler.activeRuns.count } }

    /// `runsInFlight` if the runtime's lock is free now, nil while another thread holds it (a
    /// commit blocked on an unreachable database): a node's thread never waits for a shard.
    package var runsInFlightIfFree: Int? { lock.withLockIfFree { machines.scheduler.activeRuns.count } }
}
