import RefreshdCore
import RefreshdConfig

/// What one run of the cluster found, and its text lines (moved out of ClusterSimulation.swift,
/// which held the world's loop, its nodes and the report).
extension ClusterSimulation {
    /// What one run of the cluster found.
    package struct Report: Sendable {
        package var nodes: Int
        package var shards: Int
        package var duration: Duration
        package var faults: [Fault]
        package var launches = 0
        package var takeovers = 0
        package var fences = 0
        package var releases = 0
        /// For each kill or pause, how long until every shard the victim led was led again.
        package var takeoverTimes: [Duration] = []
        /// For each stop signal, how long until the node had left.
        package var stopTimes: [Duration] = []
        package var duplicates = 0
        /// A paused or killed node's run alive beside another node's run of the same job (the
        /// next slot, never the same one): no node can stop a frozen node's processes.
        package var zombieOverlaps = 0
        package var lost = 0
        /// Shard loops frozen by a call that hangs (a cut-off node's commit or read, on the
        /// shard's own loop): each handled nothing until its call failed at its bound.
        package var frozenLoops = 0
        package var violations: [String] = []
        /// Every node's history lines, in order (`+seconds node: line`).
        package var events: [String] = []
        /// Who led each shard when (offsets from the start), for the picture.
        package var ownership: [Span] = []
        /// Every shard a node began to lead (or took over from another node), fenced or
        /// released, in order, as the node logged it: the picture's marks.
        package var changes: [Change] = []
        /// One machine's report of the cluster's runs: per job its runs and outcomes, the widgets'
        /// and activities' lanes (what `simulate` without `--nodes` reports), for the picture.
        package var machine: SimulationReport?
        /// Fault boundaries (offset, what), for the picture.
        package var marks: [(at: Duration, what: String)] = []
        /// What every job did, per UTC day, across all shards (the database's daily counters,
        /// as one machine's report counts them).
        package var jobs: [DailyCounter] = []
        /// Every widget's reloads per UTC day and family, across all shards.
        package var widgets: [WidgetDayCounter] = []
        /// Publications written into the shared container (widget entries, activity files).
        package var publications = 0
        /// Provider runs whose result a widget ignored (no call in flight for it): a reload
        /// lost, as after a hand-over that restored a held provider call as interrupted.
        package var ignoredProviderResults = 0

        /// A shard's leadership changed at `at` (offset from the start).
        package struct Change: Sendable, Hashable {
            package enum What: String, Sendable, Hashable {
                /// `leads`: the node began to lead the shard (first, or again after its own term).
                case leads, takeover, fenced, released
            }
            package var at: Duration
            package var node: Int
            package var shard: Int
            package var epoch: Int64
            package var what: What
            /// The node's history line.
            package var line: String
        }

        /// One node leading one shard from `from` to `to`.
        package struct Span: Sendable, Hashable {
            package var shard: Int
            package var node: Int
            package var from: Duration
            package var to: Duration
        }

        package var lines: [String] {
            var out = ["nodes: \(nodes), shards: \(shards), \(duration.components.seconds) s simulated"]
            for fault in faults { out.append("fault: \(fault)") }
            out.append("launches: \(launches), takeovers: \(takeovers), fences: \(fences), releases: \(releases)")
            let sorted = takeoverTimes.sorted()
            if !sorted.isEmpty {
                let p50 = sorted[(sorted.count - 1) / 2], max = sorted.last!
                out.append("takeover time: p50 \(Self.seconds(p50)) s, max \(Self.seconds(max)) s over \(sorted.count) fault(s)")
            }
            if !stopTimes.isEmpty {
                out.append("stops: \(stopTimes.count), left within \(Self.seconds(stopTimes.max()!)) s")
            }
            if frozenLoops > 0 { out.append("shard loops frozen by a hung call: \(frozenLoops)") }
            out.append("duplicates: \(duplicates), lost: \(lost), zombie overlaps: \(zombieOverlaps), violations: \(violations.count)")
            out += violations.map { "violation: \($0)" }
            if !jobs.isEmpty {
                out.append("per day and job: launches, success/failed/expired/crashed/interrupted, missed")
                for c in jobs {
                    out.append("  \(c.day)  \(c.identifier)  \(c.launches), \(c.successes)/\(c.failures)/\(c.expired)/\(c.crashed)/\(c.interrupted), \(c.missed)")
                }
            }
            if !widgets.isEmpty {
                out.append("per day and widget: reloads requested, performed, deferred; provider calls; stale minutes")
                for w in widgets {
                    out.append("  \(w.day)  \(w.kind)/\(w.family.rawValue)  \(w.requested), \(w.performed), \(w.deferred); \(w.providerCalls); \(w.staleMinutes)")
                }
            }
            out.append("publications: \(publications), provider results ignored: \(ignoredProviderResults)")
            return out
        }

        package static func seconds(_ d: Duration) -> String {
            String(format: "%.1f", Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18)
        }
    }
}
