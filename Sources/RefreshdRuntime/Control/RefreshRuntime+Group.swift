import RefreshdCore

/// The changes and effects of a group of events, waiting for their one commit.
struct CommitGroup {
    var changes: [StateChange] = []
    var effects: [SchedulerEffect] = []
}

extension RefreshRuntime {
    /// Runs `body` (on the execution context) with the runtime's lock held, and commits every
    /// state change the events it feeds make in ONE transaction at its end, before any of their
    /// effects is carried out.
    ///
    /// The control socket handles a client's pipelined requests this way: a thousand submits on
    /// one connection cost one fsync, not a thousand. Commit-before-act holds for the group as
    /// for one event: nothing of any event in it acts before the commit, and when the commit
    /// fails nothing of any of them does (the runtime stops, as for one failed event), so the
    /// caller must not report any of them done before this returns, and reports them all not
    /// saved when `committed` is false. Reads of the store inside the group would not see the
    /// group's changes: end the group before one.
    ///
    /// Other threads wait for the lock while the group runs: keep it short (the socket bounds it
    /// to a few dozen requests).
    package func grouped<T>(_ body: () -> T) -> (value: T, committed: Bool) {
        precondition(host?.isOnExecutionContext ?? true, "grouped runs on the execution context")
        let (value, committed): (T, Bool) = lock.withLock {
            precondition(group == nil, "groups do not nest")
            startIfNeeded()
            group = CommitGroup()
            grouping = true
            let value = body()
            let committed = endGroup()
            grouping = false
            return (value, committed)
        }
        kick()
        return (value, committed)
    }

    /// Runs `body` (any thread) with the lock held and commits every state change of the events
    /// it feeds in ONE transaction at its end, before any of their effects is carried out: one
    /// transaction for one outside event (a config reload) however many machine events it
    /// takes. Inside an open group (`grouped`) it joins that group and commits with it.
    /// `committed` is false when the commit failed: then nothing of it acts (the runtime stops).
    func inOneTransaction<T>(_ body: () -> T) -> (value: T, committed: Bool) {
        let host = self.host
        let onContext = host?.isOnExecutionContext ?? true
        let result: (T, Bool) = lock.withLock {
            if group != nil { return (body(), true) }
            startIfNeeded()
            group = CommitGroup()
            // Off the execution context, drains only get scheduled: they wait for the lock.
            let wasGrouping = grouping
            if onContext { grouping = true }
            let value = body()
            let committed = endGroup()
            if onContext { grouping = wasGrouping }
            return (value, committed)
        }
        kick(host)
        return result
    }

    /// Under `lock`: commits the open group's changes in one transaction and queues its effects,
    /// or fails the store with all of them dropped. True when committed (or nothing to commit).
    private func endGroup() -> Bool {
        guard let finished = group else { return true }
        group = nil
        if !finished.changes.isEmpty, let store, storeFailure == nil {
            do {
                try store.apply(finished.changes)
                transactions += 1
            } catch {
                failStore("\(error)", dropping: finished.effects)
                return false
            }
        }
        outbox.append(contentsOf: finished.effects)
        return true
    }
}
