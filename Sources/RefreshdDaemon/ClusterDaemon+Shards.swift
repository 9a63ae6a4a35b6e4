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

/// The hosts of the shards a node leads: each a `RefreshScheduler` over the shard's fenced
/// store. Moved out of ClusterDaemon.swift (the node thread, its loop and its stop), verbatim.
extension ClusterDaemon {
    /// A shard's runtime on a scheduler of its own (node thread, under the node's lock). Its
    /// loop starts after the node has loaded the shard's jobs (`afterNode`).
    func makeRuntime(_ shard: Int, _ epoch: Int64, _ store: any StateStoring, _ options: RefreshRuntime.Options) throws -> RefreshRuntime {
        var options = options
        // Every line of a shard's runtime names the shard (and its term): ` shard=2 epoch=5`.
        var logger = self.logger
        logger[metadataKey: "shard"] = "\(shard)"
        logger[metadataKey: "epoch"] = "\(epoch)"
        options.logger = logger
        let reported = options.onFenced
        options.onFenced = { [weak self] reason in
            reported?(reason)
            self?.wake()
        }
        let hostOptions = RefreshScheduler.Options(configuration: options.configuration, logger: logger, runCgroups: settings.runCgroups)
        let scheduler = try RefreshScheduler(store: store, runtimeOptions: options, options: hostOptions)
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
            // `watch` on this node: its shards' events (not a shard's stop: the node goes on).
            if observation.kind != .stopping, observation.kind != .stopped {
                server?.observed(observation)
                for observer in self?.shardObservers.withLock({ $0 }) ?? [] { observer(observation) }
            }
        }
        return scheduler.runtime
    }
}
