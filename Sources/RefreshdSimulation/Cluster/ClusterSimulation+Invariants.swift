import Foundation
import RefreshdCore
import RefreshdRuntime

/// The cluster's invariants, checked after every step: liveness after a kill or a pause, no
/// request twice, no launch under an expired lease, no process of a fenced term alive.
extension ClusterSimulation {
    /// After a kill or a pause the victim's shards must be led again within the bound.
    func expectTakeover(of cluster: ClusterNode, _ what: String) {
        let led = Set(cluster.machine.led.keys)
        guard !led.isEmpty, nodes.filter({ $0.cluster != nil && $0.pausedUntil == nil }).count > 1 else { return }
        awaiting.append((world, led, what))
    }

    var bound: Duration { settings.lease + settings.renewEvery + .seconds(1) }

    /// How long a stopped node may take to leave: its runs' grace (or its lease, when it is cut
    /// off and fences instead), a renewal interval, a second.
    var stopBound: Duration {
        max(settings.lease, jobs.map(\.definition.grace).max() ?? .zero) + settings.renewEvery + .seconds(1)
    }

    func check() {
        // The audit of the shards' commits: each reload counted once.
        if let found = reloads.takeViolation() {
            report.violations.append("\(found.invariant) at +\(Report.seconds(found.time.duration(since: start))) s: \(found.message)")
        }
        checkLiveness()
        checkFencedProcesses()
        if widgetsCommitted {
            widgetsCommitted = false
            checkSharedBudgets()
        }
        checkDuplicateRuns()
    }

    /// Liveness: the shards of a killed or paused node led again within `bound`, a stopped
    /// node gone within `stopBound`.
    func checkLiveness() {
        let databaseReachable = !database.down
        awaiting.removeAll { item in
            let leaders = nodes.filter { $0.cluster != nil && $0.pausedUntil == nil }
            let ledNow = Set(leaders.flatMap { $0.cluster!.terms.keys })
            if item.shards.isSubset(of: ledNow) {
                report.takeoverTimes.append(world.duration(since: item.since))
                return true
            }
            // Only a node that is neither stopping nor gone can take them.
            let takers = leaders.filter { $0.stoppedAt == nil }
            if takers.isEmpty { return false }
            if world.duration(since: item.since) > bound, databaseReachable, faults.allSatisfy({ !$0.isPartitionOrDown }) {
                report.violations.append("\(item.what) at +\(Report.seconds(item.since.duration(since: start))) s: shards \(item.shards.subtracting(ledNow).sorted()) not led again within \(Report.seconds(bound)) s")
                return true
            }
            return false
        }
        // A stopped node leaves in time.
        for node in nodes where node.cluster != nil && node.pausedUntil == nil {
            if let stopped = node.stoppedAt, world.duration(since: stopped) > stopBound {
                report.violations.append("\(node.name) got SIGTERM at +\(Report.seconds(stopped.duration(since: start))) s and has not left within \(Report.seconds(stopBound)) s")
                node.stoppedAt = nil
            }
        }
    }

    /// Fencing: no process of a led term alive past the term's self-fence deadline, none of a
    /// fenced term alive after the step that fenced it.
    func checkFencedProcesses() {
        // No process of a led term alive past the term's self-fence deadline (the node's clock):
        // whatever its calls are doing, the node kills its runs by then.
        for node in nodes where node.pausedUntil == nil {
            guard let cluster = node.cluster else { continue }
            for term in node.hosts {
                guard let state = cluster.machine.shards[term.shard], state.epoch == term.epoch,
                      let confirmed = state.confirmed else { continue }
                let deadline = worldInstant(node, monotonic: settings.selfFence(sentAt: confirmed))
                guard world > deadline, let alive = term.host.livingProcesses.first else { continue }
                report.violations.append("\(node.name)'s \(alive.identifier)[\(alive.runID)] of shard \(term.shard) (epoch \(term.epoch)) still alive at +\(Report.seconds(world.duration(since: start))) s, past its self-fence deadline +\(Report.seconds(deadline.duration(since: start))) s")
            }
        }
        // No process of a fenced term alive after the step that fenced it.
        for node in nodes where node.pausedUntil == nil {
            for term in node.hosts {
                guard let fenced = node.fencedAt["\(term.shard)/\(term.epoch)"], fenced < world else { continue }
                if let alive = term.host.livingProcesses.first {
                    report.violations.append("\(node.name)'s \(alive.identifier)[\(alive.runID)] still alive after shard \(term.shard) was fenced at +\(Report.seconds(fenced.duration(since: start))) s")
                }
            }
        }
    }

