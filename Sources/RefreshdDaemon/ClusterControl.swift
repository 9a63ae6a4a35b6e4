import Foundation
@_spi(Benchmarks) import RefreshdCore
@_spi(Benchmarks) import RefreshdRuntime
import Synchronization

/// The control socket's answers in cluster mode (issue 24), on ANY node: what the database
/// holds, never one node's memory, so every node answers alike.
///
/// - `submit`, `cancel`, `cancel-all`, `simulate-launch`, `simulate-expiration`, `pause`, `resume`
///   (a template's to every shard) are queued in the
///   commands table for the shard's leader (`ShardDatabase.enqueueCommand`, idempotent by the
///   request's `commandID`): the leader applies each exactly once inside a fenced commit, at
///   once when woken (`notify`: PostgreSQL's NOTIFY) or at its next survey. The reply says the
///   command was queued (durably) and which node leads the shard; it does not wait for the run.
/// - `status`, `pending`, `why` read every shard's state and the lease table: pending requests,
///   recent runs, counters, and who leads each shard (owner, epoch, expiry in database time).
/// - `metrics`: the cluster from the database and this node's lease counters
///   (`ClusterControl+Views`).
/// - Commands of one machine's state (widgets and their `stats`, activities, instances added at
///   run time, snapshot of a runtime) are refused `not-in-cluster`, naming what is served.
/// `hello` and `subscribe` are the server's own; `subscribe` (`watch`) sends every shard's
/// snapshot and who leads each (`view`), then the observations of the shards this node leads
/// and, every second while someone watches, the cluster again.
///
/// Runs on the control loop's thread: its calls block on the network (bounded by the
/// database's statement timeout), never on a shard's loop or the node's lease thread.
final class ClusterControl: @unchecked Sendable {
    let database: any ShardDatabase
    let node: String
    let map: ShardMap
    /// The jobs in force on this node (replaced by a reload).
    let jobsInForce: Mutex<[JobSpec]>
    var jobs: [JobSpec] {
        get { jobsInForce.withLock { $0 } }
        set { jobsInForce.withLock { $0 = newValue } }
    }
    /// Wakes the leader of a shard early after a command was queued (NOTIFY); nil: it applies
    /// the command at its next survey (every lease / 3).
    var notify: ((Int) -> Void)?

    /// This node's lease machine counters and its launches since it started (`metrics`).
    var nodeCounters: () -> ClusterNode.Counters = { ClusterNode.Counters() }
    var launches: () -> Int = { 0 }

    static let served = "served in cluster mode: submit, cancel, cancel-all, pause, resume, simulate-launch, simulate-expiration, pending, status, why, watch, metrics"

    init(database: any ShardDatabase, node: String, jobs: [JobSpec]) {
        self.database = database
        self.node = node
        map = ShardMap(shardCount: database.shardCount)
        jobsInForce = Mutex(jobs)
    }

    /// The reply to `request`, or nil for a command the control server answers itself.
    func answer(_ request: ControlRequest, _ command: ControlCommandName) -> ControlReply? {
        do {
            switch command {
            case .hello, .subscribe: return nil
            case .submit, .cancel, .simulateLaunch, .simulateExpiration: return try queue(request)
            case .cancelAll: return try queueEverywhere(request)
            case .pause, .resume:
                // A template's instances live in every shard: its pause goes to each leader.
                let template = jobs.contains { $0.template != nil && $0.identifier == request.identifier }
                return try template ? queueEverywhere(request) : queue(request)
            case .pending:
                var reply = ControlReply(id: request.id, now: now())
                reply.pending = try everyShard { try $0.pendingRequests() }.map(SchedulerSnapshot.Pending.init)
                return reply
            case .status: return try status(request)
            case .why: return try why(request)
            case .metrics:
                var reply = ControlReply(id: request.id, now: now())
                reply.metrics = try metricsText(counters: nodeCounters(), launches: launches())
                return reply
            case .stats:
                // Widget reload counters: cluster mode runs no timeline job (refused at the start).
                throw ControlFailure(code: "not-in-cluster", message: "\"stats\" counts widget reloads, and cluster mode runs no timeline job (refused at the start); the jobs' counters are in \"status\" and \"metrics\". \(Self.served)")
            case .snapshot, .reload, .activity, .instanceAdd, .instanceRemove, .instanceList:
                throw ControlFailure(code: "not-in-cluster", message: "\"\(command.rawValue)\" is not available in cluster mode (refreshd run --store); \(Self.served)")
            }
        } catch let failure as ControlFailure {
            return .failure(id: request.id, failure)
        } catch let refusal as ControlRefusal {
            return .failure(id: request.id, ControlFailure(code: refusal.code, message: refusal.description))
        } catch {
            return .failure(id: request.id, ControlFailure(code: "database", message: "the cluster's database could not be read or written: \(error)"))
        }
    }

