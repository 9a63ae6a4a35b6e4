import RefreshdCore
import RefreshdRuntime

/// What a modelled command or built-in action does on the simulated host: the values tests and
/// the simulator hand it (`behaviour`, `actionBehaviour`).
extension SimulatedHost {
    /// How a modelled command behaves.
    package struct Behaviour: Sendable, Hashable {
        /// How long it runs if nothing stops it.
        package var duration: Duration
        /// How it ends on its own.
        package var exit: RunExit
        /// Whether it ignores the expiration (SIGTERM) and must be killed after the grace.
        package var ignoresTerminate: Bool
        /// Lines it prints at start (stdout), through the runtime's output rate limit as the
        /// libuv host's reads are (a flood is many lines here).
        package var output: [String]
        /// Lines it writes to its results channel just before it exits, read as the libuv host
        /// reads fd 3: through the runtime's cap (`ResultsChannels`), each line end included.
        package var results: [String]
        /// It cannot be started (a missing program): the text says why.
        package var startFailure: String?
        /// Lines it writes to its results channel while it runs, at offsets from its start
        /// (activity events, explicit reloads): handed to `runtime.runResultLine` at those
        /// virtual instants, as the libuv host hands each complete line. Lines due after the
        /// process ended (expired, killed) are never written.
        package var timedResults: [TimedLine]

        /// Background processes it leaves in its process group (they inherit its results
        /// channel): alive until the group is killed, which the runtime orders at the leader's
        /// exit, so the channel closes then.
        package var groupChildren: Int
        /// A process outside its group (a grandchild in a session of its own) that inherited
        /// its results channel and holds it open after the leader's exit (nil: none).
        package var resultsHolder: ResultsHolder?
        /// The most memory it uses, in bytes (nil: not modelled): over its job's `limits.memory`,
        /// the limit kills it (SIGKILL at its end, reported as a memory-limit kill).
        package var memoryBytes: Int64?

        package init(duration: Duration = .milliseconds(10), exit: RunExit = .exited(0),
                    ignoresTerminate: Bool = false, output: [String] = [], results: [String] = [],
                    startFailure: String? = nil, timedResults: [TimedLine] = [], groupChildren: Int = 0,
                    resultsHolder: ResultsHolder? = nil, memoryBytes: Int64? = nil) {
            self.memoryBytes = memoryBytes
            self.duration = duration
            self.exit = exit
            self.ignoresTerminate = ignoresTerminate
            self.output = output
            self.results = results
            self.startFailure = startFailure
            self.timedResults = timedResults
            self.groupChildren = groupChildren
            self.resultsHolder = resultsHolder
        }

        /// A quick success: what a command job is without a model.
        package static let quickSuccess = Behaviour()
    }

    /// How long a process outside a run's group keeps the run's results channel open after the
    /// leader's exit.
    package enum ResultsHolder: Sendable, Hashable {
        /// It closes it (and exits) this long after the exit.
        case closesAfter(Duration)
        /// It never closes it: it lives until the sweep at the run's end kills it.
        case never
    }

    /// A results line written `offset` after a modelled process starts.
    package struct TimedLine: Sendable, Hashable {
        package var offset: Duration
        package var line: String

        package init(offset: Duration, line: String) {
            self.offset = offset
            self.line = line
        }
    }

    /// How a built-in action behaves in virtual time: what it takes and what it returns, as
    /// `Behaviour` is for a command. The host runs it as production does: an action with a
    /// `worker` as a modelled worker process (the expiration is its SIGTERM, the end of the grace
    /// its SIGKILL; its log lines read from its stdout, its results from fd 3, its exit status),
    /// a light one as a body in refreshd's process (it sees `isExpired`; at the end of the grace
    /// it is abandoned and runs on, its late return ignored by the runtime).
    package struct ActionBehaviour: Sendable, Hashable {
        /// How long it runs if nothing stops it.
        package var duration: Duration
        /// What it returns at the end of `duration`; nil runs the action's own `body` at the
        /// start and returns that (a real action in a test, or under `simulate --exec`).
        package var result: ActionResult?
        /// What it returns when it heeds the expiration (at once: it looks at `isExpired`).
        package var whenExpired: ActionResult
        /// It does not look at the expiration (a decode that never checks, a worker stuck in a
        /// read): it runs on until the grace ends, when its worker is killed or its body abandoned.
        package var ignoresExpiration: Bool
        /// Its worker process dies of this signal at the end of `duration` instead of returning
        /// (an allocation past its memory limit, a decoder's crash). An in-process action cannot
        /// die alone (it would take refreshd with it): there it returns a failure instead.
        package var crashSignal: Int32?

        package init(duration: Duration = .zero, result: ActionResult? = nil,
                    whenExpired: ActionResult = ActionResult(success: false, log: ["stopped at its expiration"]),
                    ignoresExpiration: Bool = false, crashSignal: Int32? = nil) {
            self.duration = duration
            self.result = result
            self.whenExpired = whenExpired
            self.ignoresExpiration = ignoresExpiration
            self.crashSignal = crashSignal
        }
    }
}