    /// Runs of one job alive at once on several nodes: never two of live leaders, never the
    /// retry of an interrupted run while that run still runs (its slot twice); a zombie's
    /// run beside the next slot's is counted (no one can stop a frozen node's processes).
    func checkDuplicateRuns() {
        var byJob: [String: [(run: RunRecord, zombie: Bool, node: String)]] = [:]
        for node in nodes {
            for term in node.hosts {
                let current = node.pausedUntil == nil && node.cluster?.terms[term.shard]?.epoch == term.epoch
                for runID in Set(term.host.livingProcesses.map(\.runID)) {
                    guard let run = committedRun(shard: term.shard, runID: runID) else { continue }
                    byJob[run.identifier, default: []].append((run, !current, node.name))
                }
            }
        }
        for (job, runs) in byJob where runs.count > 1 {
            for (i, a) in runs.enumerated() {
                for b in runs[(i + 1)...] where a.run.runID != b.run.runID || a.node != b.node {
                    let pair = "\(job) \(min(a.run.runID, b.run.runID)) \(max(a.run.runID, b.run.runID))"
                    if !a.zombie, !b.zombie {
                        report.duplicates += 1
                        report.violations.append("\(job): runs \(a.run.runID) (\(a.node)) and \(b.run.runID) (\(b.node)) alive at once on two leaders")
                        continue
                    }
                    let (zombie, other) = a.zombie ? (a, b) : (b, a)
                    if zombie.run.outcome == .interrupted, other.run.attempt > zombie.run.attempt {
                        report.duplicates += 1
                        report.violations.append("\(job): run \(other.run.runID) on \(other.node) retries run \(zombie.run.runID), still running on \(zombie.node): its slot twice")
                    } else if zombieOverlaps.insert(pair).inserted {
                        report.zombieOverlaps += 1
                    }
                }
            }
        }
    }

    /// A budget a namespace (or a kind's families) shares is one budget across the cluster: the
    /// counted reloads of its widgets within its window, read from every shard's committed
    /// ledgers, never exceed its limit (the largest ceiling a ledger was counted under, if a
    /// reload raised it). One machine's timeline machine keeps this within its own state; on
    /// several nodes it holds only if every member lives in one shard (`ShardMap`).
    func checkSharedBudgets() {
        let decoder = JSONDecoder()
        var ledgers: [String: [(shard: Int, reload: Instant)]] = [:], ceilings: [String: Int] = [:]
        for shard in 0..<shards {
            for record in (try? database.committed(shard: shard).records(table: TimelineChange.widgetTable)) ?? [] {
                guard let w = try? decoder.decode(WidgetRecord.self, from: Data(record.value.utf8)),
                      let budget = sharedBudgets.first(where: { $0.kinds.contains(w.widget.kind) }) else { continue }
                ledgers[budget.group, default: []] += w.ledger.filter { $0 > world - budget.window && $0 <= world }.map { (shard, $0) }
                ceilings[budget.group] = max(ceilings[budget.group] ?? 0, w.ledgerCeiling)
            }
        }
        for budget in sharedBudgets {
            let counted = ledgers[budget.group] ?? []
            let limit = max(budget.limit, ceilings[budget.group] ?? 0)
            guard counted.count > limit else { continue }
            let shards = Set(counted.map(\.shard)).sorted().map(String.init).joined(separator: ", ")
            report.violations.append("the \(budget.group) budget shared by \(budget.kinds.sorted().joined(separator: ", ")): \(counted.count) reloads counted within \(Report.seconds(budget.window)) s across shards \(shards), beyond its limit of \(limit)")
        }
    }
}
