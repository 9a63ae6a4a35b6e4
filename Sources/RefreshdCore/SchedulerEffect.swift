/// What the core asks its shell to do, in order.
///
/// `persist` effects come before the effects that depend on them: a launch is recorded before the
/// process exists, so a crash in between is seen at restart as an interrupted run.
package enum SchedulerEffect: Sendable, Hashable {
    /// Arm the single wake-up timer for this instant (replacing any earlier arming).
    case armTimer(at: Instant)
    /// Nothing is due: stop the timer.
    case disarmTimer
    case persist(StateChange)
    case launch(LaunchOrder)
    /// Deliver the expiration: SIGTERM to a command's process group, or the in-process handler.
    case expire(runID: Int64)
    /// The grace period is over: SIGKILL the process group, or abandon an in-process task.
    case kill(runID: Int64)
    /// Start or stop re-checking machine conditions (something waits on them, or nothing does).
    case watchConditions(Bool)
    /// Read machine conditions now and report them (`conditionsChanged`): the runtime's periodic
    /// re-read while the core watches them (emitted by the runtime's composition, not the core).
    case readConditions
    case log(LogMessage)
    /// Write (or remove) a small file in the shared container, atomically.
    case publish(Publication)
    /// A run ended with this outcome and these results: for the machines beside the core (a
    /// widget provider's reload, a job's live activity). Emitted only when
    /// `SchedulerConfiguration.emitsRunEnds` is on; the runtime's composition consumes it.
    case ended(runID: Int64, identifier: String, outcome: Outcome, results: [String])
    /// Deliver a failure or recovery notification (`NotificationMachine`): its record is
    /// committed before this is acted on; the host reports the attempt back as an event.
    case notify(RunNotification)
    /// Shutdown is complete: no run is in flight and nothing more will launch.
    case stopped
    /// Kill a run's process group (and cgroup) now: its leader has exited (`ResultsChannels`).
    case killGroup(runID: Int64)
    /// Stop reading a run's results channel and close it: the grace after its leader's exit is over.
    case closeResults(runID: Int64)
    /// A run's processes are done: its leader's exit and the raw lines of its results channel.
    /// The engine sweeps what they left and hands the end back (`RuntimeInput.workEnded`).
    case processEnded(runID: Int64, exit: RunExit, results: [String])
}
