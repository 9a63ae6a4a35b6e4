import CLibUV
import Glibc
import Logging
import RefreshdCore
import RefreshdStore

/// A BGTaskScheduler for Linux: declare identifiers with handlers, submit requests with an
/// earliest begin date, and let the libuv loop launch, expire and record the runs.
///
/// The scheduling rules live in `SchedulerCore` (deterministic, no I/O); this class is the
/// imperative shell around it. It holds exactly one armed `uv_timer_t`, for the core's earliest
/// deadline, spawns command jobs with `uv_spawn`, and commits every state change to SQLite before
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
public final class RefreshScheduler: @unchecked Sendable {
    /// How the scheduler is set up.
    public struct Options: Sendable {
        /// Where state.sqlite lives; nil keeps everything in memory (nothing survives a restart).
        public var stateDirectory: String?
        /// The directory all jobs share (`REFRESH_SHARED_CONTAINER`); default `<state>/shared`.
        public var sharedContainer: String?
        public var configuration: SchedulerConfiguration
        /// Install SIGTERM/SIGINT (graceful stop) and SIGHUP handlers. For daemons, not libraries.
        public var handleSignals: Bool
        public var conditionsProbe: ConditionsProbe
        /// How often conditions are re-read while a request waits on them (besides netlink events).
        public var conditionsFallbackInterval: Duration
        public var logger: Logger
        /// The wall clock the shell reads (the core never reads one).
        public var clock: WallClockSource

