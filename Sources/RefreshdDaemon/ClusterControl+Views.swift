import Foundation
import RefreshdCore
import RefreshdRuntime

/// `watch` and `metrics` in cluster mode (issue 24), on any node: the cluster as the database
/// holds it, and what this node's lease machine did.
extension ClusterControl {
    /// Every shard's pending requests and runs in flight as one snapshot (what `watch` draws),
    /// and who leads each shard. Runs in flight are each job's last run while it has not ended
    /// (a job runs once at a time); read from the database, so they include other nodes' runs.
    /// Failure streaks and pauses are the shards' committed ones. What only a live core knows
    /// (a request's place, the next wake-up) is left empty.
    func view() throws -> (snapshot: SchedulerSnapshot, cluster: ClusterStatus) {
        var pending: [SchedulerSnapshot.Pending] = []
        var runs: [SchedulerSnapshot.Run] = []
        var streaks: [SchedulerSnapshot.FailureStreak] = []
        var paused: [SchedulerSnapshot.Paused] = []
        for shard in 0..<database.shardCount {
            let store = try database.store(shard: shard, epoch: 0)
            streaks += try store.failureStreaks().map { SchedulerSnapshot.FailureStreak(identifier: $0.key, count: $0.value) }
            paused += try StatusReport.paused(in: store).filter { p in !paused.contains { $0.identifier == p.identifier } }
            pending += try store.pendingRequests().map(SchedulerSnapshot.Pending.init)
            runs += try store.lastRunPerJob().filter { $0.ended == nil }.map {
                SchedulerSnapshot.Run(runID: $0.runID, identifier: $0.identifier, kind: $0.kind, started: $0.started,
                                      deadline: $0.deadline, attempt: $0.attempt, phase: .running, stoppedByShutdown: false)
            }
        }
        pending.sort { ($0.earliest, $0.identifier) < ($1.earliest, $1.identifier) }
        runs.sort { $0.runID < $1.runID }
        streaks.sort { $0.identifier < $1.identifier }
        var snapshot = SchedulerSnapshot(pending: pending, runs: runs, failureStreaks: streaks, nextWakeUp: nil, isStopping: false,
                                         stopped: false, conditions: Conditions(), watchingConditions: false,
                                         nextRunID: 0, nextSequence: 0)
        snapshot.paused = paused.isEmpty ? nil : paused.sorted { $0.identifier < $1.identifier }
        return (snapshot, try clusterStatus())
    }

