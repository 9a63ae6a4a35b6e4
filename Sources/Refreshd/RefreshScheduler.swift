import CLibUV
import Dispatch
import Glibc
import Logging
import RefreshdCore
import RefreshdRuntime
import RefreshdStore
import Synchronization

/// A BGTaskScheduler for Linux: declare identifiers with handlers, submit requests with an
/// earliest begin date, and let the libuv loop launch, expire and record the runs.
///
/// The scheduling rules live in `SchedulerCore` (deterministic, no I/O); this class is the
/// imperative shell around it. It holds exactly one armed `uv_timer_t`, for the core's earliest
/// deadline, spawns command jobs as `posix_spawn` does, each born in its run's cgroup (`CommandProcess`), and commits every state change to SQLite before
/// acting on it. Public methods are safe from any thread; the loop runs on the thread that calls
/// `run()`, and handlers are called there.
///
/// ```swift
/// let scheduler = try RefreshScheduler(options: .init(stateDirectory: ".refreshd"))
/// scheduler.register(TaskDefinition(identifier: "com.example.refresh")) { task in
///     task.expirationHandler = { /* stop quickly */ }
///     task.setTaskCompleted(success: true)
/// }
/// try scheduler.submit(TaskRequest(identifier: "com.example.refresh"))
/// try scheduler.run()  // until stop(), SIGTERM or SIGINT
/// ```
///
/// `Examples/Embedding` is a complete program built on this API (the suite builds and runs it).
/// Job files, the control socket and metrics are `RefreshdDaemon`'s, not this library's.
public final class RefreshScheduler: @unchecked Sendable {
    /// How the scheduler is set up.
    public struct Options: Sendable {
        /// Where state.sqlite lives; nil keeps everything in memory (nothing survives a restart).
        public var stateDirectory: String?
        /// The directory all jobs share (`REFRESH_SHARED_CONTAINER`); default `<state>/shared`.
        public var sharedContainer: String?
        /// The limits the scheduler enforces (concurrent runs, pending requests per namespace).
        public var configuration: SchedulerConfiguration
        /// Install SIGTERM/SIGINT (graceful stop) and SIGHUP handlers. For daemons, not libraries.
        public var handleSignals: Bool
        /// Where external power and network state are read (sysfs and procfs by default).
        public var conditionsProbe: ConditionsProbe
        /// How often conditions are re-read while a request waits on them (besides netlink
        /// events): the runtime's `conditionsReread` deadline, handed to it.
        public var conditionsFallbackInterval: Duration
        /// Where the scheduler logs, one line per event.
        public var logger: Logger
        /// The wall clock the shell reads (the core never reads one).
        public var clock: WallClockSource
        /// Put each command run in a cgroup of its own where the system allows one (see
        /// `RunCgroups`), so that no process of a run outlives it however it detached.
        public var runCgroups: Bool
        /// This process is the scheduler's alone (the daemon): every child is a run's. Then in a
        /// delegated cgroup subtree the process moves into its `supervisor/` leaf and enables
        /// controllers for the runs, and where no cgroup is used it becomes a child subreaper
        /// (it reaps every dead child libuv does not wait for). Either way each command is born
        /// in its run's cgroup when it has one (`refreshd_spawn`).
        public var ownsProcess: Bool
        /// The code of the built-in actions job specs name (`ActionBinding`); none by default, so
        /// an embedder that declares only handlers and commands needs nothing more.
        package var actions: ActionBinding = .none

        /// Options for an embedded scheduler by default: in memory, no signal handlers, the system clock.
        public init(stateDirectory: String? = nil, sharedContainer: String? = nil,
                    configuration: SchedulerConfiguration = SchedulerConfiguration(),
                    handleSignals: Bool = false, conditionsProbe: ConditionsProbe = ConditionsProbe(),
                    conditionsFallbackInterval: Duration = ConditionsReread.defaultInterval,
                    logger: Logger = Logger(label: "refreshd"), clock: WallClockSource = .system,
                    runCgroups: Bool = true, ownsProcess: Bool = false) {
            self.clock = clock
            self.runCgroups = runCgroups
            self.ownsProcess = ownsProcess
            self.stateDirectory = stateDirectory
            self.sharedContainer = sharedContainer
            self.configuration = configuration
            self.handleSignals = handleSignals
            self.conditionsProbe = conditionsProbe
            self.conditionsFallbackInterval = conditionsFallbackInterval
            self.logger = logger
        }
    }