    func now() -> Instant { Instant(secondsSinceEpoch: Date().timeIntervalSince1970) }

    /// Whether the job files declare `identifier` (a job, or an instance of a template's list).
    func declared(_ identifier: String) -> Bool {
        let jobs = self.jobs
        if jobs.contains(where: { $0.template == nil && $0.identifier == identifier }) { return true }
        guard let split = InstanceName.split(identifier),
              let template = jobs.first(where: { $0.template != nil && $0.identifier == split.template }) else { return false }
        return template.instanceSource?.records.contains { $0.identifier == identifier } ?? false
    }

    func identifier(_ request: ControlRequest) throws -> String {
        guard let id = request.identifier, !id.isEmpty else {
            throw ControlFailure(code: "bad-request", message: "\"\(request.command)\" needs \"identifier\": the job's identifier")
        }
        guard declared(id) else {
            // A template never runs itself (the same refusal as one machine's: its instances do).
            let template = jobs.contains { $0.template != nil && $0.identifier == id }
            throw template ? ControlRefusal.template(identifier: id) : ControlRefusal.notDeclared(identifier: id)
        }
        return id
    }

    /// Queues a command for the leader of the identifier's shard.
    func queue(_ request: ControlRequest) throws -> ControlReply {
        let id = try identifier(request)
        let shard = map.shard(of: id)
        var payload = request
        let commandID = request.commandID ?? UUID().uuidString.lowercased()
        payload.commandID = commandID
        payload.id = nil
        let text = String(decoding: try JSONEncoder.control.encode(payload), as: UTF8.self)
        let queued = try database.enqueueCommand(ShardCommand(id: commandID, shard: shard, payload: text))
        if queued { notify?(shard) }
        var reply = ControlReply(id: request.id, now: now())
        reply.message = (queued ? "queued \(request.command) \(id) for shard \(shard), " : "command \(commandID) was already queued (applied once): \(request.command) \(id), shard \(shard), ")
            + (try leader(of: shard)) + "; command id \(commandID)"
        return reply
    }

    /// `cancel-all`, a template's `pause` or `resume`: one command per shard (ids `ID/SHARD`, so a retried one is applied once too).
    func queueEverywhere(_ request: ControlRequest) throws -> ControlReply {
        let commandID = request.commandID ?? UUID().uuidString.lowercased()
        var queued = 0
        for shard in 0..<database.shardCount {
            var payload = request
            payload.commandID = "\(commandID)/\(shard)"
            payload.id = nil
            let text = String(decoding: try JSONEncoder.control.encode(payload), as: UTF8.self)
            if try database.enqueueCommand(ShardCommand(id: "\(commandID)/\(shard)", shard: shard, payload: text)) {
                queued += 1
                notify?(shard)
            }
        }
        var reply = ControlReply(id: request.id, now: now())
        reply.message = request.command == ControlCommandName.cancelAll.rawValue
            ? "queued cancel-all for \(queued) of \(database.shardCount) shards (each leader cancels its shard's pending requests); command id \(commandID)"
            : "queued \(request.command) \(request.identifier ?? "") for \(queued) of \(database.shardCount) shards (each leader applies it to its shard's instances); command id \(commandID)"
        return reply
    }

    /// `led by node b (epoch 4, lease until ...)` or `not led now (its next leader applies it)`.
    func leader(of shard: Int) throws -> String {
        let databaseNow = try database.now()
        guard let lease = try database.leases().first(where: { $0.shard == shard }),
              let owner = lease.owner, lease.expiresAt > databaseNow else {
            return "not led now: its next leader applies it"
        }
        return "led by node \(owner)\(owner == node ? " (this node)" : "") (epoch \(lease.epoch), lease until \(lease.expiresAt))"
    }

