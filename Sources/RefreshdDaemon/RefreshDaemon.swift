import Foundation
import Glibc
import Logging
import Refreshd
import RefreshdConfig
@_spi(Benchmarks) import RefreshdCore
@_spi(Benchmarks) import RefreshdRuntime
import RefreshdStore

/// `refreshd run`: jobs from a directory of YAML files, state in a directory, until a signal.
///
/// It loads and validates every job file (refusing to start on any error), declares each job as
/// a command handler, restores durable state, gives each job without a pending request its first
/// request, and runs the loop. Edits to the directory (seen with inotify, debounced) and SIGHUP
/// reload the config; an invalid config is refused and the running one stays in force.
package final class RefreshDaemon: @unchecked Sendable {
    package var jobsDirectory: String
    package var stateDirectory: String
    package var sharedContainer: String?
    /// The scheduler's settings (`run`'s options), as a cluster node takes them too.
    package var settings: RunSettings
    package var logger: Logger
    /// Install SIGTERM/SIGINT/SIGHUP handlers (true for `refreshd run`; tests embed without).
    package var handleSignals = true
    /// A reload still reading the job directory after this long is abandoned: the running config
    /// stays, and scheduling never waited for it (the reading happens on a worker thread).
    package var reloadTimeout: Duration = .seconds(10)
    /// Where to write the metrics (Prometheus text, replaced atomically) for node_exporter's
    /// textfile collector; nil writes none (the control socket's `metrics` still answers).
    package var metricsFile: String?
    /// The environment read for systemd's `NOTIFY_SOCKET` and `WATCHDOG_USEC`.
    package var environment: [String: String] = ProcessInfo.processInfo.environment
    /// The control socket's bounds (clients, subscribers, queued bytes, descriptor reserve).
    package var controlLimits = ControlServer.Limits()
    /// The code of the built-in actions job files may name (`refreshd run` binds staging's).
    package var actions: ActionBinding = .none
    /// The control socket, notifications and metrics while running.
    var control: DaemonControl?
    /// Servers started beside the control socket once the jobs are loaded, before the loop runs
    /// (the web dashboard of `run --http`); each returns how to stop it, called once the loop has
    /// returned. A start that throws stops refreshd before it schedules anything.
    package var companions: [(DaemonParts) throws -> () -> Void] = []
    /// Reads the job directory; replaceable so tests can stand in a slow or hung read.
    var loadJobs: @Sendable (String) -> Result<[JobConfig], ConfigErrors> = { JobDirectory.load($0) }
    var scheduler: RefreshScheduler?
    /// The job files read again as `ReloadMachine` says (loop thread; made at the first reload,
    /// so it takes `reloadTimeout` and `loadJobs` as set).
    var reloader: JobFilesReloader?

    package init(jobsDirectory: String, stateDirectory: String, sharedContainer: String? = nil,
                maxConcurrentRuns: Int = 4, seed: UInt64? = nil, logger: Logger = Logger(label: "refreshd")) {
        self.jobsDirectory = jobsDirectory
        self.stateDirectory = stateDirectory
        self.sharedContainer = sharedContainer
        settings = RunSettings(maxConcurrentRuns: maxConcurrentRuns, seed: seed)
        self.logger = logger
    }

    /// Runs until SIGTERM or SIGINT has stopped every run.
    ///
    /// - Throws: `ConfigErrors` for an invalid job directory, `StoreError` for an unusable state
    ///   directory, `SchedulerFailure` if state could not be committed while running.
    package func run() throws {
        // Until the loop handles them (prepareSignals), the signals whose default action would
        // kill refreshd without its stop sequence are ignored: reading the job files can take a
        // while, and a logrotate SIGUSR1 may come then. (libuv resets them for every job.)
        if handleSignals {
            for number in RefreshScheduler.nonStopSignals { Glibc.signal(number, SIG_IGN) }
        }
        let loaded = try loadJobs(jobsDirectory).get()
        let configuration = settings.configuration
        // `refreshd run` owns its process (no other thread forks, every child is a run's); an
        // embedded daemon (tests) does not.
        var options = RefreshScheduler.Options(
            stateDirectory: stateDirectory, sharedContainer: sharedContainer,
            configuration: configuration, handleSignals: handleSignals, logger: logger,
            runCgroups: settings.runCgroups, ownsProcess: handleSignals)
        options.actions = actions
        let scheduler = try RefreshScheduler(options: options)
        self.scheduler = scheduler
        // A plain timeline job may not take the widget kind of a saved instance (one added at
        // run time is in the state, not in the files): the start is refused at the job's
        // widget.kind, as a reload is, and the instance keeps its kind and all its state.
        let clashes = scheduler.runtime.instanceKindClashes(loaded.map(\.spec))
        if !clashes.isEmpty { throw ConfigErrors(kindClashes: clashes, in: loaded, advice: ConfigErrors.startClashAdvice) }
        // Failure notifications' webhooks (issue 25): a thread of their own, at the first one.
        let webhooks = WebhookSender()
        defer { webhooks.shutdown() }
        scheduler.webhookSender = { notification, done in webhooks.send(notification, done: done) }
        // Declares every job, restores the saved state, then seeds first requests (the runtime
        // does all three, so the simulator loads job files by the same rules).
        // Signal handlers first: a SIGTERM sent as soon as "started" is logged must be handled.
        scheduler.prepareSignals()
        // The state directory's lock is held (the scheduler took it): the socket can be bound.
        let control = try DaemonControl(scheduler: scheduler, stateDirectory: stateDirectory,
                                        metricsFile: metricsFile, environment: environment,
                                        limits: controlLimits, logger: logger)
        self.control = control
        let pending = scheduler.runtime.load(loaded.map(\.spec))
        // After the load: the settings reach the activity machine once it is restored.
        if settings.activities != ActivitySettings() { scheduler.runtime.setActivitySettings(settings.activities) }
        logger.info("refreshd started: \(loaded.count) job\(loaded.count == 1 ? "" : "s") from \(jobsDirectory), \(pending) pending, state in \(stateDirectory), max \(settings.maxConcurrentRuns) concurrent runs")
        scheduler.onHangup = { [unowned self] in
            // The jobs folder's watch follows inodes: SIGHUP re-arms it on what is at the path now.
            for watch in self.scheduler?.directoryWatches ?? [] { watch.rearm() }
            self.reload(reason: "SIGHUP")
        }
        if !scheduler.watchDirectory(jobsDirectory, onChange: { [unowned self] in self.reload(reason: "\(self.jobsDirectory) changed") }) {
            logger.warning("cannot watch \(jobsDirectory) for changes; send SIGHUP to reload")
        }
        var stops: [() -> Void] = []
        defer { for stop in stops.reversed() { stop() } }
        for start in companions {
            stops.append(try start(DaemonParts(scheduler: scheduler, control: control.server, stateDirectory: stateDirectory,
                                                   jobsDirectory: jobsDirectory)))
        }
        // Runs on the loop's first turn, after `run()` has restored state and armed the timer.
        scheduler.performOnLoop { control.ready() }
        try scheduler.run()
    }

    /// Re-reads the job directory (loop thread). Valid: added jobs are submitted, removed jobs'
    /// pending requests cancelled, changed jobs' pending requests replaced, unchanged jobs left
    /// alone (their pending requests and counters too). Invalid: every error is logged and the
    /// running config stays.
    ///
    /// The files are read and validated on a worker thread, so a slow disk or a hostile file
    /// never holds up timers, launches or signals (`JobFilesReloader`: `ReloadMachine`'s rules,
    /// the same for a cluster node).
    func reload(reason: String) {
        guard let scheduler, !scheduler.isStopping else { return }
        if reloader == nil {
            reloader = JobFilesReloader(directory: jobsDirectory, loop: scheduler, timeout: reloadTimeout, logger: logger, load: loadJobs,
                                        jobsInForce: { [weak scheduler] in scheduler?.runtime.jobsInForce.count ?? 0 },
                                        isStopping: { [weak scheduler] in scheduler?.isStopping ?? true },
                                        apply: { [unowned self] result, reason in apply(result, reason: reason) })
        }
        reloader?.request(reason)
    }

    /// Applies a directory read as a diff against the config in force (the runtime's
    /// `ReloadPlan`), or refuses it whole: the running config stays.
    func apply(_ result: Result<[JobConfig], ConfigErrors>, reason: String) {
        guard let scheduler, !scheduler.isStopping else { return }
        switch result {
        case let .failure(errors):
            scheduler.runtime.refuseReload(errors.errors.map(\.description), reason: reason)
        case let .success(jobs):
            let specs = jobs.map(\.spec)
            // A plain timeline job may not take the widget kind of an instance added since the
            // last read (instances live in the state, not in the files): refused at its
            // widget.kind, the whole reload with it, as for any invalid job.
            let clashes = scheduler.runtime.instanceKindClashes(specs)
            guard clashes.isEmpty else {
                scheduler.runtime.refuseReload(ConfigErrors(kindClashes: clashes, in: jobs).errors.map(\.description), reason: reason)
                return
            }
            scheduler.runtime.reload(specs, reason: reason)
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
