import Foundation
@_spi(Benchmarks) import RefreshdCore
@_spi(Benchmarks) import RefreshdRuntime

/// Each node's modelled calls thread (issue 32): a call answered at once takes no time, a call of
/// a cut-off node waits for its bound; with `callsOnNodeThread` the node's own thread waits for
/// them too (the design before issue 32). And a stopped node's exit.
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
                cluster.deliver(node.callAnswers)
                node.callAnswers = []
            }
            guard !node.calls.isEmpty else { return }
            let answers = node.calls.removeFirst()()
            let waited = node.connection?.takeWaited() ?? .zero
            if waited > .zero {
                node.callEnds = world + waited
                node.callAnswers = answers
            } else {
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

    /// A stopped node has left: it is gone, as after an exit (a restart boots it again).
    func left(_ node: Node) {
        node.cluster = nil
        node.calls = []
        node.callEnds = nil
        report.events.append("+\(Report.seconds(world.duration(since: start))) \(node.name): exited (left the cluster)")
        if let stopped = node.stoppedAt { report.stopTimes.append(world.duration(since: stopped)) }
        for term in node.hosts {
            if let alive = term.host.livingProcesses.first {
                report.violations.append("\(node.name) exited with \(alive.identifier)[\(alive.runID)] of shard \(term.shard) still alive")
            }
        }
    }
}
