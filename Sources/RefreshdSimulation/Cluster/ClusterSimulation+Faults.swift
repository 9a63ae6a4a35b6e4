import Foundation
import RefreshdCore

/// The node faults of a cluster simulation: when each begins and ends, and what it does to the
/// world (kill, restart, pause, resume, partition, database restart, join).
extension ClusterSimulation {
    enum Action: CustomStringConvertible {
        case kill(Int), restart(Int), pause(Int), resume(Int), cut(Int), join(Int), down, up, stop(Int)

        /// As the picture and the report's marks name it.
        var description: String {
            switch self {
            case let .kill(n): "kill node\(n)"
            case let .restart(n): "start node\(n)"
            case let .pause(n): "pause node\(n)"
            case let .resume(n): "resume node\(n)"
            case let .cut(n): "partition node\(n)"
            case let .join(n): "heal node\(n)"
            case .down: "database down"
            case .up: "database up"
            case let .stop(n): "SIGTERM node\(n)"
            }
        }
    }

    func faultBoundaries() -> [(at: Instant, action: Action)] {
        var out: [(at: Instant, action: Action)] = []
        for fault in faults {
            switch fault {
            case let .kill(n, at, restart):
                out.append((start + at, .kill(n)))
                if let restart { out.append((start + at + restart, .restart(n))) }
            case let .pause(n, at, span):
                out.append((start + at, .pause(n)))
                out.append((start + at + span, .resume(n)))
            case let .partition(n, at, span):
                out.append((start + at, .cut(n)))
                out.append((start + at + span, .join(n)))
            case let .databaseDown(at, span):
                out.append((start + at, .down))
                out.append((start + at + span, .up))
            case let .join(n, at):
                out.append((start + at, .restart(n)))
            case let .stop(n, at):
                out.append((start + at, .stop(n)))
            case .drift:
                break
            }
        }
        return out.enumerated().sorted { ($0.element.at, $0.offset) < ($1.element.at, $1.offset) }.map(\.element)
    }

    func apply(_ action: Action) {
        switch action {
        case let .kill(n):
            guard n < nodes.count, let cluster = nodes[n].cluster else { return }
            expectTakeover(of: cluster, "kill of \(nodes[n].name)")
            cluster.crash()
            nodes[n].calls = []
            nodes[n].callEnds = nil
            nodes[n].forLoops = []
            for term in nodes[n].hosts { term.host.crash() }
            for shard in open.keys.sorted() { close(shard: shard, node: n) }
            nodes[n].cluster = nil
            report.events.append("+\(Report.seconds(world.duration(since: start))) \(nodes[n].name): killed (kill -9)")
        case let .restart(n):
            guard n < nodes.count, nodes[n].cluster == nil else { return }
            report.events.append("+\(Report.seconds(world.duration(since: start))) \(nodes[n].name): restarted")
            boot(nodes[n])
        case let .pause(n):
            guard n < nodes.count, let cluster = nodes[n].cluster else { return }
            expectTakeover(of: cluster, "pause of \(nodes[n].name)")
            nodes[n].pausedUntil = world
            report.events.append("+\(Report.seconds(world.duration(since: start))) \(nodes[n].name): paused (SIGSTOP)")
        case let .resume(n):
            guard n < nodes.count, nodes[n].pausedUntil != nil else { return }
            nodes[n].pausedUntil = nil
            // Its processes ran on meanwhile: their ends are delivered now, late, after the
            // lease machine (whose first event fences what expired).
            for term in nodes[n].hosts { term.host.resume(at: world) }
            // The world went on while it was stopped: its shards see it as it is now.
            for action in worldState() { applyWorld(action, to: [nodes[n]]) }
            report.events.append("+\(Report.seconds(world.duration(since: start))) \(nodes[n].name): resumed (SIGCONT)")
        case let .cut(n):
            database.partition("node\(n)", true)
        case let .join(n):
            database.partition("node\(n)", false)
        case let .stop(n):
            guard n < nodes.count, let cluster = nodes[n].cluster else { return }
            nodes[n].stoppedAt = world
            nodes[n].heldAtStop = Set(cluster.machine.shards.compactMap { shard, state in state.epoch.map { "\(shard)/\($0)" } })
            report.events.append("+\(Report.seconds(world.duration(since: start))) \(nodes[n].name): SIGTERM")
            cluster.stopSignal("SIGTERM")
        case .down:
            database.down = true
        case .up:
            database.down = false
        }
    }
}

/// The scenario's world on nodes (issue 32): the device's reloads (`device: {reloads: ...}`),
/// widget intents and an operator's pauses reach every shard's leader at their instants, as on
/// one machine they reach its runtime; a killed or paused node hears none of them (the app's
/// reload asked while nobody led a widget's shard is lost, as one asked while refreshd was down).
/// The world's state (power and network, Low Power Mode, an emptied widget budget) reaches
/// every shard's leader too: at its changes, when a leader takes a shard (its restore starts
/// with the state of that instant, as one machine's restart does) and when a paused node
/// resumes (its host has the state of now).
extension ClusterSimulation {
    /// The scenario's world events this simulation applies, in time order (from the one-machine
    /// simulation's list, without its own faults: the nodes' are `faults`).
    func worldEvents() -> [(at: Instant, action: Simulation.ExternalEvent.Action)] {
        let log = single.faultLog
        defer { single.faultLog = log }
        return single.externalEvents().compactMap { event in Simulation.isCarried(event.action) ? (event.time, event.action) : nil }
    }

    /// Applies a world event to every shard led by a live node, on the shard's loop (at once,
    /// or when a call that blocks it returns).
    func applyWorld(_ action: Simulation.ExternalEvent.Action) { applyWorld(action, to: nodes) }

    func applyWorld(_ action: Simulation.ExternalEvent.Action, to nodes: [Node]) {
        for node in nodes where node.pausedUntil == nil {
            guard let cluster = node.cluster else { continue }
            for term in node.hosts where cluster.terms[term.shard]?.epoch == term.epoch {
                guard let runtime = cluster.terms[term.shard]?.runtime else { continue }
                let host = term.host
                host.performOnLoop { [unowned self] in single.carry(action, to: runtime, on: host, at: world) }
            }
        }
    }

    /// The world's state now, as the events that set it (power and network, Low Power Mode, the
    /// budget): what a leader that was not listening must hear.
    func worldState() -> [Simulation.ExternalEvent.Action] {
        [.device, .lowPower, .budgetEmpty(single.isBudgetEmpty(at: world))]
    }
}
