/// Everything that can happen to the runtime, as one value (issue 37): what the API, an
/// operator and the job files ask, and what a host reports of time, processes and channels.
/// `RuntimeMachine.handle(_:at:into:)` takes one and appends its effects; the engine has one
/// path for all of them (lock, handle, commit, act), so no input has a sequence of its own.
/// The rare inputs with large payloads are `indirect`: the value is copied on every input, and
/// a job spec inline made it 937 bytes (8.2 µs a simulated run against 6.5 µs).
package enum RuntimeInput {
    // MARK: Asked from outside (the API, `refreshd ctl`, job files)

    /// A scheduler event: a declaration, a cancel, a shutdown, a run's end, conditions...
    case event(SchedulerEvent)
    /// A timeline event (a widget declared, an explicit reload).
    indirect case timeline(TimelineEvent)
    /// An activity event (ActivityKit's request, update, end; new settings). May be refused.
    indirect case activity(ActivityEvent)
    /// A request, replacing a pending one with the same identifier. May be refused.
    case submit(TaskRequest)
    /// A declared identifier's first request: its schedule's next slot, or now. May be refused.
    case submitFirst(identifier: String)
    /// An operator's submit (`refreshd ctl submit`): the job's own request, due at `earliest`
    /// or now, recorded as an order for the replay. May be refused.
    case operatorSubmit(identifier: String, earliest: Instant?)
    /// A reload of the job files committed its steps: which jobs it added, changed or removed,
    /// recorded for the replay in the reload's transaction.
    case reloaded(changed: [String])
    /// An operator's order (`refreshd ctl run`, `expire`, `pause`, `resume`). May be refused.
    case order(RuntimeMachine.OperatorCommand)
    /// A loaded job's first request as `SeedPlan` says. May be refused.
    indirect case seed(JobSpec, replacing: Bool)
    /// An instance added, its widget declared with it. May be refused.
    case addInstance(InstanceRecord)
    /// Instances added in one event, each checked on its own (a refused one changes nothing).
    case addInstances([InstanceRecord])
    /// An instance removed: its request cancelled, its activities ended. May be refused.
    case removeInstance(template: String, key: String)
    /// A template's `instances:` file applied as its complete set.
    case setInstances(template: String, [InstanceRecord])
    /// Instance lines another shard's sync run sent this one.
    case instanceLines([InstanceLines])
    /// Stop gracefully (the API, a first stop signal): running work gets its expiration and
    /// grace, once the sweeps under way are done.
    case stop
    /// A stop signal (SIGTERM, SIGINT) reached the host: the first stops gracefully, another
    /// kills every run now.
    case stopSignal(name: String)
    /// Stop without waiting for the graces: every run in flight killed at once.
    case stopImmediately(reason: String)

    // MARK: Reported by the host

    /// The one wake-up fired, with the clocks read then.
    case wakeUp(ClockReading)
    /// The kernel said the wall clock was set, with the clocks read then.
    case clockSet(ClockReading)
    /// A launch is about to start with what the registry holds for it (nil: nothing), after a
    /// commit failed or not (`storeFailed`: then it never starts).
    case launching(LaunchOrder, RuntimeMachine.LaunchTarget?, storeFailed: Bool)
    /// The host started a command run's leader.
    case processStarted(LaunchOrder, processGroup: Int32, startTicks: UInt64?)
    /// The host could not start a run (its executable is missing, say).
    case startFailed(runID: Int64, reason: String)
    /// A command run's leftovers are being swept before its end is handled.
    case sweepStarted(runID: Int64)
    /// A run's work ended with these raw results lines and what the host measured of it; for a
    /// command, after its sweep, which killed `swept` leftovers (nil: no sweep).
    case workEnded(LaunchOrder?, runID: Int64, exit: RunExit, results: [String], usage: RunUsage, swept: Int?)
    /// Every writer of a run's results channel closed it.
    case resultsClosed(runID: Int64)
    /// A run's leader exited (`resultsClosed`: its channel closed with it).
    case leaderExited(runID: Int64, exit: RunExit, resultsClosed: Bool)
    /// One delivery attempt of a notification ended.
    case notification(id: String, NotificationOutcome)
    /// Nothing happened but the live lines taken since the last input are due (a drain).
    case liveLines

    // MARK: A run's streams, read as they come (nothing committed, nothing drained)

    /// Whether the run's output window is full (a host may then count a chunk unsplit).
    case outputWindow(LaunchOrder)
    /// Complete lines a run printed: each that fits the window is logged, the rest counted.
    case output(LaunchOrder, lines: [String])
    /// Output a host read and dropped unsplit because the window was full.
    case outputSkipped(LaunchOrder, bytes: Int, lineEnds: Int)
    /// Bytes a run wrote to its results channel (valid for the call only).
    case resultsRead(LaunchOrder, UnsafeRawBufferPointer)
    /// One complete results line, offered as a live line.
    case resultLine(LaunchOrder, String)
    /// A run's work stopped (any way): its channel and rates are forgotten.
    case workStopped(runID: Int64)

    /// A read of a run's streams, or a note of the engine's own (a sweep begun, a run's work
    /// stopped): it changes no state, so the engine neither restores, applies live lines,
    /// commits nor drains for it (a burst of reads costs one commit, at the next drain).
    package var commitsNothing: Bool {
        switch self {
        case .outputWindow, .output, .outputSkipped, .resultsRead, .resultLine, .workStopped, .sweepStarted: true
        default: false
        }
    }

    /// Whether the saved state is restored before this input: declarations come first (a
    /// restore needs them), and what a host reports of a run exists only after the restore.
    package var restoresFirst: Bool {
        switch self {
        case .event(.declare), .event(.declareTemplate): false
        case .event: true
        case .timeline, .launching, .processStarted, .startFailed, .sweepStarted, .workEnded, .resultsClosed,
             .leaderExited, .notification, .liveLines, .outputWindow, .output, .outputSkipped, .resultsRead,
             .resultLine, .workStopped:
            false
        case .activity, .submit, .submitFirst, .operatorSubmit, .reloaded, .order, .seed, .addInstance, .addInstances, .removeInstance, .setInstances,
             .instanceLines, .stop, .stopSignal, .stopImmediately, .wakeUp, .clockSet:
            true
        }
    }
}

/// What an input answers besides its effects: a refusal (nothing changed), or what the caller
/// asked to know.
package enum RuntimeReply {
    case done
    /// The input was refused: it changed nothing and has no effects.
    case refused(RuntimeRefusal)
    /// `.launching`: false when the run cannot start (its end is among the effects).
    case starts(Bool)
    /// `.seed`: false when the plan keeps what there is.
    case seeded(Bool)
    /// `.addInstances`: the refused records with why (nothing of them changed).
    case instancesRefused([(record: InstanceRecord, error: InstanceError)])
    /// `.outputWindow`: whether it is full, and the drops of a window that ended (to log now).
    case outputWindow(full: Bool, dropped: RuntimeMachine.OutputDrop?)
    /// `.output`: the lines to log now, in order.
    case output(RuntimeMachine.OutputAction)
    /// `.resultsRead`, `.resultLine`: whether a line was taken, and whether it is the first
    /// waiting for the next drain (the host is to schedule one).
    case liveLine(taken: Bool, first: Bool)
    /// `.workStopped`: what the run's last output window dropped, to log now.
    case dropped(RuntimeMachine.OutputDrop?)
}

/// Why an input was refused, in the words of the machine that refused it.
package enum RuntimeRefusal: Error, Sendable {
    case scheduler(SchedulerError)
    case order(ControlRefusal)
    case activity(ActivityError)
    case instance(InstanceError)
}