    let options: Options
    let logger: Logger
    /// The host-independent runtime: machines, store, commit-before-act, restore, seeding.
    package let runtime: RefreshRuntime
    let lock = Lock()
    // Guarded by `lock`.
    var asyncOpen = true
    var clockSetInjected = false
    /// Closures queued by `performOnLoop`.
    var loopTasks: [@Sendable () -> Void] = []
    // Loop thread only.
    package let loop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
    let timer = UnsafeMutablePointer<uv_timer_t>.allocate(capacity: 1)
    let async = UnsafeMutablePointer<uv_async_t>.allocate(capacity: 1)
    var signals: [UnsafeMutablePointer<uv_signal_t>] = []
    /// SIGCHLD for every command, notifier and worker of this loop (made at the first need, on the loop).
    var childWatchMade: ChildWatch?
    var childWatch: ChildWatch {
        if let childWatchMade { return childWatchMade }
        let made = ChildWatch(loop: loop)
        childWatchMade = made
        return made
    }
    var processes: [Int64: CommandProcess] = [:]
    /// Built-in actions' worker processes, by run, until their exit and results are read.
    var workers: [Int64: CommandProcess] = [:]
    var actions: [Int64: ActionWork] = [:]
    /// Writes publications to the shared container in order, off the loop thread.
    let publisher = DispatchQueue(label: "refreshd.publish")
    /// Per path, the number of the latest publication queued (see `publish`).
    let publicationLock = Lock()
    var publicationGenerations: [String: Int] = [:]
    /// Told of every publication as it is made (loop thread): the control socket pushes fresh
    /// widget and activity snapshots to watchers on it (an activity update logs nothing).
    package var publicationListeners: [(Publication) -> Void] = []
    /// Asked right before each publication's rename into the shared container (publisher
    /// queue): a cluster node's shard host answers whether its lease still holds, so a node
    /// paused or cut off mid-publication writes nothing once its lease has lapsed (issue 32).
    /// Nil: always written (one machine).
    package var publicationGate: (@Sendable () -> Bool)?
    var monitor: ConditionsMonitor?
    var clockWatch: ClockWatch?
    package var directoryWatches: [DirectoryWatch] = []
    var timers: [OneShotTimer] = []
    var loopThread: pthread_t?
    var closing = false
    var signalsPrepared = false
    // Process tracking (loop thread; see RefreshScheduler+Processes).
    var cgroups: RunCgroups?
    /// Why no run cgroup is used, when none is.
    var trackingNote: String?
    var subreaping = false
    /// Each command run's cgroup, from its spawn to its sweep.
    var runCgroups: [Int64: String] = [:]
    /// The run cgroups kept for reuse (nil without cgroups), and each run's as held, with its
    /// descriptors and counters (`RunCgroupPool`).
    var cgroupPool: RunCgroupPool?
    var heldCgroups: [Int64: RunCgroup] = [:]
    /// The runs whose cgroup was empty at their leader's exit: nothing can enter it since
    /// (only a member forks into it), so their end reads no `cgroup.procs` again.
    var emptyAtExit: Set<Int64> = []
    /// The runs whose command was born in its cgroup (`refreshd_spawn`): their cgroup holds
    /// every process they started, so their end needs no /proc sweep.
    var bornInCgroup: Set<Int64> = []
    /// Processes killed in a run's cgroup when its leader exited, reported with its sweep.
    var killedAtExit: [Int64: Set<Int32>] = [:]
    /// The fork counter read by the latest sweep before each command run's spawn, until its
    /// sweep (`SweepWindow`).
    var forksBeforeSpawn: [Int64: Int64] = [:]
    /// What each swept run used (read from its cgroup at its sweep), until the runtime takes it.
    var usages: [Int64: RunUsage] = [:]
    /// The process group of each run whose leader has exited (already sent SIGKILL), until its sweep.
    var exitedGroups: [Int64: Int32] = [:]
    var staleCgroupsSwept = false
    /// Hands the queued sweeps to the worker at the next loop turn (`sweepEndedRun`).
    var sweepDispatch: OneShotTimer?
    var cgroupsToRemove: [(path: String, tries: Int)] = []
    var cgroupRemovalTimer: OneShotTimer?
    var cgroupRemovalArmed = false
    /// The newest run this host started a command for.
    var newestRunID: Int64 = 0
    /// Sends a webhook notification (the daemon's HTTP client, issue 25); nil: webhooks fail.
    /// Set before the loop runs; called on the loop thread, must not block it.
    package var webhookSender: (@Sendable (RunNotification, @escaping @Sendable (NotificationOutcome) -> Void) -> Void)?
    /// Notifier commands running (loop thread), by pid: their groups are killed when refreshd stops.
    var notifierProcesses: [Int32: CommandProcess] = [:]
    /// Where the /proc sweep at each run's end runs, off the loop, and the runs waiting for it.
    let sweeper = DispatchQueue(label: "refreshd.sweep")
    let sweeps = Mutex(SweepQueue())
    /// The process group of every command run whose leader is alive, readable from any thread:
    /// a cluster node kills them when it fences the shard, even while this loop is blocked in a
    /// commit (issue 24).
    let liveGroups = Mutex<Set<Int32>>([])
    private let directoryLock: StateDirectoryLock?
    private var store: StateStore?
    let sharedContainer: String?

