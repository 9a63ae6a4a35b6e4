import Foundation
import RefreshdCore
import RefreshdRuntime

/// Each node's modelled calls thread (issue 32): a call answered at once takes no time, a call of
/// a cut-off node waits for its bound; with `callsOnNodeThread` the node's own thread waits for
/// them too (the design before issue 32). Each shard's loop, whose own calls freeze it while
/// they hang. And a stopped node's exit.
extension ClusterSimulation {
    /// Whether the node's own thread waits for a call now (only with `callsOnNodeThread`).
    func blocked(_ node: Node) -> Bool { callsOnNodeThread && (node.callEnds.map { $0 > world } ?? false) }

    /// The node's calls thread up to now: the call in flight answers at its end, the next one
    /// starts (a call answered at once takes no time; a cut-off one waits for its bound).
    func pumpCalls(_ node: Node, _ cluster: ClusterNode) {
        while true {
            if let ends = node.callEnds {
                guard ends <= world else { return }
                node.callEnds = nil
                dispatch(node)
                cluster.deliver(node.callAnswers)
                node.callAnswers = []
            }
            guard !node.calls.isEmpty else { return }
            node.inCall = true
            let answers = node.calls.removeFirst()()
            node.inCall = false
            let waited = node.connection?.takeWaited() ?? .zero
            if waited > .zero {
                node.callEnds = world + waited
                node.callAnswers = answers
            } else {
                dispatch(node)
                cluster.deliver(answers)
            }
        }
    }

    /// The calls answered by now, and the node's handling of them, until nothing more is due.
    func settle(_ node: Node, _ cluster: ClusterNode) {
        repeat {
            pumpCalls(node, cluster)
            if blocked(node) { return }
            cluster.settle()
        } while !node.calls.isEmpty && node.callEnds == nil
    }

    /// `body` on the loop of `node`'s shard term (`ClusterNode.onShardContext`): at once, or when
    /// a call that blocks the loop has failed. Its database calls are the loop's own: one of a
    /// cut-off node (the read of the shard's queued commands) freezes the loop, not the node's
    /// calls thread.
    func onShardLoop(_ node: Node, _ shard: Int, _ epoch: Int64, _ body: @escaping @Sendable () -> Void) {
        // A call computes its answers whole at its start: what it hands a loop goes at its end.
        if node.inCall { return node.forLoops.append((shard, epoch, body)) }
        guard let host = node.hosts.first(where: { $0.shard == shard && $0.epoch == epoch })?.host else { return body() }
        host.performOnLoop { [unowned self, unowned node, unowned host] in
            let callsThread = node.connection?.takeWaited() ?? .zero
            body()
            let waited = node.connection?.takeWaited() ?? .zero
            node.connection?.addWaited(callsThread)
            if waited > .zero { self.freeze(node, shard: shard, epoch: epoch, host, for: waited, "a call on its loop") }
        }
    }

    /// The call that ended handed these bodies to its shards' loops (the survey's reads of
    /// their queued commands): they go now.
    func dispatch(_ node: Node) {
        let bodies = node.forLoops
        node.forLoops = []
        for (shard, epoch, body) in bodies { onShardLoop(node, shard, epoch, body) }
    }

    /// A call on the loop of `node`'s shard term hangs for `waited` (a cut-off connection): the
    /// host handles nothing until it fails, then the failure runs its course there.
    func freeze(_ node: Node, shard: Int, epoch: Int64, _ host: SimulatedHost, for waited: Duration, _ what: String) {
        let until = world + waited
        if let frozen = host.frozenUntil, frozen >= until { return }
        host.freeze(until: until)
        report.frozenLoops += 1
        let at = Report.seconds(world.duration(since: start)), to = Report.seconds(until.duration(since: start))
        report.events.append("+\(at) \(node.name): shard \(shard) (epoch \(epoch)) loop frozen until +\(to): \(what) hangs (cut off)")
    }

    /// A stopped node has left: it is gone, as after an exit (a restart boots it again).
    func left(_ node: Node) {
        node.cluster = nil
        node.calls = []
        node.callEnds = nil
        node.forLoops = []
        report.events.append("+\(Report.seconds(world.duration(since: start))) \(node.name): exited (left the cluster)")
        if let stopped = node.stoppedAt { report.stopTimes.append(world.duration(since: stopped)) }
        for term in node.hosts {
            if let alive = term.host.livingProcesses.first {
                report.violations.append("\(node.name) exited with \(alive.identifier)[\(alive.runID)] of shard \(term.shard) still alive")
            }
        }
    }
}
