import RefreshdCore

/// Real commands on the simulated host (`refreshd simulate --exec`). The libuv host's process
/// code runs them (`ExecutedCommands`, module `Refreshd`); the simulated host (module
/// `RefreshdSimulation`, which `Refreshd` does not see: it reaches it as a `RealCommandsHost`)
/// stays their host as it is the models': it reports each real event (a read of
/// output, results bytes, the leader's exit, the results channel's close) to the runtime at its
/// instant, and carries out the runtime's orders (a signal to the group, the group's kill at
/// the exit, the channel's close, the sweep) on the real processes. It has no timer, limit or
/// rule of its own: the runtime decides everything once, as under the daemon.
///
/// While a command runs, virtual time runs with real time: an event `d` of real time after
/// virtual time began to run at `v` (the first spawn) happens at `v + d` (`virtualNow`), and the
/// host's one timer (the runtime's wake-up, or the next modelled or scenario event) is waited
/// for in real time (`wait(until:from:)`). While none runs, virtual time jumps from event to
/// event as for models. A step of the clock or a suspend moves the commands' time with it
/// (`shift(by:)`), and so does a jump of the clock ahead of it (a downtime, a pause).
package protocol RealCommands: AnyObject {
    /// Spawns the command in a session of its own with `environment`; reports its events
    /// through `host.reportReal(instance:_:)` as they happen.
    func start(_ order: LaunchOrder, _ job: CommandJob, environment: [String], instance: String,
               host: any RealCommandsHost) -> CommandStart
    /// Sends `signal` to the run's process group.
    func signal(runID: Int64, _ signal: RunSignal)
    /// SIGKILL to the run's process group (the runtime's order at the leader's exit).
    func killGroup(runID: Int64)
    /// Stops reading the run's results channel and closes it.
    func closeResults(runID: Int64)
    /// Kills what an ended run left (its session, the processes naming it); the pids, less the
    /// group's own (already killed at the exit).
    func sweep(_ run: RunRecord, instance: String) -> [Int32]
    /// Kills what the runs of a dead runtime left; each run with leftovers and their pids.
    func reapLeftovers(of runs: [RunRecord], instance: String) -> [(RunRecord, [Int32])]
    /// The virtual instant now while a command runs; nil while none does.
    var virtualNow: Instant? { get }
    /// Waits in real time until `instant` comes in virtual time (nil: no bound) or a command
    /// reports an event, whichever is first; whether one reported (false at once when none
    /// runs). `clock` is the host's clock: ahead of `virtualNow`, the commands' time catches up.
    func wait(until instant: Instant?, from clock: Instant) -> Bool
    /// The wall clock was stepped by `delta` (or the machine slept): the commands' time too.
    func shift(by delta: Duration)
}

/// What real commands see of the simulated host: its virtual clock, and the runtime to report
/// an event to at its instant (`SimulatedHost` in `RefreshdSimulation`).
package protocol RealCommandsHost: AnyObject {
    /// The host's virtual clock now.
    var clock: Instant { get }
    /// A real command's event, reported as it happens: the clock moves to its instant, and the
    /// runtime that started the run (no other: one started after a crash) hears of it.
    func reportReal<T>(instance: String, _ report: (RefreshRuntime) -> T) -> T?
}
