/// A scenario run on several nodes over one modelled database (issue 24): `nodes: N` and
/// `node-faults: [kill:0@40+30, pause:1@90+30, ...]` in a scenario file, or `simulate --nodes N
/// --node-fault ...`. Plain data; the simulator runs it (`ClusterSimulation`).
package struct ClusterModel: Sendable, Hashable {
    package var nodes: Int
    package var faults: [NodeFault]

    package init(nodes: Int, faults: [NodeFault] = []) {
        self.nodes = nodes
        self.faults = faults
    }

    /// The most nodes a simulation runs.
    package static let maximumNodes = 16
}

/// One fault of a node or of the shared database, offsets from the start in whole seconds.
package enum NodeFault: Sendable, Hashable, CustomStringConvertible {
    /// kill -9 of the node, and its restart `restartAfter` later (never: nil).
    case kill(node: Int, at: Duration, restartAfter: Duration?)
    /// SIGSTOP of the node for `for`: it resumes late (the zombie).
    case pause(node: Int, at: Duration, for: Duration)
    /// The node cannot reach the database for `for`: its calls get no answer (they wait for
    /// their bound, then fail), as through a network that drops its packets.
    case partition(node: Int, at: Duration, for: Duration)
    /// The node's monotonic clock runs at `rate` (1.1: 10% fast) from the start.
    case drift(node: Int, rate: Double)
    /// The database restarts: unreachable for `for`; nothing committed is lost.
    case databaseDown(at: Duration, for: Duration)
    /// The node is not running at the start and joins at `at`.
    case join(node: Int, at: Duration)
    /// SIGTERM to the node at `at`: it stops gracefully and leaves the cluster.
    case stop(node: Int, at: Duration)

    /// The forms `parse` reads.
    package static let forms = "kill:NODE@SECONDS[+RESTART], pause:NODE@SECONDS+SPAN, partition:NODE@SECONDS+SPAN, "
        + "drift:NODE*RATE, database-down@SECONDS+SPAN, join:NODE@SECONDS or stop:NODE@SECONDS"

    /// Reads one fault (`kill:0@40+30`: kill node 0 at +40 s, restart 30 s later); nil when
    /// the text is none of `forms` or names a node outside 0..<nodes.
    package static func parse(_ text: String, nodes: Int) -> NodeFault? {
        if text.hasPrefix("database-down@") {
            let numbers = text.dropFirst("database-down@".count).split(separator: "+", omittingEmptySubsequences: false).map { Int64($0) }
            guard numbers.count == 2, let at = numbers[0], let span = numbers[1], at >= 0, span > 0 else { return nil }
            return .databaseDown(at: .seconds(at), for: .seconds(span))
        }
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2 else { return nil }
        if parts[0] == "drift" {
            let values = parts[1].split(separator: "*", omittingEmptySubsequences: false)
            guard values.count == 2, let node = Int(values[0]), (0..<nodes).contains(node),
                  let rate = Double(values[1]), rate >= 0.85, rate <= 1.5 else { return nil }
            return .drift(node: node, rate: rate)
        }
        let nodeAndRest = parts[1].split(separator: "@", omittingEmptySubsequences: false)
        guard nodeAndRest.count == 2, let node = Int(nodeAndRest[0]), (0..<nodes).contains(node) else { return nil }
        let numbers = nodeAndRest[1].split(separator: "+", omittingEmptySubsequences: false).map { Int64($0) }
        guard !numbers.isEmpty, numbers.count <= 2, !numbers.contains(nil), numbers.allSatisfy({ $0! >= 0 }) else { return nil }
        let at = Duration.seconds(numbers[0]!)
        let span = numbers.count == 2 ? Duration.seconds(numbers[1]!) : nil
        switch (parts[0], span) {
        case ("kill", _): return .kill(node: node, at: at, restartAfter: span)
        case let ("pause", span?) where span > .zero: return .pause(node: node, at: at, for: span)
        case let ("partition", span?) where span > .zero: return .partition(node: node, at: at, for: span)
        case ("join", nil): return .join(node: node, at: at)
        case ("stop", nil): return .stop(node: node, at: at)
        default: return nil
        }
    }

    package var description: String {
        switch self {
        case let .kill(n, at, restart): "kill node\(n) at +\(at.components.seconds)s" + (restart.map { ", restart after \($0.components.seconds)s" } ?? "")
        case let .pause(n, at, span): "pause node\(n) at +\(at.components.seconds)s for \(span.components.seconds)s"
        case let .partition(n, at, span): "cut node\(n) off the database at +\(at.components.seconds)s for \(span.components.seconds)s"
        case let .drift(n, rate): "node\(n)'s clock runs at \(rate)x"
        case let .databaseDown(at, span): "database down at +\(at.components.seconds)s for \(span.components.seconds)s"
        case let .join(n, at): "node\(n) joins at +\(at.components.seconds)s"
        case let .stop(n, at): "SIGTERM to node\(n) at +\(at.components.seconds)s"
        }
    }
}
