import Foundation
import RefreshdCore

/// One node of a cluster (issue 24), independent of its host: one `LeaseMachine` and one
/// `RefreshRuntime` per shard it leads, each over `database.store(shard:epoch:)` (every commit
/// fenced) and a host of its own that `makeRuntime` supplies (the simulation: a `SimulatedHost`
/// per shard term; the daemon, `RefreshDaemon`: a `RefreshScheduler` per shard term, on a thread
/// and libuv loop of its own).
///
/// Taking a shard is a restore: the shard's runtime is made on its store and loaded with the
/// jobs of that shard (`ShardMap`: templates in every shard, an instance in the shard of its
/// whole identifier) by the same `load` as a restart after kill -9, so the old owner's runs in
/// flight become `interrupted` and missed slots follow their policy. A cluster's runtimes do not
/// retry an interrupted run (`SchedulerConfiguration.retriesInterruptedRuns`): the new leader
/// cannot reap the old owner's processes, so the slot counts as run and never runs twice.
///
/// Nothing a database call or a shard does can delay the node's deadlines (issue 32). The node's
/// own thread only feeds the lease machine and carries out its effects; every database call,
/// and a shard's restore (it reads the database), goes to `callRunner` (the libuv daemon: a
/// thread of its own; the simulation: a modelled one whose calls take their time), whose answers
/// come back through `deliver`. What the node asks of a shard's runtime (hold, stop, fence) runs
/// on the shard's own context (`onShardContext`), since the runtime's lock may be held by a
/// commit blocked on the network; the node only peeks at it (`runsInFlightIfFree`). So a
/// self-fence deadline fires on time and a fence's kill (`onFence`) is immediate whatever the
/// database does. A call that throws counts as a failed renewal (the lease machine fences the
/// shard at its own deadline); a node never crashes on it.
package final class ClusterNode: @unchecked Sendable {
    /// One led (or handed over, or fenced) shard: its epoch and its runtime.
    package struct Term {
        package var shard: Int
        package var epoch: Int64
        package var runtime: RefreshRuntime
        package var handingOver = false
    }

    /// Makes a shard's runtime over `store` with `options`, attached to a host of its own.
    package typealias RuntimeFactory = (_ shard: Int, _ epoch: Int64, _ store: any StateStoring,
                                       _ options: RefreshRuntime.Options) throws -> RefreshRuntime
    /// Carries out one operator command on the shard's runtime (from `pendingCommands`) and
    /// says what came of it (kept as the command's applied record, one JSON object).
    package typealias CommandApplier = (_ runtime: RefreshRuntime, _ command: ShardCommand) -> String

    package let name: String
    package let database: any ShardDatabase
    package let map: ShardMap
    let makeRuntime: RuntimeFactory
    let applyCommand: CommandApplier
    /// The node's monotonic clock (the lease machine's instants).
    let monotonic: () -> Instant
    var options: RefreshRuntime.Options
    var jobs: [JobSpec]
    let lock = Lock(recursive: true)
    // Guarded by `lock`.
    package private(set) var machine: LeaseMachine
    /// The shards led (and the ones being handed over), by shard.
    package internal(set) var terms: [Int: Term] = [:]
    /// The stop signal the node received last (a shard whose restore ends later gets it too).
    var stopSignalName: String?
    /// When the lease machine wants its next `.tick` (monotonic).
    package internal(set) var wakeUp: Instant?
    /// Events reported by runtimes (a refused commit) waiting for the node's loop.
    var reported: [LeaseMachine.Event] = []
    var running = false
    /// What this node's lease machine did since the node started (`refreshd ctl metrics` in
    /// cluster mode), behind a lock of their own: a reader never waits for a database call.
    package struct Counters: Sendable, Equatable {
        /// Renewals the database confirmed.
        package var renewals = 0
        /// Renewals the database refused (the lease was gone: the shard is fenced).
        package var renewalsRefused = 0
        /// Renewals that could not be made (the database unreachable or too slow).
        package var renewalsFailed = 0
        /// Shards taken and restored (`leads shard N`): at start, after a takeover, after a join.
        package var leads = 0
        /// Acquires the database refused or skipped (another holder, or its row being written).
        package var acquiresRefused = 0
        /// Shards fenced, by reason: `renewal-not-confirmed`, `renewal-refused`, `commit-refused`.
        package var fences: [String: Int] = [:]
        /// Shards given back: handed over to a joining node, or at a graceful stop.
        package var releases = 0

        package init() {}
    }
    let countersLock = Lock(recursive: false)
    private var countersValue = Counters()
    /// A copy of the counters now (any thread).
    package var counters: Counters { countersLock.withLock { countersValue } }
    func count(_ change: (inout Counters) -> Void) { countersLock.withLock { change(&countersValue) } }

    /// What the node did, one line each (takeovers, fences, releases), for reports and tests:
    /// the last `historyLimit` lines (a node runs for months).
    package private(set) var history: [(at: Instant, line: String)] = []
    package static let historyLimit = 1000
    /// The most queued commands one transaction applies (a bound on a commit's size: 64
    /// commands of a 4,000-key request's share each, about 16,000 instances).
    static let commandsPerCommit = 64
    /// Called for each line of `history` as it is added.
    package var onHistory: ((Instant, String) -> Void)?
    /// Called (under the node's lock, on the node's thread) when a shard is fenced, BEFORE its
    /// runtime is: the libuv daemon kills the shard's process groups there, since the runtime's
    /// own kill waits for its loop, which may be blocked in a commit.
    package var onFence: ((_ shard: Int, _ epoch: Int64) -> Void)?
    /// Runs `body` on the execution context of the runtime of `shard` at `epoch` (the libuv
    /// daemon: that shard's loop, where `grouped` must run); nil runs it at once (the
    /// simulation's one world loop is every runtime's context).
    package var onShardContext: ((_ shard: Int, _ epoch: Int64, _ body: @escaping @Sendable () -> Void) -> Void)?
    /// Given to each shard's runtime after its load (the libuv daemon turns live activities off
    /// in cluster mode: their per-namespace limits are not split by shard).
    package var activitySettings: ActivitySettings?
    /// Runs one database call (or a shard's restore) away from the node's thread and hands its
    /// answers to `deliver`; nil makes it at once on the caller's thread (unit tests).
    package typealias CallRunner = (_ call: @escaping @Sendable () -> [LeaseMachine.Event]) -> Void
    package var callRunner: CallRunner?
    /// Called when a shard's runtime was restored and is led (or was found not led any more
    /// and fenced at once): the libuv daemon starts its loop then, never before its jobs are in.
    package var onRestored: ((_ shard: Int, _ epoch: Int64) -> Void)?

    package init(name: String, database: any ShardDatabase, jobs: [JobSpec],
                settings: LeaseMachine.Settings = .init(), options: RefreshRuntime.Options = .init(),
                monotonic: @escaping () -> Instant, makeRuntime: @escaping RuntimeFactory,
                applyCommand: CommandApplier? = nil) {
        self.name = name
        self.database = database
        map = ShardMap(shardCount: database.shardCount)
        machine = LeaseMachine(node: name, shardCount: database.shardCount, settings: settings)
        self.jobs = jobs
        self.options = options
        self.monotonic = monotonic
        self.makeRuntime = makeRuntime
        self.applyCommand = applyCommand ?? ClusterNode.applyControlRequest
    }

    /// The jobs a shard's runtime registers: templates in every shard (with the instances of
    /// their list that fall in it), every other job in the shard of its namespace (`ShardMap`).
    package func jobs(of shard: Int) -> [JobSpec] {
        jobs.compactMap { spec in
            guard spec.template != nil else { return map.shard(ofSpec: spec) == shard ? spec : nil }
            var spec = spec
            if let source = spec.instanceSource {
                spec.instanceSource = InstanceSource(source.records.filter { map.shard(of: $0.identifier) == shard })
            }
            return spec
        }
    }

    /// Starts (or, after a restart, starts again): the first survey.
    package func start() { handle(.tick) }

    /// The node's timer fired (or any instant at which the caller wants the leases checked).
    package func timerFired() { handle(.tick) }

    /// Handles what runtimes reported since (a refused commit) and hands over drained shards.
    /// The host calls it after delivering events to the node's runtimes.
    package func settle() { handle(nil) }

    /// The job files were read again (SIGHUP, the jobs folder changed): the node's jobs become
    /// `specs`, and each shard it leads applies the diff for its own jobs in ONE transaction of
    /// its runtime (`RefreshRuntime.reload`, fenced like every commit), on the shard's context.
    /// A shard taken later loads `specs`. A shard being handed over keeps its jobs: it launches
    /// nothing more, and its next leader loads its own.
    package func reload(_ specs: [JobSpec], reason: String) {
        lock.withLock {
            jobs = specs
            for shard in terms.keys.sorted() {
                guard let term = terms[shard], !term.handingOver else { continue }
                let runtime = term.runtime, shardJobs = jobs(of: shard)
                let body: @Sendable () -> Void = { runtime.reload(shardJobs, reason: reason) }
                if let onShardContext { onShardContext(shard, term.epoch, body) } else { body() }
            }
            note("reloaded the jobs (\(reason)): \(specs.count) job\(specs.count == 1 ? "" : "s")")
        }
    }

    /// Operator commands were queued for `shard` (nil: any shard), a NOTIFY says: the shards led
    /// apply them now rather than at the next survey. Applied once either way (the table).
    package func applyQueuedCommands(shard: Int?) {
        lock.withLock {
            guard let shard else { return applyCommands() }
            if let term = terms[shard], !term.handingOver { applyCommands(shard: shard) }
        }
    }

    /// kill -9 of the node: every runtime vanishes (its hosts keep their processes), nothing is
    /// released; the leases expire in database time.
    package func crash() {
        lock.withLock {
            terms = [:]
            reported = []
            wakeUp = nil
            machine = LeaseMachine(node: name, shardCount: machine.shardCount, settings: machine.settings)
        }
    }

    /// A stop signal (SIGTERM, SIGINT) reached the node: every shard's runtime hears it (its own
    /// rule: the first stops gracefully, a second kills at once); the node takes no shard from
    /// now on, releases each as its runs end, and has left when it holds none (`hasLeft`).
    package func stopSignal(_ name: String) {
        lock.withLock { stopSignalName = name }
        handle(.stopSignal(name))
    }

    /// Whether the node has stopped: it holds no shard and takes none (the host may exit).
    package var hasLeft: Bool { lock.withLock { machine.hasLeft } }

    /// Whether a stop signal reached the node (it takes no shard; a reload is not applied).
    package var isStopping: Bool { lock.withLock { machine.stopSignals > 0 } }

    /// Answers of database calls made by `callRunner` (any thread); the host then wakes the
    /// node's thread, which handles them (`settle`).
    package func deliver(_ events: [LeaseMachine.Event]) {
        guard !events.isEmpty else { return }
        lock.withLock { reported.append(contentsOf: events) }
    }

    /// The runtime leading `shard` now, if any.
    package func runtime(of shard: Int) -> RefreshRuntime? { lock.withLock { terms[shard].map(\.runtime) } }

    /// Whether `shard` may launch now on this node (led, before its self-fence instant).
    package func mayLaunch(shard: Int) -> Bool { lock.withLock { machine.mayLaunch(shard: shard, at: monotonic()) } }

    /// Whether the term of `shard` at `epoch` may still write into the shared container now:
    /// it is led at that epoch, before its self-fence instant (a publication's gate).
    package func mayPublish(shard: Int, epoch: Int64) -> Bool {
        lock.withLock { machine.mayWrite(shard: shard, epoch: epoch, at: monotonic()) }
    }

    func note(_ line: String) {
        let at = monotonic()
        if history.count >= Self.historyLimit { history.removeFirst(history.count - Self.historyLimit + 1) }
        history.append((at, line))
        onHistory?(at, line)
    }

    /// Feeds `first` (if any) and every event it leads to, carrying out the effects in order.
    func handle(_ first: LeaseMachine.Event?) {
        lock.withLock {
            guard !running else {
                if let first { reported.append(first) }
                return
            }
            running = true
            defer { running = false }
            var queue: [LeaseMachine.Event] = first.map { [$0] } ?? []
            while true {
                // A peek, never a wait: a shard blocked in a commit is looked at again later.
                for term in terms.values.sorted(by: { $0.shard < $1.shard }) where term.handingOver && term.runtime.runsInFlightIfFree == 0 {
                    if !queue.contains(.drained(shard: term.shard)) { queue.append(.drained(shard: term.shard)) }
                }
                queue.append(contentsOf: reported)
                reported.removeAll()
                guard !queue.isEmpty else { return }
                let event = queue.removeFirst()
                for effect in machine.handle(event, at: monotonic()) { carryOut(effect, into: &queue) }
            }
        }
    }

    /// Under `lock`: the operator commands queued for the shards led, each applied once.
    func applyCommands() {
        for shard in terms.keys.sorted() where !(terms[shard]?.handingOver ?? true) { applyCommands(shard: shard) }
    }

    func applyCommands(shard: Int) {
        guard let term = terms[shard] else { return }
        let runtime = term.runtime
        // Read and applied on the shard's execution context, one body after another: a command
        // read twice (a survey and a NOTIFY) is applied by the first body; the second reads it
        // applied.
        let body: @Sendable () -> Void = { [self] in
            guard let commands = try? database.pendingCommands(shard: shard), !commands.isEmpty else { return }
            // Each command's changes and its id's record in one transaction (fenced): applied
            // once, or not at all when the lease is gone. Commands that queued up while the
            // leader was busy share a transaction, `commandsPerCommit` at most (a million
            // instances added as 4,000 commands a shard took 4,000 commits each).
            var next = commands[...]
            while !next.isEmpty {
                let batch = next.prefix(Self.commandsPerCommit)
                next = next.dropFirst(batch.count)
                _ = runtime.grouped {
                    for command in batch {
                        let outcome = applyCommand(runtime, command)
                        runtime.group?.changes.append(.putRecord(MachineRecord(table: ShardCommand.appliedTable, key: command.id, value: outcome)))
                    }
                }
            }
        }
        if let onShardContext { onShardContext(shard, term.epoch, body) } else { body() }
    }

    /// The default command applier: a control request queued by `ClusterControl`, carried out
    /// by the one function that answers it on one machine too (`performOperatorCommand`); its
    /// outcome is `{"ok":true,"message":...}` or `{"ok":false,"code":...,"message":...}`.
    package static func applyControlRequest(_ runtime: RefreshRuntime, _ command: ShardCommand) -> String {
        func outcome(_ ok: Bool, _ code: String?, _ message: String) -> String {
            var object: [String: Any] = ["ok": ok, "message": message]
            if let code { object["code"] = code }
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
            return String(decoding: data, as: UTF8.self)
        }
        if let lines = InstanceLines.lines(ofPayload: command.payload) {
            runtime.applyInstanceLines(lines)
            return outcome(true, nil, "applied \(lines.count) instance line\(lines.count == 1 ? "" : "s") of another shard's sync run")
        }
        guard let request = try? JSONDecoder().decode(ControlRequest.self, from: Data(command.payload.utf8)),
              let name = ControlCommandName(rawValue: request.command) else {
            return outcome(false, "bad-request", "not a control request this refreshd knows")
        }
        do {
            let reply = try runtime.performOperatorCommand(name, request)
            return outcome(true, nil, reply?.message ?? name.rawValue)
        } catch {
            let failure = ControlFailure(of: error)
            return outcome(false, failure.code, failure.message)
        }
    }
}

/// Holds every due request: a shard being handed over launches nothing more.
struct HoldEverything: AdmissionPolicy {
    func admission(for request: PendingRequest, at now: Instant) -> Admission { .hold(until: now + .seconds(3600)) }
}