    /// Called on the loop thread when SIGHUP arrives (the daemon reloads its config).
    public var onHangup: (@Sendable () -> Void)? {
        get { lock.withLock { hangup } }
        set { lock.withLock { hangup = newValue } }
    }
    private var hangup: (@Sendable () -> Void)?

    /// Opens the state directory (if any) and prepares the loop. Nothing runs until `run()`.
    ///
    /// - Throws: `StoreError` when the state directory is locked by another refreshd, or its
    ///   state file is corrupt or unreadable (it is never replaced).
    public convenience init(options: Options) throws {
        let sharedContainer = options.sharedContainer ?? options.stateDirectory.map { "\($0)/shared" }
        var opened: StateStore?
        var directoryLock: StateDirectoryLock?
        if let directory = options.stateDirectory {
            directoryLock = try StateDirectoryLock.acquire(directory: directory)
            opened = try StateStore.open(directory: directory)
        }
        try self.init(options: options, store: opened, directoryLock: directoryLock, runtimeOptions: .init(
            configuration: options.configuration, sharedContainer: sharedContainer, logger: options.logger,
            conditionsReread: options.conditionsFallbackInterval,
            actions: options.actions))
    }

    /// A host over a store it is given (a cluster shard's fenced store, issue 24) with the
    /// runtime's options as given (the node's `onFenced`, no retry of interrupted runs): no
    /// state directory, no lock, and no signal handlers (the node handles the daemon's signals).
    /// Several of these run at once in one process, each on a thread and loop of its own.
    /// SPI for the benchmarks' launches on a shared database (`refreshd-bench shared-launches`).
    /// `ownsProcess`: the one scheduler of `refreshd run` on one machine (issue 32: a node of
    /// one shard), which handles the signals and owns the process as the options say.
    package convenience init(store: any StateStoring, runtimeOptions: RefreshRuntime.Options, options: Options,
                                              ownsProcess: Bool = false) throws {
        var options = options
        options.stateDirectory = nil
        if !ownsProcess {
            options.handleSignals = false
            options.ownsProcess = false  // other loops share the process: no subreaper, no supervisor/ leaf
        }
        options.sharedContainer = runtimeOptions.sharedContainer
        try self.init(options: options, store: store, directoryLock: nil, runtimeOptions: runtimeOptions)
    }

    private init(options: Options, store given: (any StateStoring)?, directoryLock: StateDirectoryLock?,
                 runtimeOptions: RefreshRuntime.Options) throws {
        self.options = options
        logger = options.logger
        let sharedContainer = runtimeOptions.sharedContainer
        self.sharedContainer = sharedContainer
        self.directoryLock = directoryLock
        store = given as? StateStore
        runtime = try RefreshRuntime(store: given, options: runtimeOptions)
        runtime.baseEnvironment = Self.processEnvironment()
        for note in directoryLock?.adjustments ?? [] { logger.warning("made private: \(note)") }
        if let sharedContainer { _ = mkdir(sharedContainer, 0o755) }
        uv_loop_init(loop)
        uv_timer_init(loop, timer)
        timer.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        uv_async_init(loop, async) { handle in
            guard let data = handle?.pointee.data else { return }
            Unmanaged<RefreshScheduler>.fromOpaque(data).takeUnretainedValue().woken()
        }
        async.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        clockWatch = ClockWatch(loop: loop) { [unowned self] in
            self.runtime.clockWasSet(clocks: self.readClocks())
        }
        monitor = ConditionsMonitor(loop: loop, probe: options.conditionsProbe) { [unowned self] c in
            self.runtime.send(.conditionsChanged(c))
        }
        runtime.attach(self)
        prepareProcessTracking()
    }

    deinit {
        if !closing { closeHandles() }
        while uv_run(loop, UV_RUN_NOWAIT) != 0 {}
        uv_loop_close(loop)
        loop.deallocate()
        timer.deallocate()
        async.deallocate()
        for s in signals { s.deallocate() }
        releaseState()
    }

