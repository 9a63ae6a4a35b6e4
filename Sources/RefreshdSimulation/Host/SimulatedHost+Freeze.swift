import RefreshdCore

// MARK: A loop blocked in a call

/// The libuv host's loop makes its runtime's store calls itself: a commit on a database that
/// answers nothing (a blackholed connection) blocks the loop until the call's bound, and the
/// shard's runtime can neither expire nor kill its runs meanwhile (issue 32). The cluster
/// simulation models it here: `freeze(until:)` when a call hangs, the thaw when it fails.
extension SimulatedHost {
    /// The loop is blocked in a call that returns at `instant` (the call's bound on a cut-off
    /// connection); its clock reads `instant` when the call returns. Until then it handles no
    /// event, no timer and no process end, and the runtime's orders to the host (signals, the
    /// group's kill, a results channel's close, a publication), the drains asked for and the
    /// bodies given to `performOnLoop` wait, in order, for the thaw; then what fell due is
    /// delivered, late. (A launch cannot wait: a process the runtime starts meanwhile starts.)
    package func freeze(until instant: Instant) {
        frozenUntil = max(frozenUntil ?? instant, instant)
        clock = max(clock, instant)
    }

    /// The call returned: what the loop owed runs now, at the call's end.
    func thaw() {
        frozenUntil = nil
        while !onLoop.isEmpty, frozenUntil == nil {
            onLoop.removeFirst()()
        }
    }

    /// Runs `body` on the loop: at once when it is free, at the thaw while a call blocks it
    /// (the libuv host's `performOnLoop`).
    package func performOnLoop(_ body: @escaping () -> Void) {
        if frozenUntil == nil { body() } else { onLoop.append(body) }
    }

    /// SIGKILL to the process group of every command run whose leader is alive, from outside the
    /// loop at `instant` (the libuv host's `killLiveGroups`: a node's fence while the shard's
    /// loop may be blocked). The leaders and their children die then; the runtime hears of each
    /// exit when its loop next runs. A holder outside the group lives on.
    package func killLiveGroups(at instant: Instant) {
        for runID in processes.keys.sorted() {
            guard var p = processes[runID], !p.exited, !p.killed else { continue }
            p.killed = true
            p.children.removeAll()
            p.endsAt = min(p.endsAt, instant)
            p.exit = .signaled(9)
            usages[runID]?.memoryLimitKills = 0
            processes[runID] = p
        }
    }
}
