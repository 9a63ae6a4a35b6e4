import Foundation
#if canImport(Glibc)
import Glibc
#endif
import RefreshdCore
import RefreshdPostgres
import Testing

/// Issue 24's real-process proof: three `refreshd run --store` nodes on one private PostgreSQL,
/// each in a PID namespace of its own, as on separate machines (issue 32: no node's restore or
/// sweep can reap another's job processes, so a fenced node's runs die by its own hand or not),
/// one job per shard appending (run id, node, time) to a file every second and one long job,
/// and rounds of faults: SIGKILL of a leader (restarted once another node took its shards over),
/// SIGSTOP of a leader past its lease then SIGCONT (the zombie), a partition of the long job's
/// leader (issue 32: its connection blackholed by a TCP proxy that stops forwarding without
/// closing, so its calls hang; it must fence and kill its runs by its own deadline, and go on
/// after the heal), and a PostgreSQL restart (fast and immediate in turn). After every round nothing is left of a fenced node's job processes;
/// at the end no slot ran twice (no two runs of one job at one `earliest`, no run id twice),
/// none was lost (every line's run is committed, every successful run has its line), and no
/// process is left. The takeover time of each fault is printed (p50, p99, max by kind).
/// Other kinds run through the same faults (issue 32, item 6): a template's instances (their
/// runs checked as the jobs'), a widget timeline (no reload counted twice: counted reloads never
/// exceed its provider runs, each committed and run once) and failure notifications (each failed
/// run notified, or still held for the next leader, under one id; none lost), a built-in action
/// staging a playlist in its worker (its runs checked as the jobs'; what it published whole) and
/// live activities whose stale dates and dismissals fall during the faults (`FaultLoopActivities`).
///
/// `REFRESHD_FAULT_ROUNDS` rounds (3 in the suite; `Scripts/fault-loop` runs 50), lease
/// `REFRESHD_FAULT_LEASE` (1500ms: rounds of seconds).
@Suite(.serialized) struct ClusterFaultLoopTests {
    @Test func killsPausesAndDatabaseRestartsRunNoSlotTwiceAndLoseNone() throws {
        let environment = ProcessInfo.processInfo.environment
        let rounds = Int(environment["REFRESHD_FAULT_ROUNDS"] ?? "") ?? 3
        let leaseText = environment["REFRESHD_FAULT_LEASE"] ?? "1500ms"
        let lease = leaseText.hasSuffix("ms") ? Double(leaseText.dropLast(2))! / 1000 : Double(leaseText.dropLast())!
        let server = try PrivateServer()
        defer { server.shutDown() }
        let conninfo = try server.freshDatabase()
        let shardCount = 4
        try PostgresDatabase(connection: conninfo, shardCount: shardCount).close()
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("refreshd-faults-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/jobs", withIntermediateDirectories: true)
        let out = root + "/runs.txt"
        let tag = "faults-\(UUID().uuidString.prefix(8))"
        // One every-second job in each shard (each in a namespace of its own: a plain job is in
        // its namespace's shard), and a long job whose run a fenced node must kill.
        let map = ShardMap(shardCount: shardCount)
        var tickJobs: [Int: String] = [:]
        var candidate = 0
        while tickJobs.count < shardCount {
            let identifier = "fault.tick-\(candidate)"
            if tickJobs[map.shard(of: identifier)] == nil { tickJobs[map.shard(of: identifier)] = identifier }
            candidate += 1
        }
        let line = #"echo \"$REFRESH_RUN_ID $NODE $(date +%s.%N)\" >> \#(out)"#
        for identifier in tickJobs.values {
            try """
                identifier: \(identifier)
                namespace: \(identifier)
                kind: processing
                command: ["/bin/sh", "-c", "\(line); sleep 0.4"]
                resubmit: {calendar: "*:*:00/1"}
                missed: skip
                allowance: 5s
                """.write(toFile: root + "/jobs/\(identifier).yaml", atomically: true, encoding: .utf8)
        }
        try """
            identifier: fault.long
            kind: processing
            command: ["/bin/sh", "-c", "\(line); sleep 60"]
            resubmit: {calendar: "*:*:00/2"}
            missed: skip
            allowance: 120s
            """.write(toFile: root + "/jobs/fault.long.yaml", atomically: true, encoding: .utf8)

        // Every kind beside the command jobs (issue 32, item 6): a template's instances ticking
        // every second (their runs are checked as the jobs' are), a widget timeline reloading
        // every 2 s (its counted reloads against its provider runs: none counted twice), and a
        // failing job whose failure notifications (a command) must each reach its run once.
        try """
            identifier: fault.feed
            template: true
            parameters: [user]
            kind: processing
            command: ["/bin/sh", "-c", "\(line); sleep 0.2"]
            resubmit: {calendar: "*:*:00/1"}
            missed: skip
            allowance: 5s
            """.write(toFile: root + "/jobs/fault.feed.yaml", atomically: true, encoding: .utf8)
        let widgetLines = root + "/widget.txt", notes = root + "/notes.txt"
        try """
            #!/bin/sh
            echo "$REFRESH_RUN_ID $NODE $(date +%s.%N)" >> \(widgetLines)
            now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
            later=$(date -u -d '+2 seconds' +%Y-%m-%dT%H:%M:%SZ)
            echo "{\\"entries\\":[{\\"date\\":\\"$now\\",\\"content\\":{\\"node\\":\\"$NODE\\"}}],\\"policy\\":{\\"after\\":\\"$later\\"}}" >&3
            """.write(toFile: root + "/widget.sh", atomically: true, encoding: .utf8)
        chmod(root + "/widget.sh", 0o755)
        try """
            identifier: fault.widget
            kind: timeline
            command: ["\(root)/widget.sh"]
            allowance: 5s
            widget:
              kind: faultwidget
              families: [systemSmall]
              budget: unlimited
              min-reload-interval: 0s
            """.write(toFile: root + "/jobs/fault.widget.yaml", atomically: true, encoding: .utf8)
        try """
            identifier: fault.failing
            kind: processing
            command: ["/bin/sh", "-c", "exit 3"]
            resubmit: {calendar: "*:*:00/2"}
            missed: skip
            allowance: 5s
            on-failure: {command: ["/bin/sh", "-c", "echo \\"$REFRESHD_NOTIFICATION_ID $REFRESHD_RUN_ID\\" >> \(notes)"]}
            """.write(toFile: root + "/jobs/fault.failing.yaml", atomically: true, encoding: .utf8)

        // A built-in action (issue 32, item 6): the playlist staged in a worker by whichever node
        // leads its shard, every 5 s (a day already staged is left alone, so most runs are short;
        // the first runs stage while the faults begin), from a sample library made here.
        let library = try Node.start(["staging", "sample-library", root + "/library"], environment: [:], output: root + "/library.log")
        #expect(library.wait(120) == 0, "\(library.log())")
        try """
            identifier: fault.stage
            kind: app-refresh
            action: stage-playlist
            stage-playlist:
              library: \(root)/library
              switch-times: ["06:00", "18:00"]
              timezone: UTC
              assets-per-day: 2
              families: [systemSmall]
              widget: faultwidget
              folder: staged
              today-if-missing: true
            resubmit: {calendar: "*:*:00/5"}
            missed: skip
            allowance: 30s
            """.write(toFile: root + "/jobs/fault.stage.yaml", atomically: true, encoding: .utf8)

        var nodes: [String: Node] = [:]
        // Each node reaches the database through a proxy of its own, so any can be cut off.
        var proxies: [String: BlackholeProxy] = [:]
        defer { for proxy in proxies.values { proxy.stop() } }
        for name in ["a", "b", "c"] { proxies[name] = try BlackholeProxy(socketPath: server.folder + "/.s.PGSQL.5432") }
        func startNode(_ name: String) throws {
            let store = conninfo.replacingOccurrences(of: "host=\(server.folder)", with: "host=127.0.0.1 port=\(proxies[name]!.port)")
            nodes[name] = try Node.start(
                ["run", "--jobs", root + "/jobs", "--state", root + "/state-" + name, "--shared", root + "/shared",
                 "--store", store, "--node", name, "--lease", leaseText],
                environment: ["NODE": name, "REFRESHD_TEST_TAG": tag], output: root + "/\(name).log", pidNamespace: true)
            // refreshd is its namespace's init: pid 1 inside, another outside.
            let status = (try? String(contentsOfFile: "/proc/\(nodes[name]!.target)/status", encoding: .utf8)) ?? ""
            #expect(status.split(separator: "\n").contains { $0.hasPrefix("NSpid:") && $0.hasSuffix("\t1") }, "node \(name) is not in a PID namespace of its own")
        }
        defer {
            // Whatever happened: thaw, kill every node and every job process of the test.
            for node in nodes.values {
                node.kill(SIGCONT)
                node.kill(SIGKILL)
            }
            for pid in processes(tagged: tag) { kill(pid, SIGKILL) }
        }
        for name in ["a", "b", "c"] { try startNode(name) }
        let monitor = Monitor(server: server, conninfo: conninfo, output: out)
        defer { monitor.close() }

        /// Every shard led (an unexpired lease) by a live node, and each tick job ran since `after`.
        func settled(after: Double) -> Bool {
            guard let owners = try? monitor.owners(), owners.count == shardCount else { return false }
            let recent = monitor.lines().filter { $0.at > after }
            return Set(recent.map { $0.runID / ShardMap.runIDSpan }).count == shardCount
        }
        #expect(waitFor(30) { settled(after: 0) }, "the cluster did not start: \(logs(nodes))")
        for key in ["alice", "bob", "carol", "dave"] {
            let output = root + "/add-\(key).log"
            let added = try Node.start(["ctl", "instance", "add", "fault.feed", key, "--state", root + "/state-a"],
                                       environment: [:], output: output)
            #expect(added.wait(30) == 0, "\(added.log())")
        }

        // Live activities (issue 32, item 6): a namespace a shard, each round's deadlines in them.
        var activityNamespaces: [Int: String] = [:]
        candidate = 0
        while activityNamespaces.count < shardCount {
            let namespace = "fault.acts-\(candidate)"
            if activityNamespaces[map.shard(of: namespace)] == nil { activityNamespaces[map.shard(of: namespace)] = namespace }
            candidate += 1
        }
        let activities = FaultLoopActivities(root: root, shared: root + "/shared", namespaces: activityNamespaces.keys.sorted().map { activityNamespaces[$0]! })
        activities.startWatching()
        defer { activities.stopWatching() }

        var takeovers: [String: [Double]] = [:]
        var failures: [String] = []
        /// Seconds from `start` until every shard in `shards` ran a tick job on a node other than
        /// `excluded` (nil: any node); nil past `limit`.
        var faults: [(seconds: Double, what: String)] = []
        func takeover(_ shards: Set<Int>, from start: Double, excluding excluded: String?, limit: Double,
                      _ what: String) -> Double? {
            var first: Double?
            var takers: [String] = []
            _ = waitFor(limit) {
                let after = monitor.lines().filter { $0.at > start && $0.node != excluded }
                let byShard = Dictionary(grouping: after) { Int($0.runID / ShardMap.runIDSpan) }
                guard shards.allSatisfy({ byShard[$0] != nil }) else { return false }
                let firsts = shards.sorted().map { byShard[$0]!.min { $0.at < $1.at }! }
                first = firsts.map(\.at).max()
                takers = firsts.map { "\(Int($0.runID / ShardMap.runIDSpan))->\($0.node)" }
                return true
            }
            if let first { faults.append((first - start, "\(what) (shards \(takers.joined(separator: " ")))")) }
            return first.map { $0 - start }
        }
        // lease + renewal interval + restore, with room for a loaded machine (a pause inside a
        // commit took about 10.7 s before the server ended idle transactions: ClusterPauseTests).
        let bound = lease + lease / 3 + 5

        for round in 1...rounds {
            if let failure = activities.startRound(round, via: nodes.keys.sorted().map { root + "/state-" + $0 }) { failures.append(failure) }
            // 1. SIGKILL of the leader of the most shards.
            let owners = (try? monitor.owners()) ?? [:]
            let counts = Dictionary(grouping: owners.keys) { owners[$0]! }
            if let victim = counts.max(by: { $0.value.count < $1.value.count })?.key, let node = nodes[victim] {
                let shards = Set(counts[victim]!)
                let at = now()
                node.kill(SIGKILL)
                if let seconds = takeover(shards, from: at, excluding: victim, limit: bound, "round \(round) kill -9 \(victim)") {
                    takeovers["kill -9", default: []].append(seconds)
                } else {
                    failures.append("round \(round): shards \(shards.sorted()) of killed \(victim) not taken over in \(bound) s")
                }
                try startNode(victim)
            }
            // 2. SIGSTOP of the long job's leader past its lease, then SIGCONT: the zombie fences
            // itself at resume and its job processes are killed.
            let longShard = map.shard(of: "fault")  // fault.long's namespace
            if let zombie = (try? monitor.owners())?[longShard], let node = nodes[zombie] {
                let shards = Set(((try? monitor.owners()) ?? [:]).filter { $0.value == zombie }.keys)
                let jobsBefore = processes(tagged: tag).filter { !node.pids.contains($0) && environmentOf($0)["NODE"] == zombie }
                let at = now()
                node.kill(SIGSTOP)
                if let seconds = takeover(shards, from: at, excluding: zombie, limit: bound, "round \(round) SIGSTOP \(zombie)") {
                    takeovers["SIGSTOP", default: []].append(seconds)
                } else {
                    failures.append("round \(round): shards \(shards.sorted()) of paused \(zombie) not taken over in \(bound) s")
                }
                // Past its lease in any case, then resumed.
                let paused = now() - at
                if paused < lease + 0.5 { usleep(UInt32((lease + 0.5 - paused) * 1_000_000)) }
                node.kill(SIGCONT)
                let alive = { jobsBefore.filter { kill($0, 0) == 0 && !isZombieProcess($0) } }
                if !waitFor(5, { alive().isEmpty }) {
                    failures.append("round \(round): job processes \(alive()) of the fenced \(zombie) outlived its fence")
                }
            }
            // 3. A partition of the long job's leader for three leases: its calls hang (no
            // answer), yet it fences itself by its own deadline and its job processes die; the
            // others take its shards; after the heal it goes on (it stops at the end like all).
            if let cut = (try? monitor.owners())?[longShard], let node = nodes[cut], let proxy = proxies[cut] {
                let shards = Set(((try? monitor.owners()) ?? [:]).filter { $0.value == cut }.keys)
                let jobsBefore = processes(tagged: tag).filter { !node.pids.contains($0) && environmentOf($0)["NODE"] == cut }
                let at = now()
                proxy.cut()
                let alive = { jobsBefore.filter { kill($0, 0) == 0 && !isZombieProcess($0) } }
                if !waitFor(lease + 1, { alive().isEmpty }) {
                    failures.append("round \(round): job processes \(alive()) of the cut-off \(cut) outlived its deadline")
                }
                if let seconds = takeover(shards, from: at, excluding: cut, limit: bound, "round \(round) partition \(cut)") {
                    takeovers["partition", default: []].append(seconds)
                } else {
                    failures.append("round \(round): shards \(shards.sorted()) of cut-off \(cut) not taken over in \(bound) s")
                }
                let spent = now() - at
                if spent < 3 * lease { usleep(UInt32((3 * lease - spent) * 1_000_000)) }
                proxy.heal()
                if !node.log().contains("fenced shard") { failures.append("round \(round): the cut-off \(cut) never fenced") }
            }
            // 4. PostgreSQL restarts: fast in odd rounds (pg_ctl restart), immediate in even ones
            // (pg_ctl restart -m immediate: a crash and recovery).
            let immediate = round % 2 == 0
            let kind = immediate ? "postgres restart -m immediate" : "postgres restart"
            _ = waitFor(bound) { settled(after: now() - 1.5) }
            let at = now()
            monitor.disconnect()
            try server.stop(crash: immediate)
            try server.start()
            if let seconds = takeover(Set(0..<shardCount), from: at, excluding: nil, limit: bound, "round \(round) \(kind)") {
                takeovers[kind, default: []].append(seconds)
            } else {
                failures.append("round \(round): not every shard ran again within \(bound) s of a \(kind)")
            }
            _ = waitFor(bound) { settled(after: now() - 1.5) }
        }

        // Every failed run ended a moment ago has its notification sent before the stop.
        let failed = { ((try? monitor.runs()) ?? []).filter { $0.identifier == "fault.failing" && $0.outcome == "failure" } }
        let noted = { Monitor.pairs(notes) }
        _ = waitFor(15) { Set(failed().map(\.runID)).isSubset(of: Set(noted().map(\.runID))) }

        // Every activity's deadline kept through the faults (in the state and the container).
        failures += activities.check(records: { try monitor.activities() }, bound: bound, limit: bound + 6)
        // The staged playlist is whole: each playlist the leaders published names renditions
        // that exist (written before it, atomically, whatever node was killed meanwhile).
        let staged = root + "/shared/staged"
        let playlists = ((try? FileManager.default.contentsOfDirectory(atPath: staged + "/playlists")) ?? []).filter { $0.hasSuffix(".json") }
        if playlists.isEmpty { failures.append("no playlist staged: \(logs(nodes))") }
        for name in playlists {
            let data = FileManager.default.contents(atPath: staged + "/playlists/" + name) ?? Data()
            let entries = ((try? JSONSerialization.jsonObject(with: data)) as? [String: Any])?["entries"] as? [[String: Any]] ?? []
            let paths = entries.flatMap { (($0["renditions"] as? [String: String]) ?? [:]).values }
            if paths.isEmpty { failures.append("playlist \(name) names no rendition: \(String(decoding: data.prefix(300), as: UTF8.self))") }
            for path in paths where !FileManager.default.fileExists(atPath: root + "/shared/" + path) {
                failures.append("playlist \(name) names \(path), which is missing")
            }
        }

        // Stop every node gracefully; no job process may remain.
        for node in nodes.values { node.kill(SIGTERM) }
        for (name, node) in nodes { #expect(node.wait(20) == 0, "\(name) did not stop cleanly: \(logs(nodes))") }
        #expect(waitFor(5) { processes(tagged: tag).isEmpty }, "processes left: \(processes(tagged: tag))")
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))\n\(logs(nodes))")

