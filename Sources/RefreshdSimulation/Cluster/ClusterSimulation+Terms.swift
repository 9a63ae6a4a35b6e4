import Foundation
import RefreshdCore
import RefreshdRuntime

/// Each shard term's host (a `SimulatedHost` per term, the world as it is when the term
/// begins) and what the simulation checks of it: every observation, every launch against the
/// lease. Moved out of ClusterSimulation.swift (the nodes, the world's loop and the report).
extension ClusterSimulation {
    func makeRuntime(_ node: Node, _ shard: Int, _ epoch: Int64, _ store: any StateStoring,
                     _ options: RefreshRuntime.Options) throws -> RefreshRuntime {
        let behaviour = self.behaviour
        let host = SimulatedHost(start: world) { [unowned self, unowned node] order, job in
            self.launchSeen(node, shard: shard, epoch: epoch, order)
            return behaviour(order, job)
        }
        node.hosts.append((shard, epoch, host))
        // Its store calls are its loop's: a cut-off one blocks the loop until it fails.
        (store as? FencedStore)?.onHang = { [unowned self, unowned node, unowned host] bound in
            self.freeze(node, shard: shard, epoch: epoch, host, for: bound, "a call of its store")
        }
        host.onPublish = { [unowned self] _ in self.report.publications += 1 }
        configureHost?(host)
        var options = options
        options.logger.logLevel = .critical
        // What the runtime tells the world while its loop is blocked in a call, it tells when the
        // call has returned (the node hears of a refused commit then).
        if let told = options.onFenced {
            options.onFenced = { [unowned host] reason in host.performOnLoop { told(reason) } }
        }
        let runtime = try host.start(store: store, options: options)
        runtime.observe { [unowned self, unowned host] observation in host.performOnLoop { self.observed(observation, node, shard, epoch) } }
        // The world as it is now, before the restore (one machine's start sets it so): power
        // and network, and Low Power Mode before the restore asks for reloads. The budget is
        // the restored machine's, set once restored (`onRestored`).
        single.carry(.device, to: runtime, on: host, at: world)
        if single.isLowPower(at: world) { runtime.setLowPowerMode(true) }
        return runtime
    }

    /// One observation of a shard term's runtime, as its loop makes it.
    func observed(_ observation: RuntimeObservation, _ node: Node, _ shard: Int, _ epoch: Int64) {
        single.journal.record(observation)
        single.side.record(observation)
        single.notificationTally.record(observation)
        if observation.kind == .widget, observation.message.contains("ignored: no provider call in flight") {
            // A provider ran and its timeline was dropped: a reload lost (the call was taken
            // for interrupted, or asked twice).
            report.ignoredProviderResults += 1
            report.violations.append("\(node.name), shard \(shard) (epoch \(epoch)) at +\(Report.seconds(world.duration(since: start))) s: \(observation.message): a reload lost")
        }
    }

    /// A process starts: its lease must be valid at this database instant, the request new.
    func launchSeen(_ node: Node, shard: Int, epoch: Int64, _ order: LaunchOrder) {
        report.launches += 1
        if node.stoppedAt != nil, !node.heldAtStop.contains("\(shard)/\(epoch)") {
            report.violations.append("\(node.name) launched \(order.identifier)[\(order.runID)] in shard \(shard) (epoch \(epoch)), taken after its stop signal")
        }
        let row = (try? database.leases())?.first { $0.shard == shard }
        if let row, row.owner != node.name || row.epoch != epoch || row.expiresAt <= world {
            report.violations.append("\(node.name) launched \(order.identifier)[\(order.runID)] in shard \(shard) at epoch \(epoch) while the lease was \(row.owner ?? "nobody")'s epoch \(row.epoch) until \(row.expiresAt)")
        }
        started.append((shard, order.runID))
        if let run = committedRun(shard: shard, runID: order.runID) {
            let key = "\(shard) \(run.identifier) \(run.submitted.milliseconds) \(run.earliest.milliseconds)"
            if let other = launched[key], other != run.runID {
                report.duplicates += 1
                report.violations.append("request \(run.identifier) (earliest \(run.earliest)) launched twice: runs \(other) and \(run.runID)")
            }
            launched[key] = run.runID
        } else {
            report.lost += 1
            report.violations.append("\(node.name) started \(order.identifier)[\(order.runID)] in shard \(shard) whose start is not committed")
        }
    }
}
