import Foundation
import Logging
import RefreshdConfig
import RefreshdCore
import RefreshdRuntime

/// N nodes over one modelled database (issue 24), in virtual time: each node a `ClusterNode`
/// with its own virtual monotonic clock and a `SimulatedHost` per shard term, all advanced in
/// lock-step by one world loop from deadline to deadline (the database's clock is the world's).
///
/// Faults: a node killed (kill -9: its runtimes vanish, its job processes live on until they
/// end) and restarted; paused (SIGSTOP: it receives nothing while time passes, its job
/// processes keep running, and it resumes late: the zombie); cut off from the database (its
/// calls get no answer and fail at their bound); its clock running fast or slow; the database
/// down (a restart); stopped (SIGTERM).
///
/// Each node's database calls run on a modelled calls thread of their own, one after another,
/// each taking the time it waits (`ModelledDatabase.callBound` when cut off), as the libuv
/// daemon's calls thread does; `callsOnNodeThread` models a node whose own thread makes its
/// calls and so waits for them (refreshd before issue 32), which lets a self-fence deadline
/// pass while a call hangs. A shard's own calls (its commits, the reads of its queued commands)
/// run on its loop, as on the libuv daemon: a cut-off one freezes that shard's host for the
/// call's bound (`SimulatedHost.freeze`: no event, no timer, no process end, no expiration or
/// kill of its runs), then the failure takes the runtime's fenced path. So at a fence the node
/// kills the shard's live process groups itself (`ClusterNode.onFence`, as `RefreshDaemon` does
/// with `killLiveGroups`) before the runtime's own fence, which waits for the loop;
/// `fenceKillsOnShardLoop` takes that kill out (the runtime's kill only). Invariants after
/// every step:
/// - no request (job, submitted, earliest) launched twice, and no two processes of one request
///   alive at once on any nodes;
/// - no launch by a node whose lease was not valid at that database instant (checked at the
///   process's start against the lease row);
/// - nothing committed lost: every process started has its run committed in its shard;
/// - no job process of a fenced term alive after the step at which it was fenced, and none of a
///   term alive past its self-fence deadline (the last confirmed renewal's send + lease −
///   margin on the node's clock), whatever the node's calls are doing;
/// - after a stop signal the node takes no shard, and it has left (every shard released or
///   fenced, no process left) within max(lease, the longest grace) + a renewal interval + 1 s;
/// - liveness: after a kill or a pause, every shard the victim led is led again by a live node
///   within lease + renewal interval + 1 s (when some node can reach the database).
/// - no provider result ignored by a widget with no call in flight (a reload lost, as when a
///   hand-over restored a held provider call as interrupted);
/// - a reload budget shared by a kind or a namespace spent at most to its limit across every
///   shard's committed ledgers (`checkSharedBudgets`).
package final class ClusterSimulation: @unchecked Sendable {
    package typealias Fault = NodeFault

    /// One node of the world.
    final class Node: @unchecked Sendable {
        let index: Int
        let name: String
        var cluster: ClusterNode?
        /// Every shard term's host this node ever made (they keep their processes when it dies).
        var hosts: [(shard: Int, epoch: Int64, host: SimulatedHost)] = []
        var rate = 1.0
        var pausedUntil: Instant?
        var restartAt: Instant?
        /// Fenced terms and the world instant they were fenced at.
        var fencedAt: [String: Instant] = [:]
        /// Its connection to the database (what its calls waited).
        var connection: Connection?
        /// Its calls thread: the calls queued, and the one in flight's end and answers.
        var calls: [@Sendable () -> [LeaseMachine.Event]] = []
        var callEnds: Instant?
        var callAnswers: [LeaseMachine.Event] = []
        /// Whether its calls thread is running a call now, and the bodies that call hands to its
        /// shards' loops, which go when it ends (`dispatch`).
        var inCall = false
        var forLoops: [(shard: Int, epoch: Int64, body: @Sendable () -> Void)] = []
        /// When it got its stop signal, and the leases it held then ("shard/epoch").
        var stoppedAt: Instant?
        var heldAtStop: Set<String> = []

        init(index: Int) {
            self.index = index
            name = "node\(index)"
        }
    }

    package let shards: Int
    package let settings: LeaseMachine.Settings
    let database: ModelledDatabase
    let start: Instant
    let end: Instant
    var world: Instant
    let faults: [Fault]
    let jobs: [JobSpec]
    let behaviour: @Sendable (LaunchOrder, CommandJob) -> SimulatedHost.Behaviour
    /// What each node gives its shards' runtimes (the actions binding, the shared container).
    let options: RefreshRuntime.Options
    /// The one-machine simulation whose models (staging, providers) the behaviour reads, and
    /// whose journals hear every shard's commits and observations: its report (`Report.machine`)
    /// is one machine's, of the whole cluster's runs.
    let single: Simulation
    /// Gives each shard term's host what one machine's host has beyond its behaviour (the
    /// modelled built-in actions, the notification receiver).
    var configureHost: ((SimulatedHost) -> Void)?
    var nodes: [Node] = []
    var report: Report
    /// Every request launched, (shard, identifier, submitted, earliest) -> run id.
    var launched: [String: Int64] = [:]
    /// Launches seen at their process's start, to check commit-before-act at the end.
    var started: [(shard: Int, runID: Int64)] = []
    /// Liveness checks due: (deadline, shards that must be led again, since, what).
    var awaiting: [(since: Instant, shards: Set<Int>, what: String)] = []
    /// The shards led now by node index, since when (for `Report.ownership`).
    var open: [Int: (node: Int, since: Duration)] = [:]
    /// Whether each node's own thread makes its database calls and waits for them (refreshd
    /// before issue 32): a deadline due during a call comes only when the call returns.
    package var callsOnNodeThread = false
    /// Whether a fence's kill is only the shard runtime's own, on its loop (the node's
    /// `onFence` kill taken out): a loop frozen in a hung call then kills nothing until the
    /// call fails, and a fenced node's runs live on beside the new leader's.
    package var fenceKillsOnShardLoop = false
    /// The planted defect (`Scenario.Hooks.misplacePlainJobs`): plain jobs in the shard of their
    /// identifier, not their namespace's, for this run (`ShardMap.plantedPlacementByIdentifier`).
    package var misplacesPlainJobs = false
    /// Each budget a namespace or kind shares (`budget-scope: kind|namespace`): its widget
    /// kinds, limit and window, for the invariant that reads every shard's committed ledgers.
    let sharedBudgets: [(group: String, kinds: Set<String>, limit: Int, window: Duration)]
    /// Whether a commit since the last check wrote a widget record (its ledger).
    var widgetsCommitted = false
    /// Audits every shard's commits for reloads counted twice (`Journal.auditReloads`).
    let reloads = Journal()

    func close(shard: Int, node: Int) {
        guard let span = open[shard], span.node == node else { return }
        open[shard] = nil
        report.ownership.append(Report.Span(shard: shard, node: node, from: span.since, to: world.duration(since: start)))
    }

    /// Pairs of runs of one job seen alive at once with one of them a zombie's.
    var zombieOverlaps: Set<String> = []
    /// Steps of the world loop (for the picture's verdict, as one machine counts its steps).
    var steps = 0

    package init(jobs: [JobSpec], nodes: Int, shards: Int = 16, start: Instant, duration: Duration,
                faults: [Fault] = [], settings: LeaseMachine.Settings = .init(), callBound: Duration = .seconds(10),
                options: RefreshRuntime.Options = .init(), single: Simulation? = nil,
                behaviour: @escaping @Sendable (LaunchOrder, CommandJob) -> SimulatedHost.Behaviour = { _, _ in .quickSuccess }) {
        self.options = options
        var groups: [String: (kinds: Set<String>, limit: Int, window: Duration)] = [:]
        for spec in jobs {
            guard let widget = spec.widget, let limit = widget.budget,
                  let group = widget.budgetGroup(namespace: spec.definition.namespace) else { continue }
            groups[group, default: ([], limit, .seconds(86_400))].kinds.insert(widget.kind)
            groups[group]!.limit = max(groups[group]!.limit, limit)
        }
        sharedBudgets = groups.keys.sorted().map { (group: $0, kinds: groups[$0]!.kinds, limit: groups[$0]!.limit, window: groups[$0]!.window) }
        self.single = single ?? {
            var scenario = Scenario(name: "\(jobs.count) jobs on \(nodes) nodes", jobs: jobs.map { Scenario.Job(spec: $0) }, start: start,
                                    days: Int(max(1, (duration.components.seconds + 86_399) / 86_400)))
            scenario.until = start + duration
            return Simulation(scenario: scenario)
        }()
        self.shards = shards
        self.settings = settings
        self.start = start
        end = start + duration
        world = start
        self.faults = faults
        self.jobs = jobs
        self.behaviour = behaviour
        database = ModelledDatabase(shardCount: shards, time: start, callBound: callBound)
        report = Report(nodes: nodes, shards: shards, duration: duration, faults: faults)
        self.nodes = (0..<nodes).map { Node(index: $0) }
        for fault in faults { if case let .drift(n, rate) = fault, n < nodes { self.nodes[n].rate = rate } }
        // Every shard's commits, as one machine's store hands its own to the same journals.
        let history = self.single.history, actions = self.single.actions
        // Each widget's reloads counted once across takeovers (`reload-counted-once`), in a
        // journal of their own: the one machine's journal also hears observations whose audits
        // (a kill before an expiration) a fence breaks by design.
        reloads.providerWidgets = self.single.journal.providerWidgets
        let reloads = self.reloads
        database.onCommit = { [unowned self] changes in
            history.fold(changes)
            actions.fold(changes)
            reloads.auditReloads(changes, at: self.world)
            if !self.widgetsCommitted, !self.sharedBudgets.isEmpty, changes.contains(where: {
                if case let .putRecord(record) = $0 { return record.table == TimelineChange.widgetTable }
                return false
            }) { self.widgetsCommitted = true }
        }
    }

    /// The node's monotonic clock at world instant `t` (its rate applied since the start).
    func monotonic(_ node: Node, _ t: Instant) -> Instant {
        let elapsed = Double(t.milliseconds - start.milliseconds) * node.rate
        return Instant(milliseconds: 1_000_000 + Int64(elapsed.rounded(.down)))
    }

    /// The world instant at which the node's monotonic clock reads `m`.
    func worldInstant(_ node: Node, monotonic m: Instant) -> Instant {
        let elapsed = Double(m.milliseconds - 1_000_000) / node.rate
        return Instant(milliseconds: start.milliseconds + Int64(elapsed.rounded(.up)))
    }

    func boot(_ node: Node) {
        let connection = Connection(database: database, node: node.name)
        node.connection = connection
        node.calls = []
        node.callEnds = nil
        node.callAnswers = []
        node.forLoops = []
        node.stoppedAt = nil
        let cluster = ClusterNode(name: node.name, database: connection, jobs: jobs,
                                  settings: settings, options: options, monotonic: { [unowned self, unowned node] in self.monotonic(node, self.world) },
                                  makeRuntime: { [unowned self, unowned node] shard, epoch, store, options in
                                      try self.makeRuntime(node, shard, epoch, store, options)
                                  })
        cluster.onHistory = { [unowned self, unowned node] _, line in
            let offset = self.world.duration(since: self.start)
            self.report.events.append("+\(Report.seconds(offset)) \(node.name): \(line)")
            if line.hasPrefix("leads") { self.report.takeovers += 1 }
            let words = line.split(separator: " ")
            if line.hasPrefix("leads"), node.stoppedAt != nil, words.count > 4,
               !node.heldAtStop.contains("\(words[2])/\(words[4].filter(\.isNumber))") {
                self.report.violations.append("\(node.name) \(line) after its stop signal")
            }
            if words.count > 4, let shard = Int(words[2]), let epoch = Int64(words[4].filter(\.isNumber)),
               let what = Report.Change.What(rawValue: String(words[0])) {
                // A shard led before by another node is taken over.
                let before = self.report.changes.last { $0.shard == shard && ($0.what == .leads || $0.what == .takeover) }
                let change = what == .leads && before.map { $0.node != node.index } == true ? .takeover : what
                self.report.changes.append(.init(at: offset, node: node.index, shard: shard, epoch: epoch, what: change, line: line))
            }
            if words.count > 2, let shard = Int(words[2]) {
                if line.hasPrefix("leads") {
                    // A zombie still thinks it leads; the database says the new leader does.
                    if let previous = self.open[shard] { self.close(shard: shard, node: previous.node) }
                    self.open[shard] = (node.index, offset)
                }
                if line.hasPrefix("released") || line.hasPrefix("fenced") { self.close(shard: shard, node: node.index) }
            }
            if line.hasPrefix("fenced") {
                self.report.fences += 1
                if let term = line.split(separator: " ").dropFirst(2).first, let epoch = line.split(separator: " ").dropFirst(4).first {
                    node.fencedAt["\(term)/\(epoch.filter(\.isNumber))"] = self.world
                }
            }
            if line.hasPrefix("released") { self.report.releases += 1 }
        }
        cluster.callRunner = { [unowned node] call in node.calls.append(call) }
        cluster.onRestored = { [unowned self, unowned cluster, unowned node] shard, epoch in
            guard single.isBudgetEmpty(at: world), let term = cluster.terms[shard], term.epoch == epoch,
                  let host = node.hosts.first(where: { $0.shard == shard && $0.epoch == epoch })?.host else { return }
            single.carry(.budgetEmpty(true), to: term.runtime, on: host, at: world)
        }
        cluster.onShardContext = { [unowned self, unowned node] shard, epoch, body in
            self.onShardLoop(node, shard, epoch, body)
        }
        if !fenceKillsOnShardLoop {
            // The kill at once, from the node's thread, whatever the shard's loop is doing.
            cluster.onFence = { [unowned self, unowned node] shard, epoch in
                for term in node.hosts where term.shard == shard && term.epoch == epoch { term.host.killLiveGroups(at: self.world) }
            }
        }
        node.cluster = cluster
        cluster.start()
        settle(node, cluster)
    }

    /// Runs the whole plan.
    package func run() -> Report {
        ShardMap.$plantedPlacementByIdentifier.withValue(misplacesPlainJobs) { runWorld() }
    }

    func runWorld() -> Report {
        let joining = Set(faults.compactMap { if case let .join(n, _) = $0 { n } else { nil } })
        for node in nodes where !joining.contains(node.index) { boot(node) }
        var boundaries = faultBoundaries()
        var worldEvents = worldEvents()[...]
        while world < end, report.violations.isEmpty {
            var next = end
            if let b = boundaries.first?.at, b < next { next = b }
            if let w = worldEvents.first?.at, w < next { next = w }
            for node in nodes where node.cluster != nil && node.pausedUntil == nil {
                // A node waiting for its own call (`callsOnNodeThread`) acts again at the call's end.
                if !blocked(node), let w = node.cluster?.wakeUp { next = min(next, max(world, worldInstant(node, monotonic: w))) }
                if let ends = node.callEnds { next = min(next, max(world, ends)) }
                for term in node.hosts { if let t = term.host.nextEventTime { next = min(next, max(world, t)) } }
            }
            for node in nodes where node.cluster == nil || node.pausedUntil != nil {
                // Orphaned or frozen processes still end in time.
                for term in node.hosts { if let t = term.host.nextEventTime, node.cluster == nil { next = min(next, max(world, t)) } }
            }
            world = next
            steps += 1
            database.time = world
            while let b = boundaries.first, b.at <= world {
                boundaries.removeFirst()
                apply(b.action)
            }
            for node in nodes { step(node) }
            // After the step: each shard's host is at this instant, so what the world changes is
            // decided now, not at the host's last event (an emptied budget's end came 2 s early).
            while let w = worldEvents.first, w.at <= world {
                worldEvents.removeFirst()
                applyWorld(w.action)
            }
            check()
        }
        for node in nodes { for term in node.hosts { term.host.advance(to: world) } }
        for shard in open.keys.sorted() { if let span = open[shard] { close(shard: shard, node: span.node) } }
        report.marks = faultBoundaries().map { ($0.at.duration(since: start), "\($0.action)") }
        // What the jobs and widgets did, from every shard's committed state, summed per day.
        var jobs: [String: DailyCounter] = [:], widgets: [String: WidgetDayCounter] = [:]
        for shard in 0..<shards {
            let store = database.committed(shard: shard)
            for c in (try? store.dailyCounters(days: nil)) ?? [] {
                let key = "\(c.day) \(c.identifier)"
                guard var sum = jobs[key] else { jobs[key] = c; continue }
                sum.launches += c.launches; sum.successes += c.successes; sum.failures += c.failures
                sum.expired += c.expired; sum.crashed += c.crashed; sum.interrupted += c.interrupted; sum.missed += c.missed
                jobs[key] = sum
            }
            for w in (try? SavedMachineState(store: store).counters) ?? [] { widgets["\(w.day) \(w.kind) \(w.family.rawValue)"] = w }
        }
        report.jobs = jobs.keys.sorted().map { jobs[$0]! }
        report.widgets = widgets.keys.sorted().map { widgets[$0]! }
        // One machine's report of the whole cluster's runs (the node faults are the cluster's).
        var machine = SimulationReport.build(single)
        machine.scenario += " on \(nodes.count) nodes"
        machine.steps = steps
        machine.violations = report.violations.map { .init(time: world, invariant: "cluster", message: $0, recent: []) }
        report.machine = machine
        return report
    }

    func step(_ node: Node) {
        guard let cluster = node.cluster else {
            // A killed node's processes run on to their end (nobody hears of it).
            for term in node.hosts { term.host.advance(to: world) }
            return
        }
        guard node.pausedUntil == nil else { return }
        // Terms no longer led whose processes are all gone have nothing more to deliver.
        node.hosts.removeAll { term in
            cluster.terms[term.shard]?.epoch != term.epoch && term.host.livingProcesses.isEmpty && term.host.nextEventTime == nil
        }
        // The lease machine first: a fence due now comes before anything the hosts deliver.
        settle(node, cluster)
        if !blocked(node), let w = cluster.wakeUp, worldInstant(node, monotonic: w) <= world {
            cluster.timerFired()
            settle(node, cluster)
        }
        for term in node.hosts {
            term.host.advance(to: world)
            settle(node, cluster)
        }
        if cluster.hasLeft { left(node) }
    }

    /// A run as its shard's database holds it.
    func committedRun(shard: Int, runID: Int64) -> RunRecord? {
        (try? database.committed(shard: shard).recentRuns(limit: 1, before: runID + 1))?.first { $0.runID == runID }
    }
}