    /// `ctl metrics` in cluster mode: the Prometheus text exposition.
    ///
    /// The cluster, from the database (the same on every node, so scrape one node, or take
    /// `max by (job)` across nodes rather than a sum): `refreshd_cluster_shard_epoch{shard}`,
    /// `refreshd_cluster_shard_leader{shard,node}` (1 for each led shard),
    /// `refreshd_cluster_node_shards_led{node}`, `refreshd_cluster_shards_unled`, and per job the totals of the
    /// database's daily counters (every day it keeps: counters that never go down):
    /// `refreshd_launches_total{job}`, `refreshd_runs_total{job,outcome}`,
    /// `refreshd_missed_slots_total{job}` (an instance counts under its template, as on one
    /// machine). This node since it started, labelled `node`: `refreshd_node_launches_total`,
    /// `refreshd_node_lease_renewals_total{result}` (`confirmed`, `refused`, `failed`),
    /// `refreshd_node_leads_total` (shards taken and restored), `refreshd_node_fences_total{reason}`,
    /// `refreshd_node_releases_total`, `refreshd_node_acquires_refused_total`. Then one
    /// machine's other families (`MetricsExporter`): the gauges from the database, the
    /// histograms and notification counters from this node's shards since it started.
    func metricsText(counters: ClusterNode.Counters, launches: Int) throws -> String {
        // One machine's families from the node's `MetricsExporter` (its shards' observations:
        // lateness, run CPU and memory, notifications), its gauges set from the database (the
        // same on every node): pending, in flight, failing instances, pauses, widgets, activities.
        let (snapshot, _) = try view()
        let (timelines, activities) = try machines()
        exporter.record(snapshot)
        exporter.record(timelines)
        exporter.record(activities)
        let databaseNow = try database.now()
        let leases = try database.leases()
        var text = ""
        func family(_ name: String, _ type: String, _ help: String, _ samples: [(labels: [(String, String)], value: Int)]) {
            text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
            for sample in samples {
                let labels = sample.labels.map { "\($0.0)=\"\(Self.escapeLabel($0.1))\"" }.joined(separator: ",")
                text += name + (labels.isEmpty ? "" : "{\(labels)}") + " \(sample.value)\n"
            }
        }
        let led = leases.filter { $0.owner != nil && $0.expiresAt > databaseNow }
        family("refreshd_cluster_shard_epoch", "gauge", "Each shard's lease epoch (one more at every takeover).",
               leases.map { ([("shard", String($0.shard))], Int($0.epoch)) })
        family("refreshd_cluster_shard_leader", "gauge", "1 for the node leading each led shard (an unexpired lease in database time).",
               led.map { ([("shard", String($0.shard)), ("node", $0.owner!)], 1) })
        let byNode = Dictionary(grouping: led, by: { $0.owner! }).mapValues(\.count)
        family("refreshd_cluster_node_shards_led", "gauge", "Shards each node leads now.",
               byNode.keys.sorted().map { ([("node", $0)], byNode[$0]!) })
        family("refreshd_cluster_shards_unled", "gauge", "Shards no node leads now (being taken over).",
               [([], leases.count - led.count)])
        var totals: [String: DailyCounter] = [:]
        for shard in 0..<database.shardCount {
            let store = try database.store(shard: shard, epoch: 0)
            for counter in try store.dailyCounters(days: nil) {
                let job = InstanceName.split(counter.identifier)?.template ?? counter.identifier
                var total = totals[job] ?? DailyCounter(day: "", identifier: job)
                total.launches += counter.launches
                total.successes += counter.successes
                total.failures += counter.failures
                total.expired += counter.expired
                total.crashed += counter.crashed
                total.interrupted += counter.interrupted
                total.missed += counter.missed
                totals[job] = total
            }
        }
        let jobs = totals.keys.sorted()
        family("refreshd_launches_total", "counter", "Launches per job, from the database's daily counters (every node answers the same).",
               jobs.map { ([("job", $0)], totals[$0]!.launches) })
        family("refreshd_runs_total", "counter", "Ended runs per job and outcome, from the database's daily counters.",
               jobs.flatMap { job -> [(labels: [(String, String)], value: Int)] in
                   let t = totals[job]!
                   return [("success", t.successes), ("failure", t.failures), ("expired", t.expired), ("crashed", t.crashed),
                           ("interrupted", t.interrupted)].map { ([("job", job), ("outcome", $0.0)], $0.1) }
               })
        family("refreshd_missed_slots_total", "counter", "Calendar slots missed per job, from the database's daily counters.",
               jobs.map { ([("job", $0)], totals[$0]!.missed) })
        let me = [("node", node)]
        family("refreshd_node_launches_total", "counter", "Runs this node launched since it started.", [(me, launches)])
        family("refreshd_node_lease_renewals_total", "counter", "This node's lease renewals since it started, by result.",
               [(me + [("result", "confirmed")], counters.renewals), (me + [("result", "refused")], counters.renewalsRefused),
                (me + [("result", "failed")], counters.renewalsFailed)])
        family("refreshd_node_leads_total", "counter", "Shards this node took and restored since it started (start, takeover, join).",
               [(me, counters.leads)])
        family("refreshd_node_fences_total", "counter", "Shards this node stopped leading on a fence since it started, by reason.",
               ["renewal-not-confirmed", "renewal-refused", "commit-refused"].map { (me + [("reason", $0)], counters.fences[$0] ?? 0) })
        family("refreshd_node_releases_total", "counter", "Shards this node gave back (handed over, or at a graceful stop).",
               [(me, counters.releases)])
        family("refreshd_node_acquires_refused_total", "counter", "Acquires the database refused or skipped (held, or its row being written).",
               [(me, counters.acquiresRefused)])
        return text + exporter.text()
    }

    /// A Prometheus label value: backslash, double quote and newline escaped.
    static func escapeLabel(_ value: String) -> String {
        var out = ""
        for c in value {
            switch c {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(c)
            }
        }
        return out
    }
}
