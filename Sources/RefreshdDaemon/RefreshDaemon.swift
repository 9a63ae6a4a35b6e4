import CLibUV
import Foundation
import Glibc
import Logging
import Refreshd
import RefreshdConfig
import RefreshdCore
import RefreshdRuntime
import RefreshdStore
import Synchronization

/// `refreshd run`: jobs from a directory of YAML files, state in a directory, until a signal.
/// One composition whatever the store (issue 32): a NODE that leads shards (`ClusterNode`), each
/// led shard a `RefreshScheduler` of its own over the shard's store, on a thread and loop of its
/// own, started once its restore has loaded the shard's jobs.
///
/// - **One machine** (`Placement.machine`) is a node of a cluster of one: the state file is the
///   one shard's store and the state directory's lock is its lease (`MachineDatabase`), which
///   never lapses. Its shard's scheduler is the daemon's whole face: it handles the signals
///   (the runtime's rule: graceful, then at once; SIGHUP reloads), hosts the control socket,
///   answered by its runtime on its loop, the metrics and systemd's notifications
///   (`DaemonControl`), the jobs folder's watch and the dashboard. When its loop ends, the node
///   leaves and refreshd exits.
/// - **A cluster node** (`Placement.cluster`, `run --store`) leads the shards its lease machine
///   takes on the shared database; the node thread handles the stop signals and passes them to
///   every shard's runtime, and the control socket is answered from the database on a loop of
///   its own (`ClusterControl`), the same on every node.
///
/// Threads (issue 32: nothing that waits for the database may delay a deadline): the calling
/// thread is the NODE thread. It owns the `ClusterNode`, feeds its lease machine and never
/// waits: its small libuv loop has the node's timer (the lease machine's wake-up, nothing
/// polls), a uv_async for wake-ups from other threads (a database answer, a run's end that may
/// drain a hand-over, an ended shard loop, a refused commit, an operator command), and on a
/// cluster node the SIGTERM/SIGINT/SIGHUP handlers. The lease machine's database calls and the
/// shards' restores run one after another on the CALLS thread (`ClusterNode.callRunner`), which
/// hands their answers back and wakes the node thread; a call blocked on a cut-off network
/// delays only the calls after it, never the self-fence deadline.
///
/// A fence (self-fence at the lease machine's deadline, a refused renewal, a refused commit)
/// SIGKILLs the shard's live process groups from the node thread first (`onFence`), then fences
/// the runtime on its own loop, whose expiration and kill come when it is free: a loop blocked
/// in a commit cannot delay the kill. Job files are read again at SIGHUP and when the jobs
/// folder changes (`JobFilesReloader`: `ReloadMachine`'s rules); each led shard applies its diff
/// in one transaction (`ClusterNode.reload`). A shard's publications are written only while its
/// lease holds (`publicationGate`). The state directory (locked, one daemon per directory) holds
/// the socket and the default shared container (`STATE/shared`), which every node must see at
/// the same path.
package final class RefreshDaemon: @unchecked Sendable {
    /// Where the shards live.
    package enum Placement: Sendable {
        /// One machine: `STATE/state.sqlite`, one shard whose lease is the state directory's lock.
        case machine
        /// A node named `node` of a cluster on `database`, with leases of `lease`.
        case cluster(database: any ShardDatabase, node: String, lease: Duration)
    }

    package var jobsDirectory: String
    package var stateDirectory: String
    package var sharedContainer: String?
    package let placement: Placement
    /// The scheduler's settings (`run`'s options).
    package var settings: RunSettings
    package var logger: Logger
    /// The code of the built-in actions job files may name (`refreshd run` binds staging's).
    package var actions: ActionBinding = .none
    /// The control socket's bounds (`run --max-control-clients`).
    package var controlLimits = ControlServer.Limits()
    /// Install the signal handlers (true for `refreshd run`; tests embed without and `stop()`).
    package var handleSignals = true
    /// A reload still reading the job directory after this long is abandoned: the running config
    /// stays, and scheduling never waited for it (the reading happens on a worker thread).
    package var reloadTimeout: Duration = .seconds(10)
    /// The environment read for systemd's `NOTIFY_SOCKET` and `WATCHDOG_USEC`.
    package var environment: [String: String] = ProcessInfo.processInfo.environment
    /// Reads the job directory; replaceable so tests can stand in a slow or hung read.
    var loadJobs: @Sendable (String) -> Result<[JobConfig], ConfigErrors> = { JobDirectory.load($0) }
    /// Where to write the metrics (Prometheus text, replaced atomically) for node_exporter's
    /// textfile collector; nil writes none (the control socket's `metrics` still answers). One
    /// machine writes it at most once a second after events; a node every renewal interval.
    package var metricsFile: String?
    /// Servers started beside the control socket once the jobs are loaded, before the loop runs
    /// (the web dashboard of `run --http`); each returns how to stop it, called once the loop has
    /// returned. A start that throws stops refreshd before it schedules anything.
    package var companions: [(DaemonParts) throws -> () -> Void] = []

    /// The shared database (one machine's: its state file), set by `run`.
    var databaseValue: (any ShardDatabase)?
    var database: any ShardDatabase { databaseValue! }
    let nodeName: String
    let lease: Duration
    /// One machine's face (its shard's scheduler, control socket, metrics, systemd), once made.
    var machine: (scheduler: RefreshScheduler, control: DaemonControl)?
    /// A cluster node's control socket host (`startControl`).
    var control: (scheduler: RefreshScheduler, server: ControlServer, ended: DispatchSemaphore)?
    /// Why one machine stopped other than by a signal (a store failure, a companion that did
    /// not start): `run` throws it.
    var failure: (any Error)? {
        get { failureLock.withLock { failureValue } }
        set { failureLock.withLock { if failureValue == nil { failureValue = newValue } } }
    }
    private var failureValue: (any Error)?
    private let failureLock = NSLock()
    /// Companions' stops (node thread; one machine starts them once its shard is restored).
    var companionStops: [() -> Void] = []

    /// One led shard's host: its scheduler and the thread its loop runs on.
    final class ShardHost: @unchecked Sendable {
        let shard: Int
        let epoch: Int64
        let scheduler: RefreshScheduler
        var started = false
        let ended = Mutex(false)
        /// Its restore is done (the jobs are in): its loop may start.
        let restored = Mutex(false)

        init(shard: Int, epoch: Int64, scheduler: RefreshScheduler) {
            self.shard = shard
            self.epoch = epoch
            self.scheduler = scheduler
        }
    }

    // Node thread only.
    let loop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
    let timer = UnsafeMutablePointer<uv_timer_t>.allocate(capacity: 1)
    let async = UnsafeMutablePointer<uv_async_t>.allocate(capacity: 1)
    var signalHandles: [UnsafeMutablePointer<uv_signal_t>] = []
    var node: ClusterNode?
    var done = false
    /// When the node had left (it then waits a moment for its shards' loops).
    var leftAt: Instant?
    /// The node's database calls and the shards' restores, one after another, off the node thread.
    let calls = DispatchQueue(label: "refreshd-node-calls")
    /// Guarded by `hostsLock` (the factory adds under the node's lock; `onFence` reads).
    var hosts: [ShardHost] = []
    let hostsLock = Mutex(())
    /// The job files read again as `ReloadMachine` says, on the control loop (one machine: its
    /// shard's loop).
    var reloader: JobFilesReloader?
    var clusterControl: ClusterControl?
    /// Sends the shards' `on-failure`/`on-recovery` webhooks (set by `run`).
    var webhooks: WebhookSender?
    /// Shards with commands to apply at the next wake-up (`all`: every shard led).
    let queuedCommands = Mutex<(all: Bool, shards: Set<Int>)>((false, []))
    /// Whether `async` may be sent to (until the loop's handles are closed).
    let asyncOpen = Mutex(false)
    /// Runs this node launched since it started (`metrics`).
    let launchCount = Mutex(0)
    /// Pushes the cluster to `watch` every second while someone watches (`startWatchTimer`).
    let watchTimer = Mutex<DispatchSourceTimer?>(nil)
    let metricsTimer = Mutex<DispatchSourceTimer?>(nil)
    /// The last metrics file error logged (each new one is logged once).
    let metricsFileError = Mutex<String?>(nil)
    let metricsWriting = NSLock()
    /// This node's latest lease events for the dashboard (the node's own `history` is the node
    /// thread's): the newest `ClusterNode.historyLimit`.
    let recentHistory = Mutex<[(at: Instant, line: String)]>([])
    /// Observers of every shard this node leads (the dashboard's live updates).
    let shardObservers = Mutex<[@Sendable (RuntimeObservation) -> Void]>([])

    /// One machine (`placement` `.machine`) or a cluster node.
    package init(jobsDirectory: String, stateDirectory: String, sharedContainer: String? = nil, placement: Placement = .machine,
                 settings: RunSettings = RunSettings(), logger: Logger = Logger(label: "refreshd")) {
        self.jobsDirectory = jobsDirectory
        self.stateDirectory = stateDirectory
        self.sharedContainer = sharedContainer
        self.placement = placement
        self.settings = settings
        self.logger = logger
        switch placement {
        case .machine:
            nodeName = "refreshd"
            lease = MachineDatabase.forever
        case let .cluster(_, node, lease):
            nodeName = node
            self.lease = lease
        }
    }

    deinit {
        loop.deallocate()
        timer.deallocate()
        async.deallocate()
        for handle in signalHandles { handle.deallocate() }
    }

    var isMachine: Bool { if case .machine = placement { true } else { false } }

    /// One machine's shard scheduler, once its restore made it (tests: its loop, its runtime).
    package var scheduler: RefreshScheduler? { machine?.scheduler }

    /// Runs until a stop signal (or `stop()`) has stopped every run and every shard is given up.
    ///
    /// - Throws: `ConfigErrors` for an invalid job directory, `StoreError` for an unusable state
    ///   directory, `SchedulerFailure` if one machine's state could not be committed while running.
    package func run() throws {
        // Until a loop handles them, the signals whose default action would kill refreshd
        // without its stop sequence are ignored: reading the job files can take a while, and a
        // logrotate SIGUSR1 may come then. (A command's signals are reset before its exec.)
        if handleSignals {
            Glibc.signal(SIGPIPE, SIG_IGN)
            Glibc.signal(SIGHUP, SIG_IGN)  // a reload, once a loop handles it; never the default (exit)
            for number in RefreshScheduler.nonStopSignals { Glibc.signal(number, SIG_IGN) }
        }
        let loaded = try loadJobs(jobsDirectory).get()
        let specs = loaded.map(\.spec)
        let directoryLock = try StateDirectoryLock.acquire(directory: stateDirectory)
        defer { directoryLock.release() }
        for note in directoryLock.adjustments { logger.warning("made private: \(note)") }
        var machineStore: StateStore?
        switch placement {
        case .machine:
            let store = try StateStore.open(directory: stateDirectory)
            machineStore = store
            databaseValue = MachineDatabase(store: store)
        case let .cluster(database, _, _):
            databaseValue = database
        }
        defer { machineStore?.close() }
        try checkInstanceKinds(specs, loaded)
        let shared = sharedContainer ?? stateDirectory + "/shared"
        _ = mkdir(shared, 0o755)
        let options = RefreshRuntime.Options(configuration: settings.configuration, sharedContainer: shared, logger: logger, actions: actions)
        let node = makeNode(jobs: specs, options: options)
        let machine = isMachine
        self.node = node
        // Failure notifications' webhooks (issue 25), for every shard's host: a thread of its own.
        let webhooks = WebhookSender()
        defer { webhooks.shutdown() }
        self.webhooks = webhooks
        defer { for stop in companionStops.reversed() { stop() } }
        if !machine {
            try startControl(jobs: specs, options: options)
            startMetricsFile()
            if let control, let cluster = clusterControl {
                let parts = DaemonParts(scheduler: control.scheduler, control: control.server, stateDirectory: stateDirectory,
                                        jobsDirectory: jobsDirectory, node: nodeFacts(cluster))
                for start in companions { let stop = try start(parts); companionStops.append(stop) }
            }
        }
        prepareLoop()
        if !machine {
            logger.info("refreshd started: cluster node \(nodeName), \(loaded.count) job\(loaded.count == 1 ? "" : "s") from \(jobsDirectory), \(database.shardCount) shards, lease \(lease.wholeMilliseconds) ms, shared container \(shared), max \(settings.maxConcurrentRuns) concurrent runs per shard")
        }
        self.loadedCount = loaded.count
        node.start()
        afterNode()
        uv_run(loop, UV_RUN_DEFAULT)
        uv_loop_close(loop)
        stopWatchTimer()
        stopMetricsFile()
        if let control {
            control.scheduler.stop()
            control.ended.wait()
        }
        if !machine { logger.info("refreshd stopped: cluster node \(nodeName)") }
        if let failure { throw failure }
    }

    /// The jobs the files held at the start (one machine's started line, logged once restored).
    var loadedCount = 0
    /// The node thread is asked to leave (`requestLeave`).
    let stopRequested = Mutex(false)

    /// Stops as a first SIGTERM does (any thread): an embedding's stop (tests).
    package func stop() {
        if let scheduler = machine?.scheduler {
            scheduler.performOnLoop { scheduler.runtime.stopSignalReceived("SIGTERM") }
            return
        }
        requestLeave()
    }

    /// Re-reads the job directory (on the reloader's loop: one machine's shard loop, a node's
    /// control loop). Valid: added jobs are submitted, removed jobs' pending requests
    /// cancelled, changed jobs' pending requests replaced, unchanged jobs left alone (their
    /// pending requests and counters too). Invalid: every error is logged and the running
    /// config stays. The files are read and validated on a worker thread, so a slow disk or a
    /// hostile file never holds up timers, launches or signals (`JobFilesReloader`).
    func reload(reason: String) {
        reloader?.request(reason)
    }

    /// Applies a directory read (the reloader's loop): refused whole (an invalid file, or a
    /// plain timeline job taking an instance's widget kind: the jobs in force stay), or handed
    /// to the node, whose shards each apply their diff in one transaction.
    func applyReload(_ result: Result<[JobConfig], ConfigErrors>, reason: String) {
        guard let node, !node.isStopping else { return }
        var result = result
        if case let .success(configs) = result {
            do {
                let clashes = try StateReader(database: database, jobs: configs.map(\.spec)).instanceKindClashes(configs.map(\.spec))
                if !clashes.isEmpty { result = .failure(ConfigErrors(kindClashes: clashes, in: configs)) }
            } catch {
                logger.error("reload refused (\(reason)): the instances could not be read from the database: \(error); the jobs in force stay")
                return
            }
        }
        switch result {
        case let .failure(errors):
            let problems = errors.errors.map(\.description)
            if let runtime = machine?.scheduler.runtime {
                // One machine: its runtime says it (an observation the dashboard shows too).
                runtime.refuseReload(problems, reason: reason)
                return
            }
            logger.error("reload refused (\(reason)): \(problems.count) error\(problems.count == 1 ? "" : "s") in \(jobsDirectory); the jobs in force stay")
            for problem in problems { logger.error("\(problem)") }
        case let .success(configs):
            let specs = configs.map(\.spec)
            clusterControl?.jobs = specs
            node.reload(specs, reason: reason)
        }
    }

    /// A per-machine seed for jitter, from /etc/machine-id (stable across restarts).
    static func machineSeed() -> UInt64 {
        let id = ConditionsProbe.readFile("/etc/machine-id") ?? ConditionsProbe.readFile("/proc/sys/kernel/random/boot_id") ?? "refreshd"
        return SchedulerCore.stableHash(id)
    }
}