        // 0 duplicates, 0 lost.
        let lines = monitor.lines()
        let runs = try monitor.runs()
        let byID = Dictionary(runs.map { ($0.runID, $0) }, uniquingKeysWith: { first, _ in first })
        let twice = Dictionary(grouping: runs) { "\($0.identifier)@\($0.earliest)" }.filter { $0.value.count > 1 }
        #expect(twice.isEmpty, "slots with more than one run: \(twice.keys.sorted())")
        let lineIDs = lines.map(\.runID)
        #expect(Set(lineIDs).count == lineIDs.count, "a run's process ran twice")
        let executedSlots = lines.compactMap { byID[$0.runID].map { "\($0.identifier)@\($0.earliest)" } }
        #expect(Set(executedSlots).count == executedSlots.count, "a slot's process ran twice")
        let uncommitted = lineIDs.filter { byID[$0] == nil }
        #expect(uncommitted.isEmpty, "processes ran without their run committed: \(uncommitted)")
        let lineSet = Set(lineIDs)
        // (A provider's line goes to its own file, checked below; the staging writes none.)
        let silent = runs.filter { $0.outcome == "success" && !$0.identifier.hasPrefix("fault.widget#") && $0.identifier != "fault.stage" && !lineSet.contains($0.runID) }.map(\.runID)
        #expect(silent.isEmpty, "successful runs without their line: \(silent)")
        #expect(lines.count > rounds * 10, "only \(lines.count) runs")
        #expect(Set(runs.filter { $0.identifier.hasPrefix("fault.feed[") }.map(\.identifier)).count == 4, "the template's instances did not all run")
        let stagings = runs.filter { $0.identifier == "fault.stage" }
        // (Each may be cut by a fault: a debug build stages for seconds on a loaded machine, and
        // a run that wrote its playlist can still end interrupted. What it published is checked
        // above: whole.)
        #expect(!stagings.isEmpty, "the playlist was never staged")

