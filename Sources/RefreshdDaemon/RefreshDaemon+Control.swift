import Foundation
import Logging
import Refreshd
import RefreshdCore
import RefreshdRuntime
import RefreshdStore

/// A cluster node's control loop: the control socket answered from the database, the jobs
/// folder's watch and its reloads (`JobFilesReloader`, as on one machine's shard loop).
extension RefreshDaemon {
    /// The node's control socket (`STATE/control.sock`; the state directory's lock is held): the
    /// one-machine `ControlServer` unchanged (its limits, peer credentials, error codes,
    /// `watch`), hosted by a scheduler with no jobs over an in-memory store on a loop and thread
    /// of their own, its commands answered from the database by `ClusterControl`. Its calls
    /// block on the network, so neither on a shard's loop nor on the node's lease thread.
    func startControl(jobs: [JobSpec], options: RefreshRuntime.Options) throws {
        // The shared container is the shards' (the dashboard shows the renditions there).
        var runtimeOptions = RefreshRuntime.Options(configuration: options.configuration, sharedContainer: options.sharedContainer, logger: logger)
        runtimeOptions.logger.logLevel = .warning
        let scheduler = try RefreshScheduler(store: InMemoryStore(), runtimeOptions: runtimeOptions,
                                             options: RefreshScheduler.Options(configuration: options.configuration, logger: runtimeOptions.logger,
                                                                               runCgroups: false))
        let server = ControlServer(scheduler: scheduler, stateDirectory: stateDirectory, limits: controlLimits)
        let cluster = ClusterControl(database: database, node: nodeName, jobs: jobs)
        let node = self.node
        cluster.nodeCounters = { node?.counters ?? ClusterNode.Counters() }
        cluster.launches = { [weak self] in self?.launchCount.withLock { $0 } ?? 0 }
        server.clusterAnswer = { cluster.answer($0, $1) }
        // `watch`: every shard from the database, then the cluster again every second.
        server.clusterView = { try? cluster.view() }
        server.onClusterSubscriber = { [weak self] in self?.startWatchTimer() }
        try server.start()
        scheduler.runtime.load([])
        clusterControl = cluster
        // The reloads and the jobs folder's watch live on the control loop (a loop with nothing
        // else to do): the same `JobFilesReloader` as one machine's, applied to the node.
        reloader = JobFilesReloader(
            directory: jobsDirectory, loop: scheduler, timeout: reloadTimeout, logger: logger, load: loadJobs,
            jobsInForce: { cluster.jobs.count }, isStopping: { [weak self] in self?.node?.isStopping ?? true },
            apply: { [weak self] result, reason in self?.applyReload(result, reason: reason) })
        if !scheduler.watchDirectory(jobsDirectory, onChange: { [weak self] in
            guard let self else { return }
            reloader?.request("\(jobsDirectory) changed")
        }) {
            logger.warning("cannot watch \(jobsDirectory) for changes; send SIGHUP to reload")
        }
        let ended = DispatchSemaphore(value: 0)
        let logger = self.logger
        let thread = Thread {
            do { try scheduler.run() } catch { logger.warning("control socket stopped: \(error)") }
            ended.signal()
        }
        thread.name = "refreshd-control"
        thread.start()
        control = (scheduler, server, ended)
    }

    /// What the dashboard reads on this node: the cluster from the database (`ClusterControl`,
    /// as the control socket answers), this node's lease events and its shards' observations.
    func nodeFacts(_ cluster: ClusterControl) -> NodeFacts {
        NodeFacts(reader: { try cluster.reader() }, view: { try cluster.view() }, jobs: { cluster.jobs },
                  history: { [weak self] in self?.recentHistory.withLock { $0 } ?? [] },
                  observe: { [weak self] observer in self?.shardObservers.withLock { $0.append(observer) } },
                  maxConcurrentRuns: settings.maxConcurrentRuns)
    }

    /// Asks for the job files to be read again (any thread): SIGHUP.
    func requestReload(_ reason: String) {
        control?.scheduler.performOnLoop { [weak self] in self?.reloader?.request(reason) }
    }
}
