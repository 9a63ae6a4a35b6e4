/// Everything that can happen to the scheduler besides a submit (which can fail, and so has its
/// own throwing entry point). The shell and the simulator feed these to `SchedulerCore.handle`.
public enum SchedulerEvent: Sendable, Hashable {
    /// The armed wake-up fired (or the shell wants due work re-examined).
    case timerFired
    case cancel(identifier: String)
    case cancelAll(namespace: String?)
    /// The work of a run ended; the core decides the outcome.
    case runFinished(runID: Int64, exit: RunExit)
    case conditionsChanged(Conditions)
    /// The wall clock was stepped (either way), or the machine resumed from suspend. `expected`
    /// is what the wall clock would read without the change (the shell keeps it from the
    /// monotonic clock). Calendar slots in (expected, now] were jumped or slept over and follow
    /// their job's `MissedPolicy`; the wake-up is re-armed against the new clock.
    case clockChanged(expected: Instant)
    /// Stop: no new launches; running work gets its expiration and grace.
    case shutdown
}