        // The widget: each provider run committed and run once, and no reload counted twice
        // (counted reloads never exceed the provider runs, whatever node ran them).
        let providerRuns = runs.filter { $0.identifier == "fault.widget#systemSmall" }
        let providerLines = Monitor.lines(widgetLines).map(\.runID)
        #expect(Set(providerLines).count == providerLines.count, "a provider run's process ran twice")
        #expect(providerLines.allSatisfy { byID[$0] != nil }, "provider processes ran without their run committed")
        let silentProviders = providerRuns.filter { $0.outcome == "success" && !Set(providerLines).contains($0.runID) }.map(\.runID)
        #expect(silentProviders.isEmpty, "successful provider runs without their line: \(silentProviders)")
        let counted = try monitor.widgetCounters().filter { $0.kind == "faultwidget" }.reduce(0) { $0 + $1.performed + $1.exempt }
        // A call counted at its ask whose run has not started (the stop came first) is still in
        // flight in the widget's record, with no provider run open: it runs at the next start.
        let waiting = try monitor.widgetCallsInFlight() > 0 && !providerRuns.contains { $0.outcome.isEmpty } ? 1 : 0
        #expect(counted > 0 && counted <= providerRuns.count + waiting,
                "\(counted) reloads counted for \(providerRuns.count) provider runs (\(waiting) call waiting for its launch)")

        // Failure notifications: each failed run's sent (or still held, to be sent by the next
        // leader), under one id whatever node sent it; none for a run that did not fail.
        let failedRuns = Set(failed().map(\.runID))
        let pairs = noted()
        let idsByRun = Dictionary(grouping: pairs, by: \.runID).mapValues { Set($0.map(\.id)) }
        #expect(idsByRun.values.allSatisfy { $0.count == 1 }, "a run notified under two ids: \(idsByRun.filter { $0.value.count > 1 })")
        #expect(Set(idsByRun.keys).isSubset(of: failedRuns), "notifications for runs that did not fail")
        let held = try monitor.heldNotifications()
        let lostNotes = failedRuns.subtracting(idsByRun.keys).subtracting(held)
        #expect(lostNotes.isEmpty, "failed runs never notified: \(lostNotes.sorted())")
        #expect(!failedRuns.isEmpty)

        var report = "cluster fault loop: \(rounds) rounds, lease \(leaseText), \(lines.count) runs, \(twice.count) duplicates, \(uncommitted.count) lost"
            + "; staging: \(stagings.count) runs, \(playlists.count) playlists; activities: \(activities.count) deadlines kept"
            + "; widget: \(counted) reloads counted, \(providerRuns.count) provider runs; notifications: \(idsByRun.count) runs notified (\(pairs.count) sends), \(held.count) held, \(failedRuns.count) failed runs, \(lostNotes.count) lost"
        for kind in takeovers.keys.sorted() {
            let times = takeovers[kind]!.sorted()
            func at(_ p: Double) -> String { String(format: "%.2f", times[min(times.count - 1, Int(Double(times.count) * p))]) }
            report += "\n  \(kind): \(times.count) faults, takeover p50 \(at(0.5)) s, p99 \(at(0.99)) s, max \(at(1.0)) s"
        }
        for fault in faults.sorted(by: { $0.seconds > $1.seconds }).prefix(3) {
            report += "\n  slowest: \(fault.what): \(String(format: "%.2f", fault.seconds)) s"
        }
        print(report)
        if environment["CLUSTER_LOGS"] != nil { print(logs(nodes)) }
    }

    func logs(_ nodes: [String: Node]) -> String {
        nodes.keys.sorted().map { "\n--- \($0):\n" + (nodes[$0]?.log().suffix(4000) ?? "") }.joined()
    }
}

