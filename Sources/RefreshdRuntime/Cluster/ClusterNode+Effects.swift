import Foundation
import RefreshdCore

/// Carrying out the lease machine's effects (issue 32): database calls and restores through the
/// call runner, what a shard's runtime must do on its own context, never a wait on the node's
/// thread. Moved out of ClusterNode.swift, which held the node's state and its entry points too.
extension ClusterNode {
    /// Under `lock`: one effect of the lease machine. Database calls go to `call`, whose answers
    /// come back as events; what a shard's runtime must do runs on its own context (`onShard`).
    func carryOut(_ effect: LeaseMachine.Effect, into queue: inout [LeaseMachine.Event]) {
        let lease = machine.settings.lease
        switch effect {
        case .survey:
            call { [self] in
                var answer: [LeaseMachine.Event]
                do {
                    let live = try database.heartbeat(node: name, ttl: lease)
                    let leases = try database.leases()
                    let now = try database.now()
                    answer = [.surveyed(live: live, leases: leases, databaseNow: now)]
                } catch {
                    answer = [.surveyFailed]
                }
                lock.withLock { applyCommands() }
                return answer
            }
        case .withdraw:
            call { [self] in
                _ = try? database.heartbeat(node: name, ttl: .zero)
                return []
            }
        case let .acquire(shard):
            call { [self] in
                let sent = monotonic()
                do {
                    let answer = try database.acquire(shard: shard, node: name, lease: lease)
                    if answer?.owner != name { count { $0.acquiresRefused += 1 } }
                    return [.acquired(shard: shard, lease: answer, sentAt: sent)]
                } catch {
                    return [.acquireFailed(shard: shard)]
                }
            }
        case let .renew(shard, epoch):
            call { [self] in
                let sent = monotonic()
                do {
                    let answer = try database.renew(shard: shard, node: name, epoch: epoch, lease: lease)
                    count { if answer == nil { $0.renewalsRefused += 1 } else { $0.renewals += 1 } }
                    return [.renewed(shard: shard, epoch: epoch, lease: answer, sentAt: sent)]
                } catch {
                    count { $0.renewalsFailed += 1 }
                    return [.renewFailed(shard: shard, epoch: epoch)]
                }
            }
        case let .release(shard, epoch):
            if let term = terms.removeValue(forKey: shard) {
                // Drained: nothing runs; it launches nothing more, and commits nothing more.
                onShard(term) { runtime in runtime.fence("shard \(shard) handed over") }
                note("released shard \(shard) (epoch \(epoch))")
                count { $0.releases += 1 }
            }
            call { [self] in
                try? database.release(shard: shard, node: name, epoch: epoch)
                return []
            }
        case let .lead(shard, epoch):
            lead(shard, epoch)
        case let .handOver(shard, epoch):
            guard var term = terms[shard], term.epoch == epoch else { return }
            term.handingOver = true
            terms[shard] = term
            // No launch from now on; the runs in flight end within their allowance, and the
            // shard is released when none is left (`drained`).
            onShard(term) { runtime in runtime.setAdmissionPolicy(HoldEverything()) }
            note("handing over shard \(shard) (epoch \(epoch))")
        case let .stopShard(shard, epoch, signal):
            guard var term = terms[shard], term.epoch == epoch else { return }
            term.handingOver = true
            terms[shard] = term
            onShard(term) { runtime in runtime.stopSignalReceived(signal) }
            note("stopping shard \(shard) (epoch \(epoch)): \(signal)")
        case .left:
            wakeUp = nil
            note("left: no shard led or taken")
        case let .fence(shard, epoch, reason):
            note("fenced shard \(shard) (epoch \(epoch)): \(reason)")
            let kind = switch reason {
            case .renewalNotConfirmed: "renewal-not-confirmed"
            case .renewalRefused: "renewal-refused"
            case .commitRefused: "commit-refused"
            }
            count { $0.fences[kind, default: 0] += 1 }
            guard let term = terms[shard], term.epoch == epoch else { return }
            terms[shard] = nil
            // The kill first, from here and at once (the libuv daemon: SIGKILL to the shard's
            // live process groups); the runtime's own expiration and kill follow on its context.
            onFence?(shard, epoch)
            onShard(term) { runtime in runtime.fence("shard \(shard) epoch \(epoch): \(reason)") }
        case let .armTimer(at):
            wakeUp = at
        }
    }

    /// Under `lock`: a database call through `callRunner`, or at once with its answers queued
    /// for this very `handle` (no runner).
    func call(_ body: @escaping @Sendable () -> [LeaseMachine.Event]) {
        if let callRunner { callRunner(body) } else { reported.append(contentsOf: body()) }
    }

    /// Under `lock`: `body` on the execution context of `term`'s runtime (nil `onShardContext`:
    /// at once).
    func onShard(_ term: Term, _ body: @escaping @Sendable (RefreshRuntime) -> Void) {
        let runtime = term.runtime
        if let onShardContext { onShardContext(term.shard, term.epoch) { body(runtime) } } else { body(runtime) }
    }

    /// Under `lock`: takes `shard` at `epoch`: its runtime restored from the database and loaded
    /// with the shard's jobs, as a restart after kill -9 is. The restore reads the database, so
    /// it is a call like the others; the runtime is led only if the lease machine still leads
    /// the shard at that epoch when it is done (else it is fenced before it ever runs).
    func lead(_ shard: Int, _ epoch: Int64) {
        var options = self.options
        if !database.reapsPreviousOwners { options.configuration.retriesInterruptedRuns = false }
        options.configuration.shardPlace = ShardPlace(map: map, shard: shard)
        options.onFenced = { [weak self] reason in
            self?.lock.withLock { self?.reported.append(.commitFailed(shard: shard, epoch: epoch, reason: reason)) }
        }
        let shardJobs = jobs(of: shard)
        let activitySettings = activitySettings
        call { [self, options] in
            let runtime: RefreshRuntime
            do {
                let store = try database.store(shard: shard, epoch: epoch)
                runtime = try makeRuntime(shard, epoch, store, options)
            } catch {
                return [.commitFailed(shard: shard, epoch: epoch, reason: "could not restore: \(error)")]
            }
            runtime.load(shardJobs)
            if let activitySettings { runtime.setActivitySettings(activitySettings) }
            lock.withLock { adopt(runtime, shard: shard, epoch: epoch) }
            return []
        }
    }

    /// Under `lock`: a restored runtime becomes the shard's term if the machine still holds the
    /// shard at `epoch`; a stop signal or a hand-over that came during the restore reaches it now.
    func adopt(_ runtime: RefreshRuntime, shard: Int, epoch: Int64) {
        defer { onRestored?(shard, epoch) }
        guard let state = machine.shards[shard], state.epoch == epoch else {
            runtime.fence("shard \(shard) epoch \(epoch): no longer led when its restore ended")
            return
        }
        var term = Term(shard: shard, epoch: epoch, runtime: runtime)
        if case .handingOver = state { term.handingOver = true }
        terms[shard] = term
        note("leads shard \(shard) (epoch \(epoch))")
        count { $0.leads += 1 }
        if term.handingOver {
            if let stopSignalName {
                onShard(term) { runtime in runtime.stopSignalReceived(stopSignalName) }
            } else {
                onShard(term) { runtime in runtime.setAdmissionPolicy(HoldEverything()) }
            }
        } else {
            applyCommands(shard: shard)
        }
    }
}