/// What a server started beside the control socket is given: the scheduler (its runtime, and
/// its loop to hand work to with `performOnLoop`), the control server whose commands it calls
/// (`answer`), and the state directory (to read the store on a read-only connection).
package struct DaemonParts: @unchecked Sendable {
    package let scheduler: RefreshScheduler
    package let control: ControlServer
    package let stateDirectory: String
    /// The jobs folder refreshd runs from (the dashboard's Simulate page reads it as `simulate` does).
    package let jobsDirectory: String
    /// A cluster node's facts (issue 32), read from the database; nil on one machine, whose live
    /// facts are its runtime's (`scheduler`) and whose state is the file in `stateDirectory`.
    package var node: NodeFacts?
}

/// What a cluster node gives a server beside its control socket (the dashboard): the cluster
/// as the database holds it, the same on every node, and this node's own lease events.
package struct NodeFacts: Sendable {
    /// Every shard's state, read-only (`StateReader`).
    package var reader: @Sendable () throws -> StateReader
    /// Every shard's pending requests and runs in flight, and who leads each shard (`watch`'s view).
    package var view: @Sendable () throws -> (snapshot: SchedulerSnapshot, cluster: ClusterStatus)
    /// The jobs in force on this node.
    package var jobs: @Sendable () -> [JobSpec]
    /// This node's latest lease events (takeovers, releases, fences), oldest first.
    package var history: @Sendable () -> [(at: Instant, line: String)]
    /// Adds an observer of every shard this node leads, now and after each takeover.
    package var observe: @Sendable (@escaping @Sendable (RuntimeObservation) -> Void) -> Void
    /// The bound on concurrent runs, per shard.
    package var maxConcurrentRuns: Int
}