/// Wall-clock seconds (the jobs' lines carry `date +%s.%N`).
private func now() -> Double { Date().timeIntervalSince1970 }

/// The environment of process `pid` ([:] when it is gone).
private func environmentOf(_ pid: Int32) -> [String: String] {
    guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/environ") else { return [:] }
    var out: [String: String] = [:]
    for entry in data.split(separator: 0) {
        let text = String(decoding: entry, as: UTF8.self)
        if let equals = text.firstIndex(of: "=") { out[String(text[..<equals])] = String(text[text.index(after: equals)...]) }
    }
    return out
}

private func isZombieProcess(_ pid: Int32) -> Bool {
    ((try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? "").contains(") Z ")
}

/// The test's view of the cluster: the lease table and the runs (its own connection, reopened
/// after a server restart) and the jobs' lines.
private final class Monitor {
    struct Line { var runID: Int64; var node: String; var at: Double }
    struct Run { var runID: Int64; var identifier: String; var earliest: Int64; var outcome: String }

    let server: PrivateServer
    let conninfo: String
    let output: String
    private var connection: RawConnection?

    init(server: PrivateServer, conninfo: String, output: String) {
        self.server = server
        self.conninfo = conninfo
        self.output = output
    }

    func close() { disconnect() }

    func disconnect() {
        connection?.close()
        connection = nil
    }

    private func query(_ sql: String) throws -> [[String]] {
        if connection == nil { connection = try RawConnection(conninfo) }
        do {
            return try connection!.rows(sql)
        } catch {
            disconnect()
            throw error
        }
    }

    /// The owner of each shard whose lease has not expired.
    func owners() throws -> [Int: String] {
        let rows = try query("SELECT shard, owner FROM refreshd.leases WHERE owner IS NOT NULL AND expires_at > clock_timestamp()")
        return Dictionary(rows.map { (Int($0[0])!, $0[1]) }, uniquingKeysWith: { first, _ in first })
    }

    func runs() throws -> [Run] {
        try query("SELECT run_id, encode(identifier, 'escape'), earliest, coalesce(outcome, '') FROM refreshd.runs").map {
            Run(runID: Int64($0[0])!, identifier: $0[1], earliest: Int64($0[2])!, outcome: $0[3])
        }
    }

    /// The counted reloads of every widget, by day (every shard's records).
    func widgetCounters() throws -> [WidgetDayCounter] {
        try query("SELECT convert_from(value, 'UTF8') FROM refreshd.records WHERE table_name = '\(TimelineChange.counterTable)'::bytea").compactMap {
            try? JSONDecoder().decode(WidgetDayCounter.self, from: Data($0[0].utf8))
        }
    }

    /// The widgets whose saved record has a provider call in flight (every shard).
    func widgetCallsInFlight() throws -> Int {
        try query("SELECT convert_from(value, 'UTF8') FROM refreshd.records WHERE table_name = '\(TimelineChange.widgetTable)'::bytea").filter {
            (try? JSONDecoder().decode(WidgetRecord.self, from: Data($0[0].utf8)))?.inFlight != nil
        }.count
    }

    /// Every shard's saved live activities.
    func activities() throws -> [Activity] {
        // (convert_from, not encode(.., 'escape'), which doubles the backslashes of the content's JSON.)
        try query("SELECT convert_from(value, 'UTF8') FROM refreshd.records WHERE table_name = '\(ActivityChange.table)'::bytea").compactMap {
            try? JSONDecoder().decode(Activity.self, from: Data($0[0].utf8))
        }
    }

    /// The run ids of the failure notifications still held (not yet delivered) in every shard.
    func heldNotifications() throws -> Set<Int64> {
        Set(try query("SELECT encode(value, 'escape') FROM refreshd.records WHERE table_name = '\(NotificationMachine.table)'::bytea").compactMap {
            (try? JSONDecoder().decode(RunNotification.self, from: Data($0[0].utf8)))?.runID
        })
    }

    /// `ID RUN` lines of the notification command.
    static func pairs(_ path: String) -> [(id: String, runID: Int64)] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ")
            guard words.count == 2, let runID = Int64(words[1]) else { return nil }
            return (String(words[0]), runID)
        }
    }

    func lines() -> [Line] { Self.lines(output) }

    static func lines(_ output: String) -> [Line] {
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ")
            guard words.count == 3, let runID = Int64(words[0]), let at = Double(words[2]) else { return nil }
            return Line(runID: runID, node: String(words[1]), at: at)
        }
    }
}
