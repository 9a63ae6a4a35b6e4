import RefreshdCore

/// What the runtime needs from the world: one wake-up timer, clocks, processes, conditions.
///
/// Two hosts implement it. The libuv host (`RefreshScheduler` in the `Refreshd` module) does it
/// for real: a `uv_timer_t`, `posix_spawn` in a new session, signals to process groups, netlink.
/// `SimulatedHost` does it in virtual time with modelled processes. Every rule that a user can
/// observe lives in the runtime and the machines, never in a host, so the simulator tests the
/// program that runs in production.
///
/// The runtime calls these methods on the host's execution context (the loop thread), never
/// with its own lock held. The host reports back through `RefreshRuntime.timerFired(clocks:)`
/// and `clockWasSet(clocks:)` (with raw clock readings: the runtime decides what a jump is),
/// `send(.conditionsChanged)` and the `run…` callbacks (output, exit).
package protocol RuntimeHost: AnyObject {
    /// The wall clock now.
    func now() -> Instant
    /// The wall and monotonic clocks now, raw (the runtime's `ClockStepDetector` decides what a
    /// difference between readings means).
    func readClocks() -> ClockReading
    /// Arms the single wake-up for `at`, replacing any earlier arming; nil disarms it. The host
    /// waits on its monotonic clock (as a libuv timer does), and when the wake-up fires it calls
    /// `RefreshRuntime.timerFired(clocks:)` with the clocks read then.
    func armWakeUp(at: Instant?)
    /// Starts a command run in its own process group with the environment `environment()` builds
    /// (built only by a host that needs it). On success the host reports what it reads on the
    /// run's results channel (fd 3), the channel's close and the leader's exit
    /// (`RefreshRuntime+Results`); the runtime decides the rest, and ends the run.
    func startCommand(_ order: LaunchOrder, _ job: CommandJob, environment: () -> [String]) -> CommandStart
    /// Sends a signal to a command run's whole process group.
    func signal(runID: Int64, _ signal: RunSignal)
    /// The run's leader has exited (`RefreshRuntime.runLeaderExited`): SIGKILL to everything left
    /// in its process group (and cgroup), now, so no straggler outlives it.
    func killRunGroup(runID: Int64)
    /// Stops reading the run's results channel and closes it: the runtime's grace after the
    /// leader's exit is over and something outside the group still holds it open.
    func closeResults(runID: Int64)
    /// Runs a built-in action off the execution context; reports `runEnded` when it returns.
    func startAction(_ order: LaunchOrder, _ action: BuiltInAction, context: ActionContext)
    /// Starts or stops watching machine conditions: on, the host reads them at once and then
    /// sends `.conditionsChanged` with a fresh reading whenever the system announces a change
    /// (netlink). The periodic re-read is the runtime's deadline (`readConditions`), not the host's.
    func watchConditions(_ on: Bool)
    /// Reads power and network now and sends `.conditionsChanged` with the reading (the runtime's
    /// periodic re-read while something waits on them).
    func readConditions()
    /// Kills whatever is left of runs that were in flight when a previous runtime on this state
    /// died (at the restore). Returns each run that had leftovers with the pids killed.
    func reapLeftovers(of runs: [RunRecord], instance: String) -> [(RunRecord, [Int32])]
    /// Kills the notifier commands (and their sessions) a previous runtime on this state left
    /// running when it died: their notifications are still held and will be sent again, so
    /// nothing of theirs may live on. Called once, at the restore. Returns the pids killed.
    /// By default none: a host that runs no notifier processes has none to find.
    func reapNotifierLeftovers(instance: String) -> [Int32]
    /// Kills whatever a command run left running at its end (its leader has exited), then calls
    /// `done` on the execution context with the pids killed; the runtime commits the run's end
    /// only then. The host may do the work off the execution context (the libuv host reads
    /// /proc on a worker thread). By default: `reapLeftovers` of the run, at once.
    func sweepRun(_ run: RunRecord, instance: String, done: @escaping @Sendable ([Int32]) -> Void)
    /// `sweepRun` done at once, for a host whose sweep needs no waiting (the simulated host): the
    /// pids killed; nil (the default) when the host sweeps off the execution context. Saves the
    /// runtime two closures and their allocations at every command run's end.
    func sweepRunNow(_ run: RunRecord, instance: String) -> [Int32]?
    /// What a command run used (CPU time, peak memory, memory-limit kills: issue 35), measured
    /// by its sweep; called once, after `sweepRun`'s `done` (or `sweepRunNow`), and forgotten
    /// by the host then. By default nothing is measured.
    func takeUsage(runID: Int64) -> RunUsage
    /// Effects are queued and the caller is not on the execution context: run `drain()` there.
    func scheduleDrain()
    /// Whether the current thread is the execution context.
    var isOnExecutionContext: Bool { get }
    /// Writes (or removes) a file in `container` (the shared container), atomically, in the order
    /// published. Only called for contained paths (`Publication.isContained`) and when a container
    /// is configured: the runtime reports the other publications as failed itself.
    func publish(_ publication: Publication, in container: String)
    /// The runtime has stopped: release timers and watches so the host's loop can end.
    func runtimeStopped()
    /// Makes one attempt to deliver a failure or recovery notification (its record is already
    /// committed): run its command or POST to its webhook, within its timeout, never blocking
    /// the execution context; then `done` with the outcome, from any thread. By default a host
    /// has no way to deliver: the attempt fails (and is retried, then given up).
    func deliver(_ notification: RunNotification, done: @escaping @Sendable (NotificationOutcome) -> Void)
}

extension RuntimeHost {
    package func deliver(_ notification: RunNotification, done: @escaping @Sendable (NotificationOutcome) -> Void) {
        done(.failed("this host delivers no notifications"))
    }

    package func sweepRunNow(_ run: RunRecord, instance: String) -> [Int32]? { nil }

    package func takeUsage(runID: Int64) -> RunUsage { .none }

    package func reapNotifierLeftovers(instance: String) -> [Int32] { [] }

    package func sweepRun(_ run: RunRecord, instance: String, done: @escaping @Sendable ([Int32]) -> Void) {
        done(reapLeftovers(of: [run], instance: instance).first?.1 ?? [])
    }
}

/// The result of starting a command.
package enum CommandStart: Sendable, Hashable {
    /// The process exists: its group (= its pid, a session leader) and its start time in clock
    /// ticks since boot, when the host knows it.
    case started(processGroup: Int32, startTicks: UInt64?)
    /// It could not be started; the text says why.
    case failed(String)
}

/// Signals the runtime sends to a run's process group.
package enum RunSignal: Sendable, Hashable {
    /// The expiration (SIGTERM).
    case terminate
    /// The end of the grace period (SIGKILL).
    case kill
}