    /// Closes the state file and frees the state directory for another scheduler.
    func releaseState() {
        lock.withLock {
            store?.close()
            store = nil
        }
        directoryLock?.release()
    }

    // MARK: Declaring and requesting

    /// Declares an identifier with an in-process launch handler. False if already declared.
    @discardableResult
    public func register(_ definition: TaskDefinition,
                         launchHandler: @escaping @Sendable (RefreshTask) -> Void) -> Bool {
        runtime.register(definition, handler: .inProcess(launchHandler))
    }

    /// Declares an identifier whose runs spawn a command. False if already declared.
    @discardableResult
    public func register(_ definition: TaskDefinition, command: CommandJob) -> Bool {
        runtime.register(definition, handler: .command(command))
    }

    /// Declares an identifier with any handler (in process, a command, a built-in action).
    /// False if already declared.
    @discardableResult
    package func register(_ definition: TaskDefinition, handler: TaskHandler) -> Bool {
        runtime.register(definition, handler: handler)
    }

    /// Submits a request; replaces a pending request with the same identifier. The request is
    /// committed to the state file before this returns.
    public func submit(_ request: TaskRequest) throws(SchedulerError) { try runtime.submit(request) }

    /// Withdraws the pending request for `identifier`, if any (a run in flight goes on).
    public func cancel(taskRequestWithIdentifier identifier: String) { runtime.cancel(identifier) }

    /// Withdraws every pending request (runs in flight go on).
    public func cancelAllTaskRequests() { runtime.cancelAll() }

    /// Copies of the pending requests, in due order.
    public func pendingTaskRequests() -> [TaskRequest] { runtime.pendingRequests() }

    /// Graceful stop: no new launches, running work gets its expiration and grace, then `run()`
    /// returns. Safe from any thread, and from handlers.
    public func stop() { runtime.stop() }

    /// The pending request for an identifier, if any (saved state restored first).
    func pending(_ identifier: String) -> PendingRequest? { runtime.pending(identifier) }

    /// Applies the saved state now (pending requests, streaks, interrupted runs), once. Call it
    /// after every handler is registered: requests for undeclared identifiers are dropped.
    public func restoreSavedState() { runtime.restoreSavedState() }

    /// Calls `onChange` on the loop thread when files in `directory` change (debounced).
    @discardableResult
    package func watchDirectory(_ directory: String, debounce: Duration = .milliseconds(100),
                        onChange: @escaping () -> Void) -> Bool {
        guard let watch = DirectoryWatch(loop: loop, path: directory, debounce: debounce, onChange: onChange) else {
            return false
        }
        directoryWatches.append(watch)
        return true
    }

    /// Runs `body` on the loop thread soon (from any thread), after effects already queued.
    package func performOnLoop(_ body: @escaping @Sendable () -> Void) {
        lock.withLock {
            loopTasks.append(body)
            if asyncOpen { _ = uv_async_send(async) }
        }
    }

    /// A one-shot timer on this loop, closed with the loop's other handles (loop thread).
    package func makeTimer() -> OneShotTimer {
        let timer = OneShotTimer(loop: loop)
        timers.append(timer)
        return timer
    }

    /// Delivers a "wall clock was set" notice on the loop thread, exactly as the timerfd does.
    /// For tests (from another thread): changing the real clock needs root.
    func injectClockSet() {
        lock.withLock {
            clockSetInjected = true
            if asyncOpen { _ = uv_async_send(async) }
        }
    }

    /// SIGKILLs the process group of every command run whose leader is alive (any thread). The
    /// runtime's own kill follows on the loop; this one does not wait for the loop.
    package func killLiveGroups() {
        for group in liveGroups.withLock({ $0 }) { _ = Glibc.kill(-group, SIGKILL) }
    }

    /// Whether `stop()` (or a signal) has begun a shutdown.
    public var isStopping: Bool { runtime.isStopping }

    /// The commit error that stopped the scheduler, if any.
    public var failure: String? { runtime.failure }

    /// Calls `observer` with everything the scheduler does, as data (a request made, a run
    /// launched or finished with its outcome, a retry, a missed slot...), whatever the log
    /// level, on the thread that made it happen: keep it quick, hand slow work to a queue.
    /// `includingRoutine: false` leaves out the per-request events (submitted, launched,
    /// finished, held), which then cost nothing.
    public func observe(includingRoutine: Bool = true, _ observer: @escaping @Sendable (RuntimeObservation) -> Void) {
        runtime.observe(includingRoutine: includingRoutine, observer)
    }

    package var onLoopThread: Bool {
        guard let loopThread else { return false }
        return pthread_equal(loopThread, pthread_self()) != 0
    }
}
