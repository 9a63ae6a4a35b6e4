import Logging
import RefreshdCore

/// The scheduler as a program: the machines, the store, commit-before-act, restore, the
/// store-failure policy, seeding and reload, over a host that supplies time and processes.
///
/// The same runtime runs under `refreshd run` (the libuv host, real time, SQLite) and under the
/// simulator (`SimulatedHost`, virtual time, `InMemoryStore`); it cannot tell which. That is
/// the point: a rule written here is a rule the simulator tests.
///
/// The flow of one input, whatever it is (`RuntimeInput`: a submit, a wake-up, a leader's exit,
/// a results line...): `perform(input)` takes the lock, reads the host's clock once, hands the
/// input to the machine (`RuntimeMachine.handle`), commits its state changes in one
/// transaction and only then queues the other effects; `drain()`, on the host's execution
/// context, carries them out in order (arm the wake-up, start a run, signal a group, log). A
/// failed commit acts on nothing of its input: the runtime stops, and a submit that was not
/// saved throws. Every public method below is that one call and the reading of its reply.
///
/// Public methods are safe from any thread; handlers and host calls happen on the host's
/// execution context.
package final class RefreshRuntime: @unchecked Sendable {
    package struct Options: Sendable {
        package var configuration: SchedulerConfiguration
        /// The directory all runs share (`REFRESH_SHARED_CONTAINER`), if any. Without one, every
        /// publication fails (the runtime reports it; no host is asked to write it).
        package var sharedContainer: String?
        package var logger: Logger
        /// How often conditions are read again while a request waits on them, besides the host's
        /// notices (one of the runtime's deadlines; see `ConditionsReread`).
        package var conditionsReread: Duration
        /// The code of the built-in actions job specs name (none by default: commands only).
        package var actions: ActionBinding
        /// Set for a shard's runtime in a cluster (issue 24): a commit the store refuses
        /// (`ShardFenced`, or a database that cannot be reached) fences this runtime instead of
        /// stopping refreshd (`RuntimeMachine.fenced`), and this is told why, after the lock is
        /// released. Nil: a failed commit stops refreshd, as on one machine.
        package var onFenced: (@Sendable (String) -> Void)?

        package init(configuration: SchedulerConfiguration = SchedulerConfiguration(),
                    sharedContainer: String? = nil, logger: Logger = Logger(label: "refreshd"),
                    conditionsReread: Duration = ConditionsReread.defaultInterval, actions: ActionBinding = .none) {
            self.configuration = configuration
            self.sharedContainer = sharedContainer
            self.logger = logger
            self.conditionsReread = conditionsReread
            self.actions = actions
        }
    }

    /// How a run in flight is carried out.
    enum Execution {
        /// A command: its order, and its leader (pid, start ticks) once the host started it, for
        /// the sweep of its leftovers at its end.
        case command(LaunchOrder, processGroup: Int32? = nil, startTicks: UInt64? = nil)
        case task(RefreshTask)
        case action(ActionContext)
    }

    package let options: Options
    let logger: Logger
    let store: (any StateStoring)?
    /// The state's random id, given to every command as REFRESH_INSTANCE.
    package let instance: String
    /// Recursive: a group of control requests holds it across calls that each take it.
    let lock = Lock(recursive: true)
    // Guarded by `lock`.
    /// Every decision (`RuntimeMachine`): this class is the engine around it (commit-before-act,
    /// the outbox, the drain, the handler registry).
    var machine: RuntimeMachine
    /// The composed machines inside `machine`, read and modified in place (`_read`, not
    /// `get`: a getter returned a copy of every machine, each table retained and released, at
    /// every `machines.x` read).
    var machines: Machines {
        _read { yield machine.machines }
        _modify { yield &machine.machines }
    }
    var handlers = HandlerTable()
    var outbox: [SchedulerEffect] = []
    var scratch: [SchedulerEffect] = []
    var changes: [StateChange] = []
    var executions: [Int64: Execution] = [:]
    var restored: SchedulerCore.RestoredState?
    var storeFailure: String?
    /// Transactions the store accepted (non-empty batches): one per event, or per group.
    var transactions = 0
    /// Guarded by `observerLock` (reports happen with and without `lock` held).
    var observers: [@Sendable (RuntimeObservation) -> Void] = []
    let observerLock = Lock()
    /// The config in force when the runtime runs job specs (`load`, `reload`), by identifier.
    var jobs: [String: JobSpec] = [:]
    /// The changes and effects of the events of an open `grouped` call, committed together.
    var group: CommitGroup?
    // Execution context only.
    weak var host: (any RuntimeHost)?
    /// A `grouped` call is open: its effects wait for its commit, so no drain now.
    var grouping = false
    var draining = false
    /// The drain's batch between drains (empty, with its capacity).
    var spareBatch: [SchedulerEffect] = []
    /// refreshd's own environment, read once by the host: every command run starts from it.
    package var baseEnvironment: [String: String] = [:]

    /// Opens nothing: the store is given (or nil: nothing persists), and its saved state is read
    /// now but applied at `restoreSavedState()`, after the identifiers are declared.
    ///
    /// - Throws: the store's error when its saved state cannot be read.
    package init(store: (any StateStoring)?, options: Options = Options()) throws {
        self.options = options
        logger = options.logger
        self.store = store
        var configuration = options.configuration
        configuration.emitsStateChanges = store != nil
        configuration.emitsRoutineLogs = options.logger.logLevel <= .info
        configuration.emitsRunEnds = true  // Machines hands run ends to timelines and activities
        machine = RuntimeMachine(scheduler: SchedulerCore(configuration: configuration),
                                 conditionsReread: options.conditionsReread)
        if let store {
            let state = try store.restoredState()
            restored = state
            machine.seedSpecs = state.seedSpecs
            instance = try store.instanceID()
        } else {
            restored = SchedulerCore.RestoredState()
            instance = String(UInt64.random(in: 1...UInt64.max), radix: 16)
        }
        machine.machines.notifications.idPrefix = instance  // notification ids unique across states
    }

    /// Connects the host (once, before anything runs); its clocks, read now, are the baseline a
    /// later step or resume is measured against.
    package func attach(_ host: any RuntimeHost) {
        self.host = host
        let clocks = host.readClocks()
        lock.withLock { machine.attach(clocks: clocks) }
    }

    // MARK: Declaring and requesting

    /// Declares an identifier with its handler. False if it was already declared.
    @discardableResult
    package func register(_ definition: TaskDefinition, handler: TaskHandler) -> Bool {
        lock.withLock {
            // A declaration has no effects to commit or carry out: straight to the core.
            guard machines.scheduler.declare(definition) else { return false }
            handlers[definition.identifier] = handler
            return true
        }
    }

    /// Replaces a declared identifier's definition and handler (config reload). A run in flight
    /// keeps its process and deadline; its retry and next request follow the new definition.
    package func redeclare(_ definition: TaskDefinition, handler: TaskHandler) {
        lock.withLock {
            handlers[definition.identifier] = handler
            performLocked(.event(.declare(definition)))
        }
        kick()
    }

    /// Withdraws an identifier: its pending request is cancelled; a run in flight finishes.
    package func withdraw(_ identifier: String) {
        lock.withLock {
            performLocked(.event(.undeclare(identifier: identifier)))
            handlers[identifier] = nil
        }
        kick()
    }

    /// Submits a request (replacing a pending one with the same identifier), committed before
    /// this returns.
    ///
    /// - Throws: the core's refusal, or `.notSaved` when the commit failed (the runtime stops).
    package func submit(_ request: TaskRequest) throws(SchedulerError) {
        try perform(.submit(request)).scheduler()
    }

    /// Submits a declared identifier's first request: its schedule's next slot (jittered), or now.
    package func submitFirstRequest(_ identifier: String) throws(SchedulerError) {
        try perform(.submitFirst(identifier: identifier)).scheduler()
    }

    package func cancel(_ identifier: String) { send(.cancel(identifier: identifier)) }

    package func cancelAll(namespace: String? = nil) { send(.cancelAll(namespace: namespace)) }

    /// Copies of the pending requests, in due order.
    package func pendingRequests() -> [TaskRequest] {
        lock.withLock {
            startIfNeeded()
            return machines.scheduler.pendingRequests()
        }
    }

    /// The pending request for an identifier (saved state restored first).
    package func pending(_ identifier: String) -> PendingRequest? {
        lock.withLock {
            startIfNeeded()
            return machines.scheduler.pending(identifier)
        }
    }

    /// Graceful stop: no new launches; running work gets its expiration and grace.
    package func stop() {
        // A command that exited before the stop ends as it exited, not `interrupted`: the stop
        // waits for the sweeps under way (milliseconds), then comes.
        perform(.stop)
    }

    package var isStopping: Bool { lock.withLock { machines.scheduler.isStopping } }

    /// How many transactions the store has accepted from this runtime: one per event that
    /// changed state (a config reload is one), one per group of control requests.
    package var committedTransactions: Int { lock.withLock { transactions } }

    /// The commit error that stopped the runtime, if any.
    package var failure: String? { lock.withLock { storeFailure } }

    /// The core's state, for observers and tests.
    package func snapshot() -> SchedulerSnapshot { lock.withLock { machines.scheduler.snapshot() } }

    /// The core's state without the pending requests of instances neither failing nor paused,
    /// except `also`'s (`SchedulerCore.snapshot(quietInstances:also:)`): the dashboard's, which
    /// has the store count them; and how many requests are pending in all.
    package func snapshot(quietInstances: Bool, also: [String] = []) -> (snapshot: SchedulerSnapshot, pendingCount: Int) {
        lock.withLock { (machines.scheduler.snapshot(quietInstances: quietInstances, also: also), machines.scheduler.pendingCount) }
    }

    /// The core's invariants, checked now (empty when all hold).
    package func checkInvariants() -> [InvariantViolation] { lock.withLock { machines.checkSchedulerInvariants() } }
    /// `checkInvariants()` at the cost of what changed since the last call (the simulator's
    /// check after every step; see `SchedulerCore.checkInvariantsIncrementally`).
    package func checkInvariantsIncrementally() -> [InvariantViolation] {
        lock.withLock { machines.checkSchedulerInvariantsIncrementally() }
    }

    /// Calls `observer` for every observation, whatever the log level, on the thread that
    /// produced it (keep it quick; hand off to a queue for slow work).
    ///
    /// `includingRoutine: false` leaves the per-request events (submitted, launched, finished,
    /// held) to the log level: an observer that needs only the others (expirations, missed
    /// slots, widgets, activities...) does not make the core build three of them per run.
    package func observe(includingRoutine: Bool = true, _ observer: @escaping @Sendable (RuntimeObservation) -> Void) {
        observerLock.withLock { observers.append(observer) }
        if includingRoutine { lock.withLock { machines.scheduler.setEmitsRoutineLogs(true) } }
    }

    /// Holds due requests back (a budget, the system's discretion); nil admits everything.
    package func setAdmissionPolicy(_ policy: (any AdmissionPolicy)?) {
        lock.withLock { machines.scheduler.admissionPolicy = policy }
    }

    // MARK: Feeding the machines

    /// Applies the saved state once: reaps what dead runs left behind, then restores pending
    /// requests, streaks and interrupted runs. Call after every handler is registered.
    package func restoreSavedState() {
        lock.withLock { startIfNeeded() }
        kick()
    }

    /// Under `lock`.
    func startIfNeeded() {
        guard let state = restored else { return }
        restored = nil
        if let host {
            let notifiers = host.reapNotifierLeftovers(instance: instance)
            if !notifiers.isEmpty {
                report(RuntimeObservation(.runtime(.notifiersReapedAtStart(count: notifiers.count)), at: host.now()))
            }
            for (run, killed) in host.reapLeftovers(of: state.unfinishedRuns, instance: instance) {
                if let log = RuntimeMachine.leftoversKilled(identifier: run.identifier, runID: run.runID,
                                                            count: killed.count, atStart: true) {
                    report(RuntimeObservation(log, at: host.now()))
                }
            }
        }
        performLocked(.event(.restore(state)))
    }

    /// Feeds a scheduler event (any thread) and gets its effects carried out.
    package func send(_ event: SchedulerEvent) { perform(.event(event)) }

    /// What the engine did with one input: the machine's reply, and why its commit failed
    /// (nil: saved, or nothing to save). An input not saved acts on nothing; the runtime stops.
    struct Performed {
        var reply: RuntimeReply
        var notSaved: String?

        /// Throws a submit's refusal, or `.notSaved`.
        func scheduler() throws(SchedulerError) {
            if case let .refused(.scheduler(error)) = reply { throw error }
            if let notSaved { throw .notSaved(reason: notSaved) }
        }

        /// Throws an instance change's refusal, or `.notSaved`.
        func instance() throws(InstanceError) {
            if case let .refused(.instance(error)) = reply { throw error }
            if let notSaved { throw .notSaved(reason: notSaved) }
        }
    }

    /// THE path of every input (any thread): under the lock, `performLocked`; then the queued
    /// effects are carried out (`kick`). A read of a run's streams is not drained for: the lines
    /// it takes wait for the drain a host schedules (`RuntimeReply.liveLine`; `commitsNothing`).
    @discardableResult
    func perform(_ input: RuntimeInput) -> Performed {
        // The host (a weak reference) read once for the clock and the kick.
        let host = self.host
        let performed = lock.withLock { performLocked(input, host: host) }
        if !input.commitsNothing { kick(host) }
        return performed
    }

    /// Under `lock`: `performLocked(_:host:)` with the runtime's host.
    @discardableResult
    func performLocked(_ input: RuntimeInput) -> Performed { performLocked(input, host: host) }

    /// Under `lock`: the saved state restored first (unless the input is a declaration, which a
    /// restore needs first), the live lines taken since applied, the input handled at the host's
    /// instant, and its effects committed in one transaction and queued. A refusal commits
    /// nothing. Inside a group (`grouped`, `inOneTransaction`) the commit is the group's.
    /// `host` is the runtime's, loaded once by the caller: a weak load (and the release of what
    /// it retained) cost a simulated run about 0.3 µs each time.
    @discardableResult
    func performLocked(_ input: RuntimeInput, host: (any RuntimeHost)?) -> Performed {
        if input.commitsNothing {
            // A stream read changes what is buffered, never the state.
            var none: [SchedulerEffect] = []
            return Performed(reply: machine.handle(input, at: host?.now() ?? Instant(milliseconds: 0), into: &none), notSaved: nil)
        }
        if input.restoresFirst { startIfNeeded() }
        applyLiveBacklog()
        scratch.removeAll(keepingCapacity: true)
        let reply = machine.handle(input, at: host?.now() ?? Instant(milliseconds: 0), into: &scratch)
        // Nothing to commit (a launch that starts, a process started without a store): no commit.
        if scratch.isEmpty { return Performed(reply: reply, notSaved: nil) }
        if case .refused = reply { return Performed(reply: reply, notSaved: nil) }
        guard commit(scratch) else { return Performed(reply: reply, notSaved: storeFailure ?? "unknown") }
        return Performed(reply: reply, notSaved: nil)
    }

    func clock() -> Instant { host?.now() ?? Instant(milliseconds: 0) }
}