        public init(stateDirectory: String? = nil, sharedContainer: String? = nil,
                    configuration: SchedulerConfiguration = SchedulerConfiguration(),
                    handleSignals: Bool = false, conditionsProbe: ConditionsProbe = ConditionsProbe(),
                    conditionsFallbackInterval: Duration = .seconds(60),
                    logger: Logger = Logger(label: "refreshd"), clock: WallClockSource = .system) {
            self.clock = clock
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
    let lock = Lock()
    // Guarded by `lock`.
    var core: SchedulerCore
    var store: StateStore?
    var handlers: [String: TaskHandler] = [:]
    var outbox: [SchedulerEffect] = []
    /// Reused per event: the core appends here, so the hot path allocates no array per event.
    var scratch: [SchedulerEffect] = []
    var changes: [StateChange] = []
    /// refreshd's own environment, read once: every command run starts from it.
    let baseEnvironment: [String: String] = RefreshScheduler.processEnvironment()
    var tasks: [Int64: RefreshTask] = [:]
    var started = false
    var restored: SchedulerCore.RestoredState
    var storeFailure: String?
    var asyncOpen = true
    var clockSetInjected = false
    // Loop thread only.
    let loop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
    let timer = UnsafeMutablePointer<uv_timer_t>.allocate(capacity: 1)
    let async = UnsafeMutablePointer<uv_async_t>.allocate(capacity: 1)
    var signals: [UnsafeMutablePointer<uv_signal_t>] = []
    var processes: [Int64: CommandProcess] = [:]
    var monitor: ConditionsMonitor?
    var clockWatch: ClockWatch?
    var directoryWatches: [DirectoryWatch] = []
    var timers: [OneShotTimer] = []
    /// Closures queued by `performOnLoop` (guarded by `lock`).
    var loopTasks: [@Sendable () -> Void] = []
    var loopThread: pthread_t?
    var draining = false
    var closing = false
    private let directoryLock: StateDirectoryLock?
    let sharedContainer: String?
    /// The state's random id (a fresh one per process without a state directory), given to every
    /// command as REFRESH_INSTANCE.
    let instance: String

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
    public init(options: Options) throws {
        self.options = options
        logger = options.logger
        var configuration = options.configuration
        configuration.emitsStateChanges = options.stateDirectory != nil
        configuration.emitsRoutineLogs = options.logger.logLevel <= .info
        core = SchedulerCore(configuration: configuration)
        if let directory = options.stateDirectory {
            directoryLock = try StateDirectoryLock.acquire(directory: directory)
            let store = try StateStore.open(directory: directory)
            self.store = store
            restored = try store.restoredState()
            instance = try store.instanceID()
        } else {
            instance = String(UInt64.random(in: 1...UInt64.max), radix: 16)
            directoryLock = nil
            restored = SchedulerCore.RestoredState()
        }
        sharedContainer = options.sharedContainer ?? options.stateDirectory.map { "\($0)/shared" }
        if let sharedContainer { _ = mkdir(sharedContainer, 0o755) }
        uv_loop_init(loop)
        uv_timer_init(loop, timer)
        timer.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        uv_async_init(loop, async) { handle in
            guard let data = handle?.pointee.data else { return }
            Unmanaged<RefreshScheduler>.fromOpaque(data).takeUnretainedValue().woken()
        }
        async.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        clockWatch = ClockWatch(loop: loop, clock: options.clock) { [unowned self] expected in
            self.send(.clockChanged(expected: expected))
        }
        monitor = ConditionsMonitor(loop: loop, probe: options.conditionsProbe,
                                    fallbackInterval: options.conditionsFallbackInterval) { [unowned self] c in
            self.send(.conditionsChanged(c))
        }
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
        register(definition, handler: .inProcess(launchHandler))
    }

    /// Declares an identifier whose runs spawn a command. False if already declared.
    @discardableResult
    public func register(_ definition: TaskDefinition, command: CommandJob) -> Bool {
        register(definition, handler: .command(command))
    }

    @discardableResult
    public func register(_ definition: TaskDefinition, handler: TaskHandler) -> Bool {
        lock.withLock {
            guard core.declare(definition) else { return false }
            handlers[definition.identifier] = handler
            return true
        }
    }

    /// Submits a request; replaces a pending request with the same identifier. The request is
    /// committed to the state file before this returns.
    public func submit(_ request: TaskRequest) throws(SchedulerError) {
        try feedThrowing { core, now, effects throws(SchedulerError) in
            try core.submit(request, at: now, into: &effects)
        }
    }

    public func cancel(taskRequestWithIdentifier identifier: String) { send(.cancel(identifier: identifier)) }

    public func cancelAllTaskRequests() { send(.cancelAll(namespace: nil)) }

    /// Copies of the pending requests, in due order.
    public func pendingTaskRequests() -> [TaskRequest] {
        lock.withLock {
            startIfNeeded()
            return core.pendingRequests()
        }
    }

    /// Graceful stop: no new launches, running work gets its expiration and grace, then `run()`
    /// returns. Safe from any thread, and from handlers.
    public func stop() { send(.shutdown) }

    /// Replaces a declared identifier's definition and handler (config reload). A run in flight
    /// keeps its process and deadline; its retry and next request follow the new definition.
    func redeclare(_ definition: TaskDefinition, handler: TaskHandler) {
        lock.withLock {
            core.redeclare(definition)
            handlers[definition.identifier] = handler
        }
    }

    /// Withdraws an identifier: its pending request is cancelled; a run in flight finishes.
    func withdraw(_ identifier: String) {
        lock.withLock {
            startIfNeeded()
            commit(core.undeclare(identifier, at: options.clock.now()))
            handlers[identifier] = nil
        }
        kick()
    }

    /// Submits a declared identifier's first request: its schedule's next slot, or now.
    func submitFirstRequest(_ identifier: String) throws(SchedulerError) {
        try feedThrowing { core, now, effects throws(SchedulerError) in
            try core.submitFirst(identifier, at: now, into: &effects)
        }
    }

    /// The `earliest:` text a job's first request was last made from (nil without a store).
    func seedSpec(for identifier: String) -> String? {
        lock.withLock { try? store?.seedSpec(for: identifier) }
    }

    /// Remembers the `earliest:` text a job's first request was made from.
    func recordSeedSpec(_ spec: String, for identifier: String) throws {
        try lock.withLock { try store?.apply([.seedSpec(identifier: identifier, spec: spec)]) }
    }

    /// The pending request for an identifier, if any (saved state restored first).
    func pending(_ identifier: String) -> PendingRequest? {
        lock.withLock {
            startIfNeeded()
            return core.pending(identifier)
        }
    }

    /// Applies the saved state now (pending requests, streaks, interrupted runs), once. Call it
    /// after every handler is registered: requests for undeclared identifiers are dropped.
    public func restoreSavedState() {
        lock.withLock { startIfNeeded() }
        kick()
    }

    /// Calls `onChange` on the loop thread when files in `directory` change (debounced).
    @discardableResult
    func watchDirectory(_ directory: String, debounce: Duration = .milliseconds(100),
                        onChange: @escaping () -> Void) -> Bool {
        guard let watch = DirectoryWatch(loop: loop, path: directory, debounce: debounce, onChange: onChange) else {
            return false
        }
        directoryWatches.append(watch)
        return true
    }

    /// Runs `body` on the loop thread soon (from any thread), after effects already queued.
    func performOnLoop(_ body: @escaping @Sendable () -> Void) {
        lock.withLock {
            loopTasks.append(body)
            if asyncOpen { _ = uv_async_send(async) }
        }
    }

    /// A one-shot timer on this loop, closed with the loop's other handles (loop thread).
    func makeTimer() -> OneShotTimer {
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

    /// Whether `stop()` (or a signal) has begun a shutdown.
    public var isStopping: Bool { lock.withLock { core.isStopping } }

    /// The commit error that stopped the scheduler, if any.
    public var failure: String? { lock.withLock { storeFailure } }

    // MARK: Feeding the core

    /// Applies restored durable state once, after the handlers are declared.
    func startIfNeeded() {
        guard !started else { return }
        started = true
        for (run, killed) in OrphanReaper.reap(restored.unfinishedRuns, instance: instance) {
            logger.warning("reaped \(killed.count) leftover process\(killed.count == 1 ? "" : "es") of \(run.identifier) run \(run.runID)")
        }
        commit(core.restore(restored, at: options.clock.now()))
        restored = SchedulerCore.RestoredState()
    }

    /// Feeds an event to the core (any thread).
    func send(_ event: SchedulerEvent) {
        lock.withLock {
            startIfNeeded()
            scratch.removeAll(keepingCapacity: true)
            core.handle(event, at: options.clock.now(), into: &scratch)
            commit(scratch)
        }
        kick()
    }

    /// Like `send`, for core calls that can refuse (submits): a refusal commits nothing and is
    /// rethrown to the caller after the lock is released.
    func feedThrowing(
        _ body: (inout SchedulerCore, Instant, inout [SchedulerEffect]) throws(SchedulerError) -> Void
    ) throws(SchedulerError) {
        let result: Result<Void, SchedulerError> = lock.withLock {
            startIfNeeded()
            scratch.removeAll(keepingCapacity: true)
            do throws(SchedulerError) {
                try body(&core, options.clock.now(), &scratch)
            } catch {
                return .failure(error)
            }
            commit(scratch)
            return .success(())
        }
        kick()
        try result.get()
    }

    /// Commits the event's state changes in one transaction, then queues its other effects.
    /// Called with `lock` held.
    func commit(_ effects: [SchedulerEffect]) {
        changes.removeAll(keepingCapacity: true)
        for effect in effects {
            if case let .persist(change) = effect { changes.append(change) } else { outbox.append(effect) }
        }
        guard !changes.isEmpty, let store, storeFailure == nil else { return }
        do {
            try store.apply(changes)
        } catch {
            storeFailure = "\(error)"
            logger.critical("state not saved, stopping: \(error)")
            for effect in core.handle(.shutdown, at: options.clock.now()) {
                if case .persist = effect { continue }
                outbox.append(effect)
            }
        }
    }

    var onLoopThread: Bool {
        guard let loopThread else { return false }
        return pthread_equal(loopThread, pthread_self()) != 0
    }

    /// Gets queued effects executed: right here on the loop thread, or by waking the loop.
    func kick() {
        if onLoopThread {
            drain()
        } else {
            lock.withLock { if asyncOpen { _ = uv_async_send(async) } }
        }
    }
}