extension NodeFault {
    var isPartitionOrDown: Bool {
        switch self {
        case .partition, .databaseDown: true
        default: false
        }
    }
}

extension ClusterSimulation {
    /// A scenario's jobs and models on `nodes` nodes, for its days, with `faults`: every kind of
    /// job (issue 32), each shard's runtime bound to the modelled built-in actions and the
    /// scenario's shared container as one machine's is, and every shard's commits folded into
    /// the one staging model the providers read (the shared container every node mounts).
    package convenience init(scenario: Scenario, nodes: Int, shards: Int = 16, faults: [Fault],
                            duration: Duration? = nil, settings: LeaseMachine.Settings = .init()) {
        var scenario = scenario
        if let duration { scenario.until = scenario.start + duration }
        let single = Simulation(scenario: scenario)
        var logger = Logger(label: "simulate") { _ in SwiftLogNoOpLogHandler() }
        logger.logLevel = .critical
        let options = RefreshRuntime.Options(
            configuration: SchedulerConfiguration(maxConcurrentRuns: scenario.maxConcurrentRuns, seed: scenario.seed),
            sharedContainer: scenario.sharedContainer, logger: logger,
            actions: SimulatedActions.binding.merging(scenario.actions))
        self.init(jobs: single.specs, nodes: nodes, shards: shards,
                  start: scenario.start, duration: duration ?? .seconds(Int64(scenario.days) * 86_400), faults: faults,
                  settings: settings, options: options, single: single, behaviour: single.host.behaviour)
        misplacesPlainJobs = scenario.hooks.misplacePlainJobs
        let model = single.host
        configureHost = { host in
            host.actionBehaviour = model.actionBehaviour
            host.notificationReceiver = model.notificationReceiver
        }
    }

