import Foundation
import Testing
import RefreshdCore
import RefreshdRuntime
@testable import RefreshdSimulation

/// Several nodes on one modelled database (issue 24): the database's contract, one node's
/// engine on the simulated host, takeovers after a kill and a pause, and seeded explored plans.
@Suite struct ClusterTests {
    static let t0 = Instant(milliseconds: 1_800_000_000_000)

    /// `count` jobs every `every`, each running `runs` long, each in a namespace of its own.
    static func jobs(_ count: Int, every: Duration = .seconds(20)) -> [JobSpec] {
        (0..<count).map { i in
            JobSpec(definition: TaskDefinition(identifier: "job\(i)", kind: .processing, namespace: "ns\(i)",
                                               allowance: .seconds(60), resubmit: .after(every)),
                    command: CommandJob(argv: ["work"]), firstRequest: .after(.seconds(1)))
        }
    }

    static let fiveSeconds: @Sendable (LaunchOrder, CommandJob) -> SimulatedHost.Behaviour = { _, _ in
        SimulatedHost.Behaviour(duration: .seconds(5))
    }

    @Test func aPartitionedNodeOrADatabaseRestartIsUnreachableNotFenced() throws {
        let db = ModelledDatabase(shardCount: 2, time: Self.t0)
        let a = db.connection(for: "a")
        let lease = try #require(try a.acquire(shard: 0, node: "a", lease: .seconds(10)))
        let store = try a.store(shard: 0, epoch: lease.epoch)
        db.partition("a", true)
        #expect(throws: ModelledDatabase.Unreachable.self) { try a.renew(shard: 0, node: "a", epoch: lease.epoch, lease: .seconds(10)) }
        #expect(throws: ModelledDatabase.Unreachable.self) { try store.apply([.putRecord(MachineRecord(table: "t", key: "k", value: "v"))]) }
        #expect(try db.connection(for: "b").heartbeat(node: "b", ttl: .seconds(10)) == ["b"])
        db.partition("a", false)
        db.down = true
        #expect(throws: ModelledDatabase.Unreachable.self) { try a.leases() }
        db.down = false
        try store.apply([.putRecord(MachineRecord(table: "t", key: "k", value: "v"))])
        #expect(try store.records(table: "t").count == 1)
    }

