import CLibUV
import Foundation
import Glibc
import Logging
import Refreshd
import RefreshdCore
import RefreshdRuntime
import Synchronization

/// The hosts of the shards a node leads: each a `RefreshScheduler` over the shard's fenced
/// store; one machine's is also the daemon's face (`machineFace`).
extension RefreshDaemon {
    /// A shard's runtime on a scheduler of its own (node thread, under the node's lock). Its
    /// loop starts after the node has loaded the shard's jobs (`afterNode`).
    func makeRuntime(_ shard: Int, _ epoch: Int64, _ store: any StateStoring, _ options: RefreshRuntime.Options) throws -> RefreshRuntime {
        var options = options
        // Every line of a shard's runtime names the shard (and its term): ` shard=2 epoch=5`;
        // one machine's has one shard for its life, whose lines name nothing.
        var logger = self.logger
        if !isMachine {
            logger[metadataKey: "shard"] = "\(shard)"
            logger[metadataKey: "epoch"] = "\(epoch)"
        }
        options.logger = logger
        options.conditionsReread = RefreshScheduler.Options().conditionsFallbackInterval
        let reported = options.onFenced
        options.onFenced = { [weak self] reason in
            reported?(reason)
            self?.wake()
        }
        // One machine's scheduler owns the process as `refreshd run` did (its signals, the
        // subreaper, the cgroup a spawn joins); a node's shards share it with one another.
        let owns = isMachine && handleSignals
        let hostOptions = RefreshScheduler.Options(configuration: options.configuration, handleSignals: owns, logger: logger,
                                                   runCgroups: settings.runCgroups, ownsProcess: owns)
        let scheduler = try RefreshScheduler(store: store, runtimeOptions: options, options: hostOptions, ownsProcess: owns)
        if let webhooks { scheduler.webhookSender = { notification, done in webhooks.send(notification, done: done) } }
        // A publication is written by the shard's leader only, while its lease holds.
        let node = self.node
        scheduler.publicationGate = { [weak node] in node?.mayPublish(shard: shard, epoch: epoch) ?? false }
        hostsLock.withLock { _ in hosts.append(ShardHost(shard: shard, epoch: epoch, scheduler: scheduler)) }
        let server = control?.server
        scheduler.runtime.observe { [weak self, weak server] observation in
            // A run's end may drain a shard being handed over: the node looks at once.
            if observation.kind == .finished || observation.kind == .interrupted { self?.wake() }
            if observation.kind == .launched { self?.launchCount.withLock { $0 += 1 } }
            self?.clusterControl?.exporter.record([observation])
            // `watch` on this node: its shards' events (not a shard's stop: the node goes on).
            if observation.kind != .stopping, observation.kind != .stopped {
                server?.observed(observation)
                for observer in self?.shardObservers.withLock({ $0 }) ?? [] { observer(observation) }
            }
        }
        if isMachine { try machineFace(scheduler) }
        return scheduler.runtime
    }

    /// One machine's face, on its one shard's scheduler (calls thread, before its loop runs):
    /// the control socket answered by its runtime, the metrics and systemd's notifications
    /// (`DaemonControl`), the jobs folder's watch and SIGHUP's reload on its loop.
    func machineFace(_ scheduler: RefreshScheduler) throws {
        // Signal handlers first: a SIGTERM sent as soon as "started" is logged must be handled.
        scheduler.prepareSignals()
        let control = try DaemonControl(scheduler: scheduler, stateDirectory: stateDirectory, metricsFile: metricsFile,
                                        environment: environment, limits: controlLimits, logger: logger)
        machine = (scheduler, control)
        reloader = JobFilesReloader(directory: jobsDirectory, loop: scheduler, timeout: reloadTimeout, logger: logger, load: loadJobs,
                                    jobsInForce: { [weak scheduler] in scheduler?.runtime.jobsInForce.count ?? 0 },
                                    isStopping: { [weak scheduler] in scheduler?.isStopping ?? true },
                                    apply: { [unowned self] result, reason in applyReload(result, reason: reason) })
        scheduler.onHangup = { [unowned self] in
            // The jobs folder's watch follows inodes: SIGHUP re-arms it on what is at the path now.
            for watch in scheduler.directoryWatches { watch.rearm() }
            reload(reason: "SIGHUP")
        }
        if !scheduler.watchDirectory(jobsDirectory, onChange: { [unowned self] in reload(reason: "\(jobsDirectory) changed") }) {
            logger.warning("cannot watch \(jobsDirectory) for changes; send SIGHUP to reload")
        }
    }

    /// One machine's shard is restored (node thread, before its loop starts): the servers
    /// beside the control socket start, the start is logged, and systemd hears READY once the
    /// loop has armed its timer. A server that cannot start stops refreshd before anything runs.
    func machineRestored(_ host: ShardHost) -> Bool {
        guard let control = machine?.control else { return false }
        let parts = DaemonParts(scheduler: host.scheduler, control: control.server, stateDirectory: stateDirectory, jobsDirectory: jobsDirectory)
        do {
            for start in companions { let stop = try start(parts); companionStops.append(stop) }
        } catch {
            failure = error
            node?.stopSignal("SIGTERM")
            return false
        }
        let pending = host.scheduler.runtime.snapshot(quietInstances: false).1
        logger.info("refreshd started: \(loadedCount) job\(loadedCount == 1 ? "" : "s") from \(jobsDirectory), \(pending) pending, state in \(stateDirectory), max \(settings.maxConcurrentRuns) concurrent runs")
        host.scheduler.performOnLoop { control.ready() }
        return true
    }
}
