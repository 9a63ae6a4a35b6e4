import RefreshdCore

/// What the control socket asks of a live runtime: an operator's launch and expiration, and
/// reads of the store under the runtime's lock (the store is not shared across threads otherwise).
extension RefreshRuntime {
    /// Launches the identifier's pending request now, ignoring its earliest begin date and its
    /// conditions (`SchedulerCore.launchNow`); committed before this returns.
    package func launchNow(_ identifier: String) throws(ControlRefusal) {
        try feedControl(.launchNow(identifier: identifier))
    }

    /// An operator's submit (`refreshd ctl submit`): the job's own request
    /// (`TaskRequest.forJob`, its definition's kind and conditions), due at `earliest`
    /// or now, replacing a pending one; committed before this returns.
    ///
    /// - Throws: `ControlRefusal.notDeclared` for an identifier no job declares (`.template` for
    ///   a template's); the core's `SchedulerError` otherwise (namespace full, stopping, not saved).
    package func submitForOperator(_ identifier: String, earliest: Instant?) throws {
        let performed = perform(.operatorSubmit(identifier: identifier, earliest: earliest))
        if case let .refused(.order(refusal)) = performed.reply { throw refusal }
        try performed.scheduler()
    }

    /// The refusal of an order naming an identifier no job declares (a template's names its
    /// instances), as the core words it.
    package func undeclared(_ identifier: String) -> ControlRefusal {
        lock.withLock { machine.undeclared(identifier) }
    }

    /// Delivers the expiration of the identifier's run in flight now (`SchedulerCore.expireNow`).
    package func expireNow(_ identifier: String) throws(ControlRefusal) {
        try feedControl(.expireNow(identifier: identifier))
    }

    /// Pauses a job, an instance or a template (`SchedulerCore.pause`); committed before this returns.
    package func pause(_ identifier: String) throws(ControlRefusal) {
        try feedControl(.pause(identifier: identifier))
    }

    /// Resumes what `pause` paused (`SchedulerCore.resume`); committed before this returns.
    package func resume(_ identifier: String) throws(ControlRefusal) {
        try feedControl(.resume(identifier: identifier))
    }

    /// The paused identifiers and since when, by identifier.
    package var paused: [(identifier: String, since: Instant)] {
        lock.withLock { machines.scheduler.paused.sorted { $0.key < $1.key }.map { ($0.key, $0.value) } }
    }

    /// The status report read from the runtime's store (nil without a store), under the lock.
    package func statusReport(runs: Int, days: Int) throws -> StatusReport? {
        try lock.withLock { () throws -> StatusReport? in
            guard let store else { return nil }
            return try StatusReport(store: store, runs: runs, days: days)
        }
    }

    /// `body` over the runtime's store under its lock (nil when it has none), for a reader that
    /// asks it several things at one instant (`why`).
    package func withStore<T>(_ body: ((any StateStoring)?) throws -> T) throws -> T {
        try lock.withLock { try body(store) }
    }

    /// The identifiers declared now, with their definitions.
    package var definitions: TaskDefinitions { lock.withLock { machines.scheduler.definitions } }

    /// The runtime's clock (the host's), for replies that say how long until something.
    package var now: Instant { clock() }

    /// An operator's order through the machine: a refusal commits nothing; a failed commit is
    /// reported as `.stopping` (the runtime stops on it).
    func feedControl(_ command: RuntimeMachine.OperatorCommand) throws(ControlRefusal) {
        let performed = perform(.order(command))
        if case let .refused(.order(refusal)) = performed.reply { throw refusal }
        if performed.notSaved != nil { throw .stopping }
    }
}
