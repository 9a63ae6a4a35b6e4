import CLibUV
import Foundation
import Glibc
import Logging
@_spi(Benchmarks) import Refreshd
import RefreshdConfig
@_spi(Benchmarks) import RefreshdCore
@_spi(Benchmarks) import RefreshdRuntime
@_spi(Benchmarks) import RefreshdStore
import Synchronization

/// `refreshd run --store ...`: one node of a cluster (issue 24) on the libuv host.
///
/// Threads (issue 32: nothing that waits for the database may delay a deadline): the calling
/// thread is the NODE thread. It owns the `ClusterNode`, feeds its lease machine and never
/// waits: its small libuv loop has the node's timer (the lease machine's wake-up, nothing
/// polls), a uv_async for wake-ups from other threads (a database answer, a run's end that may
/// drain a hand-over, an ended shard loop, a refused commit, an operator command), and the
/// SIGTERM/SIGINT handlers. The lease machine's database calls and the shards' restores run one
/// after another on the CALLS thread (`ClusterNode.callRunner`), which hands their answers back
/// and wakes the node thread; a call blocked on a cut-off network delays only the calls after
/// it, never the self-fence deadline. Each led shard gets a `RefreshScheduler` of its own over
/// the shard's fenced store, on a thread and loop of its own (its timer, processes, pipes),
/// started once its restore has loaded the shard's jobs (`onRestored`).
///
/// A fence (self-fence at the lease machine's deadline, a refused renewal, a refused commit)
/// SIGKILLs the shard's live process groups from the node thread first (`onFence`), then fences
/// the runtime on its own loop, whose expiration and kill come when it is free: a loop blocked
/// in a commit cannot delay the kill. SIGTERM/SIGINT go to the node (`ClusterNode.stopSignal`),
/// which passes them to every shard's runtime (the runtime's rule: graceful, then at once), takes
/// no shard any more, releases each as its runs end (or fences it at its deadline), and has left
/// when it holds none; the node then exits, giving its last releases a moment to be sent.
///
/// Job files are read again at SIGHUP and when the jobs folder changes; each led shard applies
/// its diff in one transaction (`ClusterNode.reload`). Every kind of job runs (issue 32); a
/// shard's publications are written only while its lease holds (`publicationGate`). The
/// control socket (`STATE/control.sock`) answers from the database on every node
/// (`ClusterControl`: `watch` and `metrics` too, and `--metrics-file`); no dashboard in cluster mode yet. The state directory
/// (locked, one node per directory) holds the socket and the default shared container
/// (`STATE/shared`), which every node must see at the same path.
package final class ClusterDaemon: @unchecked Sendable {
    package let jobsDirectory: String
    package let stateDirectory: String
    package var sharedContainer: String?
    package let database: any ShardDatabase
    package let nodeName: String
    package let lease: Duration
    /// The scheduler's settings (`run`'s options), as one machine takes them.
    package var settings: RunSettings
    package var logger: Logger
    package var actions: ActionBinding = .none
    /// The control socket's bounds (`run --max-control-clients`).
    package var controlLimits = ControlServer.Limits()
    /// The control socket's host (`startControl`).
    var control: (scheduler: RefreshScheduler, server: ControlServer, ended: DispatchSemaphore)?

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
    /// The job files read again as `ReloadMachine` says, on the control loop (as on one machine).
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
    /// `run --metrics-file` in cluster mode: the socket's `metrics` text, replaced atomically
    /// every renewal interval (lease / 3) and once more at the stop (`startMetricsFile`).
    package var metricsFile: String?
    let metricsTimer = Mutex<DispatchSourceTimer?>(nil)
    /// The last metrics file error logged (each new one is logged once).
    let metricsFileError = Mutex<String?>(nil)
    let metricsWriting = NSLock()
    /// Servers started beside the control socket (the dashboard of `run --http`), as on one
    /// machine (`RefreshDaemon.companions`); each returns how to stop it.
    package var companions: [(DaemonParts) throws -> () -> Void] = []
    /// This node's latest lease events for the dashboard (the node's own `history` is the node
    /// thread's): the newest `ClusterNode.historyLimit`.
    let recentHistory = Mutex<[(at: Instant, line: String)]>([])
    /// Observers of every shard this node leads (the dashboard's live updates).
    let shardObservers = Mutex<[@Sendable (RuntimeObservation) -> Void]>([])

    package init(jobsDirectory: String, stateDirectory: String, sharedContainer: String?, database: any ShardDatabase,
                 node: String, lease: Duration, settings: RunSettings, logger: Logger) {
        self.jobsDirectory = jobsDirectory
        self.stateDirectory = stateDirectory
        self.sharedContainer = sharedContainer
        self.database = database
        nodeName = node
        self.lease = lease
        self.settings = settings
        self.logger = logger
    }

    deinit {
        loop.deallocate()
        timer.deallocate()
        async.deallocate()
        for handle in signalHandles { handle.deallocate() }
    }

    /// The default node name: the host name, stable across restarts (a restarted node retakes
    /// its shards at once with a new epoch, fencing its previous life). Two nodes on one machine
    /// need `--node`.
    package static func defaultNodeName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "refreshd" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "refreshd" : name
    }

    /// Runs the node until SIGTERM or SIGINT has stopped every shard and its leases are given up.
    ///
    /// - Throws: `ConfigErrors` for an invalid job directory.
    package func run() throws {
        Glibc.signal(SIGPIPE, SIG_IGN)
        Glibc.signal(SIGHUP, SIG_IGN)  // a reload, once the loop handles it; never the default (exit)
        for number in RefreshScheduler.nonStopSignals { Glibc.signal(number, SIG_IGN) }
        let loaded = try JobDirectory.load(jobsDirectory).get()
        // A plain timeline job may not take the widget kind of an instance in the state (any
        // shard's): refused as one machine refuses it.
        // A node may start while the database is away (it takes shards once it answers): then
        // the check is the first reload's.
        do {
            let clashes = try StateReader(database: database, jobs: loaded.map(\.spec)).instanceKindClashes(loaded.map(\.spec))
            if !clashes.isEmpty { throw ConfigErrors(kindClashes: clashes, in: loaded, advice: ConfigErrors.startClashAdvice) }
        } catch let errors as ConfigErrors {
            throw errors
        } catch {
            logger.warning("the instances' widget kinds could not be checked against the job files (the database did not answer: \(error))")
        }
        let shared = sharedContainer ?? stateDirectory + "/shared"
        _ = mkdir(stateDirectory, 0o700)
        _ = mkdir(shared, 0o755)
        let configuration = settings.configuration
        let options = RefreshRuntime.Options(configuration: configuration, sharedContainer: shared, logger: logger, actions: actions)
        let node = ClusterNode(
            name: nodeName, database: database, jobs: loaded.map(\.spec), settings: LeaseMachine.Settings(lease: lease),
            options: options, monotonic: { Self.monotonicNow() },
            makeRuntime: { [unowned self] shard, epoch, store, options in try self.makeRuntime(shard, epoch, store, options) })
        // A namespace's live activities live in its shard (`ShardMap`): each shard's machine
        // takes the rules of `run`.
        if settings.activities != ActivitySettings() { node.activitySettings = settings.activities }
        node.onHistory = { [logger, nodeName, weak self] _, line in
            logger.info("node \(nodeName): \(line)")
            // The node's instants are monotonic; the dashboard shows wall-clock times.
            let now = Instant(secondsSinceEpoch: Date().timeIntervalSince1970)
            self?.recentHistory.withLock { lines in
                if lines.count >= ClusterNode.historyLimit { lines.removeFirst() }
                lines.append((now, line))
            }
        }
        // Operator commands are applied on the shard's own loop (its runtime's execution context).
        node.onShardContext = { [unowned self] shard, epoch, body in
            let host = hostsLock.withLock { _ in hosts.first { $0.shard == shard && $0.epoch == epoch } }
            host?.scheduler.performOnLoop(body)
        }
        node.onFence = { [unowned self] shard, epoch in
            let host = hostsLock.withLock { _ in hosts.first { $0.shard == shard && $0.epoch == epoch } }
            host?.scheduler.killLiveGroups()
        }
        node.callRunner = { [unowned self, unowned node] call in
            calls.async {
                node.deliver(call())
                self.wake()
            }
        }
        node.onRestored = { [unowned self] shard, epoch in
            hostsLock.withLock { _ in hosts.first { $0.shard == shard && $0.epoch == epoch } }?.restored.withLock { $0 = true }
            wake()
        }
        self.node = node
        // Failure notifications' webhooks (issue 25), for every shard's host: a thread of its own.
        let webhooks = WebhookSender()
        defer { webhooks.shutdown() }
        self.webhooks = webhooks
        let directoryLock = try StateDirectoryLock.acquire(directory: stateDirectory)
        defer { directoryLock.release() }
        try startControl(jobs: loaded.map(\.spec), options: options)
        startMetricsFile()
        var stops: [() -> Void] = []
        defer { for stop in stops.reversed() { stop() } }
        if let control, let cluster = clusterControl {
            let parts = DaemonParts(scheduler: control.scheduler, control: control.server, stateDirectory: stateDirectory,
                                    jobsDirectory: jobsDirectory, node: nodeFacts(cluster))
            for start in companions { stops.append(try start(parts)) }
        }
        prepareLoop()
        logger.info("refreshd started: cluster node \(nodeName), \(loaded.count) job\(loaded.count == 1 ? "" : "s") from \(jobsDirectory), \(database.shardCount) shards, lease \(lease.wholeMilliseconds) ms, shared container \(shared), max \(settings.maxConcurrentRuns) concurrent runs per shard")
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
        logger.info("refreshd stopped: cluster node \(nodeName)")
    }

    /// Commands were queued (NOTIFY, any thread): the node thread applies them for `shard`
    /// (nil: every shard it leads) at its next wake-up, which this sends.
    package func commandsQueued(shard: Int?) {
        queuedCommands.withLock { queued in
            if let shard { queued.shards.insert(shard) } else { queued.all = true }
        }
        wake()
    }

    /// A leader applied command `id` (nil: maybe any) (NOTIFY, any thread): the reply waiting
    /// for it reads its outcome (`ClusterControl+Outcomes`).
    package func commandsApplied(id: String?) {
        clusterControl?.commandsApplied(id: id)
    }

    /// Wakes the node thread (any thread): it settles the node and looks at its hosts.
    func wake() {
        asyncOpen.withLock { open in if open { _ = uv_async_send(async) } }
    }

    func prepareLoop() {
        uv_loop_init(loop)
        uv_timer_init(loop, timer)
        timer.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        uv_async_init(loop, async) { handle in
            guard let data = handle?.pointee.data else { return }
            let daemon = Unmanaged<ClusterDaemon>.fromOpaque(data).takeUnretainedValue()
            daemon.node?.settle()
            let queued = daemon.queuedCommands.withLock { queued in
                defer { queued = (false, []) }
                return queued
            }
            if queued.all {
                daemon.node?.applyQueuedCommands(shard: nil)
            } else {
                for shard in queued.shards.sorted() { daemon.node?.applyQueuedCommands(shard: shard) }
            }
            daemon.afterNode()
        }
        async.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        asyncOpen.withLock { $0 = true }
        var set = sigset_t()
        sigemptyset(&set)
        for number in [SIGTERM, SIGINT, SIGHUP, SIGCHLD] { sigaddset(&set, number) }
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        for number in [SIGTERM, SIGINT, SIGHUP] {
            let handle = UnsafeMutablePointer<uv_signal_t>.allocate(capacity: 1)
            uv_signal_init(loop, handle)
            handle.pointee.data = Unmanaged.passUnretained(self).toOpaque()
            uv_signal_start(handle, { handle, number in
                guard let data = handle?.pointee.data else { return }
                Unmanaged<ClusterDaemon>.fromOpaque(data).takeUnretainedValue().stopSignal(number)
            }, number)
            signalHandles.append(handle)
        }
    }

    func stopSignal(_ number: Int32) {
        if number == SIGHUP {
            // The watch follows inodes: SIGHUP re-arms it on what is at the path now.
            if let control = control?.scheduler {
                control.performOnLoop { for watch in control.directoryWatches { watch.rearm() } }
            }
            requestReload("SIGHUP")
            return
        }
        let name = number == SIGINT ? "SIGINT" : "SIGTERM"
        logger.info("received \(name): passed to every shard; the node takes no shard any more")
        node?.stopSignal(name)
        afterNode()
    }

    /// After every call into the node (node thread): starts the loops of shards just led, passes
    /// a stop on, forgets hosts whose loop ended, leaves when stopped, and re-arms the timer.
    func afterNode() {
        guard !done, let node else { return }
        let current = hostsLock.withLock { _ in
            hosts.removeAll { $0.started && $0.ended.withLock { $0 } }
            return hosts
        }
        for host in current where !host.started && host.restored.withLock({ $0 }) {
            host.started = true
            startLoop(host)
        }
        if node.hasLeft {
            // Every shard released or fenced (a fenced one's groups already killed). Its loops
            // are given a moment to end (their sweeps kill what left the groups), the releases
            // on the calls thread a moment to reach the database (others then take the shards
            // at once rather than at the lease's end); never more, since a loop may be blocked
            // on an unreachable database.
            let now = Self.monotonicNow()
            let leftAt = self.leftAt ?? now
            self.leftAt = leftAt
            let limit = leftAt + .seconds(5)
            if current.contains(where: { $0.started && !$0.ended.withLock { $0 } }), now < limit {
                armTimer(at: limit)
                return
            }
            let sent = DispatchSemaphore(value: 0)
            calls.async { sent.signal() }
            _ = sent.wait(timeout: .now() + .milliseconds(Int(min(lease / 3, .seconds(2)).wholeMilliseconds)))
            finish()
            return
        }
        // Nothing polls: the timer is the lease machine's one instant; a drained hand-over, an
        // ended shard loop, a refused commit and a queued command wake the node (`wake`).
        guard let wakeUp = node.wakeUp else {
            uv_timer_stop(timer)
            return
        }
        armTimer(at: wakeUp)
    }

    /// Node thread: the node's one timer at the monotonic instant `at`.
    func armTimer(at: Instant) {
        let delay = max(.zero, at.duration(since: Self.monotonicNow()))
        uv_timer_start(timer, { handle in
            guard let data = handle?.pointee.data else { return }
            let daemon = Unmanaged<ClusterDaemon>.fromOpaque(data).takeUnretainedValue()
            if let wakeUp = daemon.node?.wakeUp, wakeUp <= ClusterDaemon.monotonicNow() { daemon.node?.timerFired() } else { daemon.node?.settle() }
            daemon.afterNode()
        }, UInt64(delay.wholeMilliseconds), 0)
    }

    /// A shard's loop on a thread of its own; when it returns the node hears of it.
    func startLoop(_ host: ShardHost) {
        let logger = self.logger
        let thread = Thread { [weak self] in
            do {
                try host.scheduler.run()
            } catch let ended as SchedulerFailure {
                // A fenced or handed-over shard's runtime ends this way: no longer this node's.
                logger.info("shard \(host.shard) (epoch \(host.epoch)) left: \(ended.message)")
            } catch {
                logger.warning("shard \(host.shard) (epoch \(host.epoch)) stopped: \(error)")
            }
            host.ended.withLock { $0 = true }
            self?.wake()
        }
        thread.name = "refreshd-shard-\(host.shard)"
        thread.stackSize = 4 << 20
        thread.start()
    }

    func finish() {
        done = true
        uv_timer_stop(timer)
        uv_close(UnsafeMutableRawPointer(timer).assumingMemoryBound(to: uv_handle_t.self), nil)
        asyncOpen.withLock { open in
            open = false
            uv_close(UnsafeMutableRawPointer(async).assumingMemoryBound(to: uv_handle_t.self), nil)
        }
        for handle in signalHandles {
            uv_signal_stop(handle)
            uv_close(UnsafeMutableRawPointer(handle).assumingMemoryBound(to: uv_handle_t.self), nil)
        }
    }

    /// The node's monotonic clock (CLOCK_MONOTONIC: it runs on while the process is stopped).
    static func monotonicNow() -> Instant {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Instant(milliseconds: Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000)
    }
}
