import RefreshdCore
import RefreshdRuntime

/// The simulated host's faults and its modelled machine: conditions, clock steps and suspends,
/// stop signals, time passing with refreshd down, the processes still alive (moved out of
/// `SimulatedHost.swift` whole).
extension SimulatedHost {
    // MARK: Faults and the modelled machine

    /// Changes power and network. `noticed`: the system announces it (netlink), so a runtime
    /// watching them hears at once; otherwise (a container where uevents do not arrive) only the
    /// runtime's periodic re-read finds it.
    package func setConditions(_ new: Conditions, noticed: Bool = true) {
        conditions = new
        if noticed, watchingConditions { runtime?.send(.conditionsChanged(new)) }
    }

    /// Steps the wall clock (a manual set, NTP). `noticed`: the kernel's notice reaches the
    /// runtime at once (the timerfd); otherwise it sees the step at its next wake-up, if the
    /// step is over the tolerance. Running processes keep their remaining time (they run on
    /// the monotonic clock).
    package func stepClock(by delta: Duration, noticed: Bool = true) { jumpClock(by: delta, noticed: noticed) }

    /// The machine sleeps for `span`: nothing runs, no timer fires, processes are frozen, the
    /// monotonic clock stops. `noticed`: at resume the kernel's notice reaches the runtime at
    /// once (the timerfd, Linux 5.14 and later); otherwise (older kernels) the runtime sees the
    /// jump at its next wake-up, which comes `span` late (the timer waits on the monotonic clock).
    package func suspend(for span: Duration, noticed: Bool = true) { jumpClock(by: span, noticed: noticed) }

    /// Moves the wall clock by `delta` with nothing happening in between; the monotonic clock
    /// stays, so running processes keep their remaining time and the armed wake-up its delay.
    /// `noticed`: the runtime gets the clocks as the timerfd's notice would hand them.
    func jumpClock(by delta: Duration, noticed: Bool) {
        clock = clock + delta
        monotonicOrigin = monotonicOrigin + delta
        for (runID, var p) in processes {
            p.endsAt = p.endsAt + delta
            p.timed = p.timed.map { ($0.at + delta, $0.line) }
            p.holderCloses = p.holderCloses.map { $0 + delta }
            processes[runID] = p
        }
        for (runID, var a) in actionRuns {
            a.endsAt = a.endsAt + delta
            actionRuns[runID] = a
        }
        if let w = wakeUp { wakeUp = w + delta }
        real?.shift(by: delta)
        if noticed { runtime?.clockWasSet(clocks: readClocks()) }
    }

    /// refreshd was stopped (SIGSTOP, a long GC pause) and continues at `t` (issue 24's zombie):
    /// both clocks moved on (a pause stops no clock), its processes ran meanwhile, nothing was
    /// delivered. What fell due is delivered at the next step, late, at `t`.
    package func resume(at t: Instant) { clock = max(clock, t) }

    /// The virtual monotonic clock: virtual time passed, less the steps and suspends.
    package var monotonic: Duration { clock.duration(since: monotonicOrigin) }

    /// A stop signal (SIGTERM, SIGINT) reaches the modelled daemon, as the libuv host reports
    /// one: the runtime decides (graceful the first time, every run killed at once again).
    package func deliverStopSignal(_ name: String = "SIGTERM") { runtime?.stopSignalReceived(name) }

    /// Lets virtual time pass with refreshd down (between `crash()` or a stop and `start`).
    package func passTime(_ span: Duration) {
        precondition(runtime == nil || stopped, "passTime is for downtime; use advance(by:) while running")
        let end = clock + span
        for (runID, p) in processes where p.exited || p.endsAt <= end { _ = runID; processes[runID] = nil }
        for (runID, a) in actionRuns where a.endsAt <= end { _ = runID; actionRuns[runID] = nil }
        clock = end
    }

    /// Modelled processes alive now, each run's leader first (for tests: nothing may survive
    /// its run, no child its leader's exit).
    package var livingProcesses: [(runID: Int64, identifier: String, pid: Int32)] {
        processes.values.sorted { $0.order.runID < $1.order.runID }.flatMap { p in
            p.living.map { (p.order.runID, p.order.identifier, $0) }
        }
    }
}
