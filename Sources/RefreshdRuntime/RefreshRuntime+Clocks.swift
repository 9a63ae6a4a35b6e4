import RefreshdCore

/// The host's clock reports: raw readings in, the runtime decides (`ClockStepDetector`) whether
/// the wall clock stepped or the machine slept, and tells the machines `.clockChanged`. Both
/// hosts report the same way, so the simulator runs the daemon's rule (its tolerance, and when
/// it is checked).
extension RefreshRuntime {
    /// The host's one wake-up fired (execution context); `clocks` were read when it fired. A
    /// wall clock that moved apart from the monotonic one by more than the tolerance since the
    /// last change (a step or resume no notice announced) is `.clockChanged` first, then the
    /// wake-up is `.timerFired` (`RuntimeMachine.wakeUp`).
    ///
    /// One event, one commit: the change and the firing at the reading's wall clock, under one
    /// lock hold (the hot path of a simulation: one lock and no second clock read per wake-up).
    package func timerFired(clocks: ClockReading) { perform(.wakeUp(clocks)) }

    /// The host learned that the wall clock was set (the timerfd's notice: a step, and since
    /// Linux 5.14 a resume); `clocks` were read then. Always a `.clockChanged`, measured against
    /// the offset before the change.
    package func clockWasSet(clocks: ClockReading) { perform(.clockSet(clocks)) }
}