    /// One explored plan (`simulate --nodes N --explore K`): the scenario's jobs for an hour on
    /// `nodes` nodes under the faults `plan(seed:)` draws for that hour.
    package static func explored(_ setup: Scenario, nodes: Int, seed: UInt64) -> (faults: [Fault], report: Report) {
        let hour = Duration.seconds(3600)
        let faults = plan(seed: seed, nodes: nodes, duration: hour)
        var one = setup
        one.days = 1
        return (faults, ClusterSimulation(scenario: one, nodes: nodes, faults: faults, duration: hour).run())
    }

    /// A seeded fault plan for `nodes` nodes over `duration`: a kill with a restart, a pause past
    /// the lease, a partition, a database restart and a clock drift, each drawn or not, at
    /// instants and for spans drawn from the seed.
    package static func plan(seed: UInt64, nodes: Int, duration: Duration) -> [Fault] {
        var state = seed &+ 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            state = state &+ 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        func below(_ n: UInt64) -> UInt64 { n == 0 ? 0 : next() % n }
        let span = UInt64(max(60, duration.components.seconds - 60))
        var faults: [Fault] = []
        let count = 1 + Int(below(4))
        for _ in 0..<count {
            let node = Int(below(UInt64(nodes)))
            let at = Duration.seconds(Int64(30 + below(span)))
            switch below(5) {
            case 0: faults.append(.kill(node: node, at: at, restartAfter: below(2) == 0 ? .seconds(Int64(5 + below(60))) : nil))
            case 1: faults.append(.pause(node: node, at: at, for: .seconds(Int64(11 + below(40)))))
            case 2: faults.append(.partition(node: node, at: at, for: .seconds(Int64(5 + below(40)))))
            case 3: faults.append(.databaseDown(at: at, for: .seconds(Int64(2 + below(20)))))
            default: faults.append(.drift(node: node, rate: [0.9, 0.95, 1.05, 1.1][Int(below(4))]))
            }
        }
        return faults
    }
}