    @Test func oneNodeAcquiresLeadsAndRuns() throws {
        let db = ModelledDatabase(shardCount: 4, time: Self.t0)
        var hosts: [SimulatedHost] = []
        var now = Self.t0
        let node = ClusterNode(name: "a", database: db, jobs: Self.jobs(4), monotonic: { now },
                               makeRuntime: { _, _, store, options in
                                   let host = SimulatedHost(start: now)
                                   hosts.append(host)
                                   return try host.start(store: store, options: options)
                               })
        node.start()
        #expect(node.terms.keys.sorted() == [0, 1, 2, 3])
        #expect(node.history.map(\.line).prefix(4) == ["leads shard 0 (epoch 1)", "leads shard 1 (epoch 1)",
                                                      "leads shard 2 (epoch 1)", "leads shard 3 (epoch 1)"])
        // Each job in the runtime of its shard only.
        let map = ShardMap(shardCount: 4)
        for shard in 0..<4 {
            let ids = node.runtime(of: shard)!.pendingRequests().map(\.identifier).sorted()
            #expect(ids == Self.jobs(4).filter { map.shard(ofSpec: $0) == shard }.map(\.identifier).sorted())
        }
        // A minute: renewals keep the leases, every job runs every 20 s.
        for _ in 0..<600 {
            now = now + .milliseconds(100)
            db.time = now
            if let wake = node.wakeUp, wake <= now { node.timerFired() }
            for host in hosts { host.advance(to: now) }
            node.settle()
        }
        #expect(node.terms.count == 4)
        #expect(!node.history.contains { $0.line.hasPrefix("fenced") })
        let runs = (0..<4).flatMap { (try? db.committed(shard: $0).recentRuns(limit: 100)) ?? [] }
        #expect(runs.count >= 4 * 3)
        #expect(runs.allSatisfy { $0.outcome == .success || $0.ended == nil })
    }

    @Test func aRefusedCommitFencesThatShardOnly() throws {
        // The database gives shard 0 to another node behind the node's back (as an expired
        // lease taken would): the next commit of shard 0 is refused, the node fences shard 0,
        // kills its run at once, and keeps leading the others.
        let db = ModelledDatabase(shardCount: 2, time: Self.t0)
        var hosts: [Int: SimulatedHost] = [:]
        var now = Self.t0
        let jobs = Self.jobs(8)
        let node = ClusterNode(name: "a", database: db, jobs: jobs, monotonic: { now },
                               makeRuntime: { shard, _, store, options in
                                   // Runs that ignore SIGTERM: only the fence's immediate kill ends them.
                                   let host = SimulatedHost(start: now) { _, _ in .init(duration: .seconds(30), ignoresTerminate: true) }
                                   hosts[shard] = host
                                   return try host.start(store: store, options: options)
                               })
        node.start()
        now = now + .seconds(2)
        db.time = now
        for host in hosts.values { host.advance(to: now) }
        #expect(hosts[0]!.livingProcesses.count > 0)
        // Taken over: an acquire by b after a forced expiry.
        let row = try db.leases()[0]
        try db.release(shard: 0, node: "a", epoch: row.epoch)
        _ = try db.acquire(shard: 0, node: "b", lease: .seconds(10))
        // The next commit of shard 0 (an operator's submit) is refused by the fence.
        try? node.runtime(of: 0)!.submitForOperator(jobs.first { ShardMap(shardCount: 2).shard(ofSpec: $0) == 0 }!.identifier, earliest: now + .seconds(100))
        node.settle()
        #expect(node.terms.keys.sorted() == [1])
        #expect(node.history.contains { $0.line.hasPrefix("fenced shard 0 (epoch 1): a commit was refused") })
        hosts[0]!.advance(to: now)
        #expect(hosts[0]!.livingProcesses.isEmpty)  // killed at once, no grace
        #expect(hosts[1]!.livingProcesses.count > 0)
    }

    @Test func aKilledNodesShardsAreTakenOverWithinTheBound() {
        let sim = ClusterSimulation(jobs: Self.jobs(12), nodes: 3, start: Self.t0, duration: .seconds(180),
                                    faults: [.kill(node: 0, at: .seconds(40), restartAfter: nil)], behaviour: Self.fiveSeconds)
        let report = sim.run()
        #expect(report.violations == [])
        #expect(report.duplicates == 0 && report.lost == 0)
        #expect(report.takeoverTimes.count == 1)
        // Lease 10 s + one renewal interval (3.3 s) at most.
        #expect(report.takeoverTimes.allSatisfy { $0 <= .milliseconds(13_334) })
        #expect(report.launches > 12 * 5)
        // Who led what: every shard led at the end, node0's spans all end at its kill.
        #expect(Set(report.ownership.filter { $0.to == .seconds(180) }.map(\.shard)) == Set(0..<16))
        #expect(report.ownership.filter { $0.node == 0 }.allSatisfy { $0.to <= .seconds(40) })
        let svg = ClusterPicture.svg(report)
        #expect(svg.hasPrefix("<svg") && svg.hasSuffix("</svg>\n"))
        #expect(svg.components(separatedBy: ">shard ").count == 17)  // a lane per shard
        #expect(svg.components(separatedBy: "class=\"node-fault\"").count == 2)  // the kill
    }

    @Test func aPausedNodeIsFencedAtResumeAndNoSlotRunsTwice() {
        // node0 freezes for 30 s (longer than the lease) with runs in flight; its shards are
        // taken over; at resume its first act is to fence them all (kill its runs), and its
        // commits are refused.
        let sim = ClusterSimulation(jobs: Self.jobs(12), nodes: 2, start: Self.t0, duration: .seconds(180),
                                    faults: [.pause(node: 0, at: .seconds(43), for: .seconds(30))],
                                    behaviour: { _, _ in SimulatedHost.Behaviour(duration: .seconds(15)) })
        let report = sim.run()
        #expect(report.violations == [])
        #expect(report.duplicates == 0 && report.lost == 0)
        #expect(report.takeoverTimes.count == 1)
        let resumed = report.events.firstIndex { $0.hasSuffix("node0: resumed (SIGCONT)") }
        #expect(resumed != nil)
        if let resumed {
            // The next line of node0 after its resume is a fence.
            let next = report.events[(resumed + 1)...].first { $0.contains(" node0: ") }
            #expect(next?.contains("node0: fenced shard") == true)
        }
        #expect(report.fences >= 1)
    }

    @Test func aJoiningNodeGetsItsShareGracefully() {
        // node1 joins at 40 s: node0 hands 8 shards over (no run interrupted), node1 takes them.
        let sim = ClusterSimulation(jobs: Self.jobs(12), nodes: 2, start: Self.t0, duration: .seconds(120),
                                    faults: [.join(node: 1, at: .seconds(40))], behaviour: Self.fiveSeconds)
        let report = sim.run()
        #expect(report.violations == [])
        #expect(report.releases == 8)
        #expect(report.fences == 0)
        #expect(report.takeovers == 16 + 8)
        let runs = (0..<16).flatMap { (try? sim.database.committed(shard: $0).recentRuns(limit: 1000)) ?? [] }
        #expect(!runs.isEmpty && !runs.contains { $0.outcome == .interrupted })
    }

    /// The self-fence argument's drift bound (ARCHITECTURE.md): a node whose clock runs slow by
    /// less than margin / lease (20%) fences before the database lets another node take over; one
    /// running 40% slow fences too late, and the simulation sees two leaders run one job at once.
    @Test(arguments: [(0.9, true), (0.6, false)])
    func aSlowClockWithinTheBoundIsSafeAndBeyondItIsNot(_ rate: Double, _ safe: Bool) {
        // Long runs of jobs due every 5 s: a new leader launches at once what the old one runs.
        let jobs = (0..<8).map { i in
            JobSpec(definition: TaskDefinition(identifier: "job\(i)", kind: .processing, namespace: "ns\(i)",
                                               allowance: .seconds(120), resubmit: .after(.seconds(5))),
                    command: CommandJob(argv: ["work"]), firstRequest: .after(.seconds(1)))
        }
        let faults: [ClusterSimulation.Fault] = [.drift(node: 0, rate: rate)]
            + (0..<3).map { .partition(node: 0, at: .seconds(Int64(40 + 120 * $0)), for: .seconds(30)) }
        let report = ClusterSimulation(jobs: jobs, nodes: 2, shards: 4, start: Self.t0, duration: .seconds(420), faults: faults,
                                       behaviour: { _, _ in SimulatedHost.Behaviour(duration: .seconds(60)) }).run()
        #expect(report.violations.isEmpty == safe, "\(report.violations)")
        if !safe { #expect(report.violations.first?.contains("alive at once on two leaders") == true) }
        // Each cut: node0 fences its shards itself, node1 takes them, and gets them back later.
        if safe { #expect(report.fences >= 4 && report.takeovers >= 8, "\(report.lines)") }
    }

    @Test func twentyExploredPlansOnThreeNodesHaveNoDuplicateAndNothingLost() {
        for seed in UInt64(1)...20 {
            let faults = ClusterSimulation.plan(seed: seed, nodes: 3, duration: .seconds(240))
            let report = ClusterSimulation(jobs: Self.jobs(16), nodes: 3, start: Self.t0, duration: .seconds(240),
                                           faults: faults, behaviour: Self.fiveSeconds).run()
            #expect(report.violations == [], "seed \(seed): \(faults)")
            #expect(report.duplicates == 0 && report.lost == 0)
        }
    }

    /// Jobs due every 5 s whose runs last a minute: a new leader launches at once what the
    /// old one runs, so a cut-off node that does not kill its run in time runs the job beside it.
    static func longRuns(_ count: Int) -> [JobSpec] {
        (0..<count).map { i in
            JobSpec(definition: TaskDefinition(identifier: "job\(i)", kind: .processing, namespace: "ns\(i)",
                                               allowance: .seconds(120), resubmit: .after(.seconds(5))),
                    command: CommandJob(argv: ["work"]), firstRequest: .after(.seconds(1)))
        }
    }

    static let oneMinute: @Sendable (LaunchOrder, CommandJob) -> SimulatedHost.Behaviour = { _, _ in
        SimulatedHost.Behaviour(duration: .seconds(60))
    }

    /// Issue 32: a real partition answers nothing, so each call of a cut-off node waits for its
    /// 10 s bound. Its calls run on a thread of their own: the self-fence deadline fires on time
    /// and the node kills its runs before another node may take the shard. With the calls on the
    /// node's own thread (refreshd before issue 32) the deadline waits for the hung call, and the
    /// simulation sees the cut-off node's run alive past its deadline, beside the new leader's.
    @Test(arguments: [false, true])
    func aCutOffNodeKillsItsRunsByItsOwnDeadlineWhateverItsCallsDo(_ callsOnNodeThread: Bool) {
        let sim = ClusterSimulation(jobs: Self.longRuns(8), nodes: 2, shards: 4, start: Self.t0, duration: .seconds(240),
                                    faults: [.partition(node: 0, at: .seconds(40), for: .seconds(30))], behaviour: Self.oneMinute)
        sim.callsOnNodeThread = callsOnNodeThread
        let report = sim.run()
        if callsOnNodeThread {
            #expect(report.violations.first?.contains("past its self-fence deadline") == true, "\(report.violations)")
        } else {
            #expect(report.violations == [], "\(report.lines)")
            #expect(report.duplicates == 0 && report.lost == 0)
            // node0 fenced each shard by its own deadline, 8 s after its last confirmed renewal.
            #expect(report.events.contains { $0.contains("node0: fenced shard") && $0.contains("no renewal confirmed") })
        }
    }

    /// `longRuns` with, in each namespace (so in the same shard), a job of 1 s runs due every
    /// 2 s: its shard commits within a second or two of any instant.
    static func longAndQuickRuns(_ count: Int) -> [JobSpec] {
        longRuns(count) + (0..<count).map { i in
            JobSpec(definition: TaskDefinition(identifier: "tick\(i)", kind: .processing, namespace: "ns\(i)",
                                               allowance: .seconds(60), resubmit: .after(.seconds(2))),
                    command: CommandJob(argv: ["tick"]), firstRequest: .after(.seconds(1)))
        }
    }

    static let oneMinuteOrOneSecond: @Sendable (LaunchOrder, CommandJob) -> SimulatedHost.Behaviour = { order, _ in
        SimulatedHost.Behaviour(duration: order.identifier.hasPrefix("tick") ? .seconds(1) : .seconds(60))
    }

    /// Issue 32: a shard's own store calls run on its loop, so a commit of a cut-off node blocks
    /// that loop for its 10 s bound, past the node's self-fence deadline (8 s after its last
    /// confirmed renewal): the shard can neither expire nor kill its runs meanwhile. The node
    /// kills the shard's live process groups from its own thread at the fence (`onFence`), as
    /// the libuv daemon does; with that kill taken out (the runtime's own kill only, which waits
    /// for the loop), the simulation sees the fenced node's minute-long run alive after the fence.
    @Test(arguments: [false, true])
    func aShardLoopFrozenInAHungCallHasItsRunsKilledAtTheFence(_ fenceKillsOnShardLoop: Bool) {
        let sim = ClusterSimulation(jobs: Self.longAndQuickRuns(8), nodes: 2, shards: 4, start: Self.t0, duration: .seconds(240),
                                    faults: [.partition(node: 0, at: .seconds(40), for: .seconds(30))], behaviour: Self.oneMinuteOrOneSecond)
        sim.fenceKillsOnShardLoop = fenceKillsOnShardLoop
        let report = sim.run()
        #expect(report.frozenLoops > 0, "\(report.events)")
        #expect(report.events.contains { $0.contains("node0: shard") && $0.contains("loop frozen until") })
        if fenceKillsOnShardLoop {
            #expect(report.violations.first?.contains("still alive after shard") == true, "\(report.violations)")
        } else {
            #expect(report.violations == [], "\(report.lines + report.events)")
            #expect(report.duplicates == 0 && report.lost == 0)
            #expect(report.lines.contains { $0.hasPrefix("shard loops frozen by a hung call: ") })
        }
    }

    /// Issue 32: SIGTERM to a node with runs in flight: they get their expiration (the runtime's
    /// stop rule), the node takes no shard from then on, releases each as it drains and exits;
    /// the other node takes them at once.
    @Test func aStoppedNodeTakesNothingReleasesItsShardsAndExits() throws {
        let sim = ClusterSimulation(jobs: Self.jobs(12), nodes: 2, start: Self.t0, duration: .seconds(120),
                                    faults: [.stop(node: 0, at: .seconds(40))], behaviour: Self.fiveSeconds)
        let report = sim.run()
        #expect(report.violations == [], "\(report.lines)")
        #expect(report.stopTimes.count == 1)
        #expect(report.stopTimes.allSatisfy { $0 <= .seconds(2) }, "\(report.stopTimes)")
        #expect(report.events.contains { $0.hasSuffix("node0: exited (left the cluster)") })
        // node0 took all 16 at the start and handed 8 over as node1 appeared; it gives the other 8 back at the stop.
        let stop = try #require(report.events.firstIndex { $0.hasSuffix("node0: SIGTERM") })
        #expect(report.events[stop...].filter { $0.contains("node0: released shard") }.count == 8, "\(report.events)")
        #expect(!report.events[stop...].contains { $0.contains("node0: leads") })
        #expect(report.fences == 0)
        // node1 leads all 16 shards by the end.
        #expect(Set(report.ownership.filter { $0.node == 1 && $0.to == .seconds(120) }.map(\.shard)) == Set(0..<16))
        let runs = (0..<16).flatMap { (try? sim.database.committed(shard: $0).recentRuns(limit: 1000)) ?? [] }
        #expect(runs.allSatisfy { $0.ended != nil })
    }

    /// Issue 32: a node stopped while cut off (or after a partition healed) still leaves: by its
    /// self-fence deadline when its calls hang, at once after the heal; it never takes a shard
    /// after the signal.
    @Test(arguments: [(45, 60), (75, 20)])
    func aNodeStoppedDuringOrAfterAPartitionLeaves(_ stopAt: Int64, _ cut: Int64) {
        let faults: [ClusterSimulation.Fault] = [.partition(node: 0, at: .seconds(40), for: .seconds(cut)), .stop(node: 0, at: .seconds(stopAt))]
        let sim = ClusterSimulation(jobs: Self.longRuns(8), nodes: 2, shards: 4, start: Self.t0, duration: .seconds(200),
                                    faults: faults, behaviour: Self.oneMinute)
        let report = sim.run()
        #expect(report.violations == [], "\(report.lines + report.events)")
        #expect(report.stopTimes.count == 1)
        #expect(report.stopTimes.allSatisfy { $0 <= .seconds(10) }, "\(report.stopTimes)")
    }

    /// Issue 32: a node stopping while shards are free (another node died) takes none of them,
    /// however long its own runs take to end (here they ignore SIGTERM and die at the end of
    /// their 20 s grace): before, the daemon went on surveying after SIGTERM and took shards.
    @Test func aStoppingNodeTakesNoShardEvenWhenShardsAreFree() {
        let jobs = Self.longRuns(8).map { spec in
            var spec = spec
            spec.definition.grace = .seconds(20)
            return spec
        }
        let sim = ClusterSimulation(jobs: jobs, nodes: 2, shards: 4, start: Self.t0, duration: .seconds(120),
                                    faults: [.kill(node: 1, at: .seconds(40), restartAfter: nil), .stop(node: 0, at: .seconds(41))],
                                    behaviour: { order, _ in
                                        // Short runs at first, so node0 hands two shards over to node1 by 30 s.
                                        order.started < Self.t0 + .seconds(30) ? SimulatedHost.Behaviour(duration: .seconds(2))
                                            : SimulatedHost.Behaviour(duration: .seconds(60), ignoresTerminate: true)
                                    })
        let report = sim.run()
        // node1 led shards when it died: they are free from its lease's end on, node0 takes none.
        #expect(report.ownership.contains { $0.node == 1 && $0.to == .seconds(40) })
        #expect(report.violations == [], "\(report.lines + report.events)")
        #expect(report.stopTimes.count == 1)
        #expect(report.stopTimes.allSatisfy { $0 >= .seconds(5) && $0 <= .seconds(21) }, "\(report.stopTimes)")
    }
}