    /// The same read of every shard's state, concatenated in shard order.
    func everyShard<T>(_ read: (any StateStoring) throws -> [T]) throws -> [T] {
        var all: [T] = []
        for shard in 0..<database.shardCount { all += try read(try database.store(shard: shard, epoch: 0)) }
        return all
    }

    func clusterStatus() throws -> ClusterStatus {
        let databaseNow = try database.now()
        let shards = try database.leases().map { lease in
            ClusterStatus.Shard(lease, databaseNow: databaseNow, pendingCommands: try database.pendingCommands(shard: lease.shard).count)
        }
        return ClusterStatus(node: node, databaseNow: databaseNow, shards: shards)
    }

    /// Every shard's status merged: pending in due order, the newest runs first across shards
    /// (run ids say their shard, so `before` pages across shards alike).
    func status(_ request: ControlRequest) throws -> ControlReply {
        let runs = request.runs ?? 20
        var merged: StatusReport?
        for shard in 0..<database.shardCount {
            let report = try StatusReport(store: try database.store(shard: shard, epoch: 0), runs: runs, days: 7, before: request.before)
            guard var all = merged else {
                merged = report
                continue
            }
            all.pending += report.pending
            all.runs += report.runs
            all.jobs += report.jobs
            all.counters += report.counters
            all.heldNotifications += report.heldNotifications
            all.paused += report.paused.filter { p in !all.paused.contains { $0.identifier == p.identifier } }
            merged = all
        }
        guard var report = merged else { throw ControlFailure(code: "internal", message: "the database has no shard") }
        report.pending.sort { ($0.earliest, $0.identifier) < ($1.earliest, $1.identifier) }
        report.runs = Array(report.runs.sorted { $0.runID > $1.runID }.prefix(runs))
        report.nextBefore = runs > 0 && report.runs.count == runs ? report.runs.last?.runID : nil
        report.jobs.sort { $0.identifier < $1.identifier }
        report.counters.sort { ($0.day, $0.identifier) < ($1.day, $1.identifier) }
        report.cluster = try clusterStatus()
        var reply = ControlReply(id: request.id, now: now())
        reply.status = report
        return reply
    }

    /// `why` from the shard's state in the database (as the offline answer reads a state file),
    /// and who leads the shard.
    func why(_ request: ControlRequest) throws -> ControlReply {
        guard let id = request.identifier, !id.isEmpty else {
            throw ControlFailure(code: "bad-request", message: "\"why\" needs \"identifier\": the job's identifier")
        }
        let shard = map.shard(of: id)
        let store = try database.store(shard: shard, epoch: 0)
        let now = now()
        let jobs = self.jobs
        let definition = jobs.first { $0.identifier == id && $0.template == nil }?.definition
            ?? InstanceName.split(id).flatMap { split in jobs.first { $0.identifier == split.template }?.definition }
        let pending = try store.pendingRequests().first { $0.identifier == id }
        let allRuns = try store.recentRuns(limit: 500)
        let runs = allRuns.filter { $0.identifier == id }.prefix(5)
        let missed = try store.dailyCounters(days: 7).filter { $0.identifier == id && $0.missed > 0 }
        let streak = try store.restoredState().failureStreaks[id] ?? 0
        var facts = WhyFacts(identifier: id, now: now, live: false, definition: definition,
                             knownUndeclared: !declared(id) && pending == nil && runs.isEmpty,
                             pending: pending.map(SchedulerSnapshot.Pending.init), failureStreak: streak,
                             recentRuns: runs.map(StatusReport.Run.init),
                             missedByDay: missed.map { (day: $0.day, count: $0.missed) })
        let saved = try SavedMachineState(store: store)
        facts.addSubject(jobs: jobs, timelines: saved.timelineSnapshot(at: now, definitions: []),
                         activities: saved.activitySnapshot(at: now), runs: allRuns)
        facts.paused = WhyFacts.pause(of: id, among: try StatusReport.paused(in: store))
        var report = WhyExplainer.explain(facts)
        if report.subject != .unknown {
            report.paragraph += " In the cluster, \(id) is in shard \(shard), \(try leader(of: shard)) (answered by node \(node) from the database)."
        }
        var reply = ControlReply(id: request.id, now: now)
        reply.why = report
        return reply
    }
}
