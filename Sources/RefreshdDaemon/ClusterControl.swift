import Foundation
import RefreshdCore
import RefreshdRuntime
import Synchronization

/// The control socket's answers in cluster mode (issue 24), on ANY node: what the database
/// holds, never one node's memory, so every node answers alike.
///
/// - `submit`, `cancel`, `cancel-all`, `simulate-launch`, `simulate-expiration`, `pause`, `resume`,
///   `instance-add`, `instance-remove`, `activity` and a widget `reload` (`cancel-all`, `reload`
///   and a template's pause to every shard) are queued in the commands table for the leader of
///   the shard they concern (`ShardDatabase.enqueueCommand`, idempotent by the
///   request's `commandID`): the leader applies each exactly once inside a fenced commit, at
///   once when woken (`notify`: PostgreSQL's NOTIFY) or at its next survey. The reply is the
///   leader's own (what one machine says), waited for up to `answerWithin`
///   (`ClusterControl+Outcomes`); after it, the command was queued (durably) and the reply says
///   which node leads the shard. It never waits for the run.
/// - `status`, `pending`, `why` read every shard's state and the lease table: pending requests,
///   recent runs, counters, and who leads each shard (owner, epoch, expiry in database time).
/// - `metrics`: the cluster from the database and this node's lease counters
///   (`ClusterControl+Views`).
/// - `stats`, `snapshot`, `instance-list`: every shard's widgets, activities and instances.
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

    /// How long a command's reply waits for its leader's outcome before saying it was queued.
    var answerWithin: Duration = .seconds(2)
    /// Replies waiting for their leaders' outcomes, and the queue that reads them.
    let waiters = Mutex<[Waiter]>([])
    let outcomes = DispatchQueue(label: "refreshd-command-outcomes")
    /// What the next read of outcomes reads (wake-ups meanwhile join it).
    let outcomesWanted = Mutex(Wanted())
    /// Outcomes read for replies still waiting for others (a command for several shards).
    let known = Mutex<[String: String]>([:])

    /// This node's lease machine counters and its launches since it started (`metrics`).
    var nodeCounters: () -> ClusterNode.Counters = { ClusterNode.Counters() }
    /// One machine's metric families but the per-job run counters, fed by the observations of
    /// the shards this node leads (`RefreshDaemon`) and, at each `metrics`, the database's gauges.
    let exporter = MetricsExporter(countsRuns: false)
    var launches: () -> Int = { 0 }

    init(database: any ShardDatabase, node: String, jobs: [JobSpec]) {
        self.database = database
        self.node = node
        map = ShardMap(shardCount: database.shardCount)
        jobsInForce = Mutex(jobs)
    }

    /// The reply to `request` (now, or once its leaders applied it), or nil for a command the
    /// control server answers itself.
    func answer(_ request: ControlRequest, _ command: ControlCommandName) -> ControlAnswer? {
        do {
            if let awaited = try queued(request, command) {
                return .later { [self] deliver in waitForOutcomes(awaited, deliver: deliver) }
            }
            return try read(request, command).map(ControlAnswer.now)
        } catch let error as ControlFailure {
            return .now(.failure(id: request.id, error))
        } catch let error as ControlRefusal {
            return .now(.failure(id: request.id, ControlFailure(of: error)))
        } catch let error as InstanceError {
            return .now(.failure(id: request.id, ControlFailure(of: error)))
        } catch {
            return .now(.failure(id: request.id, ControlFailure(code: "database", message: "the cluster's database could not be read or written: \(error)")))
        }
    }

    /// The commands queued for leaders (their reply waits for the outcomes); nil for a read.
    func queued(_ request: ControlRequest, _ command: ControlCommandName) throws -> Awaited? {
        switch command {
        case .submit, .cancel, .simulateLaunch, .simulateExpiration:
            let id = try identifier(request)
            return try queue(request, shard: map.shard(ofJob: id, in: jobs), naming: id)
        case .cancelAll: return try queueEverywhere(request, what: "each leader cancels its shard's pending requests")
        case .instanceAdd where request.keys != nil:
            return try queueInstances(request)
        case .instanceAdd, .instanceRemove:
            let id = try instanceIdentifier(request)
            return try queue(request, shard: map.shard(of: id), naming: id)
        case .activity:
            let (shard, what) = try activityShard(request)
            return try queue(request, shard: shard, naming: what)
        case .reload:
            // A widget kind is a plain job's (in its namespace's shard) or an instance's
            // (spread): each leader reloads the kinds its shard has.
            return try queueEverywhere(request, what: "each leader asks the widgets of its shard for a reload")
        case .pause, .resume:
            // A template's instances live in every shard: its pause goes to each leader.
            let id = try RefreshRuntime.identifier(request)
            if jobs.contains(where: { $0.template != nil && $0.identifier == id }) {
                return try queueEverywhere(request, what: "each leader applies it to its shard's instances of \(id)")
            }
            return try queue(request, shard: map.shard(ofJob: id, in: jobs), naming: id)
        default:
            return nil
        }
    }

    /// A read answered from the database at once, or nil for the server's own commands.
    func read(_ request: ControlRequest, _ command: ControlCommandName) throws -> ControlReply? {
        switch command {
        case .hello, .subscribe: return nil
        case .submit, .cancel, .simulateLaunch, .simulateExpiration, .cancelAll, .instanceAdd, .instanceRemove, .activity,
             .reload, .pause, .resume:
            return nil  // queued (`queued`)
        case .instanceList: return try instanceList(request)
        case .stats:
            var counters: [WidgetDayCounter] = []
            for shard in 0..<database.shardCount { counters += try SavedMachineState(store: database.store(shard: shard, epoch: 0)).counters }
            var reply = ControlReply(id: request.id, now: now())
            reply.stats = ReloadStats(counters: counters, days: request.days ?? 7, now: now())
                .folding(instanceWidgetTemplates(Set(counters.map(\.kind))))
            return reply
        case .runStats:
            var reply = ControlReply(id: request.id, now: now())
            reply.runStats = try RunStats.answer(request, try reader(), now: now())
            return reply
        case .snapshot:
            let (snapshot, cluster) = try view()
            var reply = ControlReply(id: request.id, now: now())
            reply.snapshot = snapshot
            reply.cluster = cluster
            (reply.timelines, reply.activities) = try machines()
            return reply
        case .pending:
            var reply = ControlReply(id: request.id, now: now())
            reply.pending = try reader().stores.flatMap { try $0.pendingRequests() }.map(SchedulerSnapshot.Pending.init)
            return reply
        case .status: return try status(request)
        case .why: return try why(request)
        case .metrics:
            var reply = ControlReply(id: request.id, now: now())
            reply.metrics = try metricsText(counters: nodeCounters(), launches: launches())
            return reply
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

    /// Queues a command for the leader of `shard` (`naming` what it is about, for the reply).
    func queue(_ request: ControlRequest, shard: Int, naming id: String) throws -> Awaited {
        var payload = request
        let commandID = request.commandID ?? UUID().uuidString.lowercased()
        payload.commandID = commandID
        payload.id = nil
        let text = String(decoding: try JSONEncoder.control.encode(payload), as: UTF8.self)
        let command = ShardCommand(id: commandID, shard: shard, payload: text)
        let queued = try database.enqueueCommand(command)
        let message = (queued ? "queued \(request.command) \(id) for shard \(shard), " : "command \(commandID) was already queued (applied once): \(request.command) \(id), shard \(shard), ")
            + (try leader(of: shard)) + "; command id \(commandID)"
        return .one(command, request: request, queued: message, repeated: !queued, now: { [self] in now() }, within: answerWithin)
    }

    /// A batch `instance-add`: the keys split by the shard of each instance, one command a shard
    /// (ids `ID/SHARD`, applied once), each applied by its leader in one transaction as a sync
    /// run's lines are (`InstanceLines`): a million keys are 16 commands, not a million.
    func queueInstances(_ request: ControlRequest) throws -> Awaited {
        let template = try templateName(request)
        let records = try RefreshRuntime.instanceRecords(template: template, keys: request.keys ?? [], values: request.values)
        let commandID = request.commandID ?? UUID().uuidString.lowercased()
        let parts = map.split([InstanceLines(template: template, add: records)])
        // One transaction for every shard's command, each leader woken at its commit.
        let commands = parts.sorted(by: { $0.key < $1.key }).map { shard, lines in
            ShardCommand(id: "\(commandID)/\(shard)", shard: shard, payload: InstanceLines.payload(lines))
        }
        let queued = try database.enqueueCommands(commands).count
        let message = "queued \(records.count) instance add\(records.count == 1 ? "" : "s") of \(template) as \(parts.count) command\(parts.count == 1 ? "" : "s"), "
            + "one a shard, each applied once by the shard's leader in one transaction" + (queued < parts.count ? " (\(parts.count - queued) already queued)" : "")
            + "; command id \(commandID)"
        return .many(commands, request: request, queued: message, now: { [self] in now() }, within: answerWithin)
    }

    /// A command for every shard (`cancel-all`, a widget `reload`, a template's `pause` or
    /// `resume`): one per shard (ids `ID/SHARD`, so a retried one is applied once too).
    func queueEverywhere(_ request: ControlRequest, what: String) throws -> Awaited {
        let commandID = request.commandID ?? UUID().uuidString.lowercased()
        let commands = try (0..<database.shardCount).map { shard in
            var payload = request
            payload.commandID = "\(commandID)/\(shard)"
            payload.id = nil
            let text = String(decoding: try JSONEncoder.control.encode(payload), as: UTF8.self)
            return ShardCommand(id: "\(commandID)/\(shard)", shard: shard, payload: text)
        }
        let queued = try database.enqueueCommands(commands).count
        let message = "queued \(request.command) for \(queued) of \(database.shardCount) shards (\(what)); command id \(commandID)"
        return .many(commands, request: request, queued: message, now: { [self] in now() }, within: answerWithin)
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

    func clusterStatus() throws -> ClusterStatus {
        let databaseNow = try database.now()
        let shards = try database.leases().map { lease in
            ClusterStatus.Shard(lease, databaseNow: databaseNow, pendingCommands: try database.pendingCommands(shard: lease.shard).count)
        }
        return ClusterStatus(node: node, databaseNow: databaseNow, shards: shards)
    }

    /// Every shard's state, as `status` and the dashboard read it.
    func reader() throws -> StateReader {
        try StateReader(database: database, jobs: jobs)
    }

    /// Every shard's status merged (`StateReader.status`), who leads each shard, and every
    /// shard's widgets and activities.
    func status(_ request: ControlRequest) throws -> ControlReply {
        var report = try reader().status(runs: request.runs ?? 20, days: 7, before: request.before)
        report.cluster = try clusterStatus()
        let (timelines, activities) = try machines()
        report.timelines = timelines.widgets.isEmpty ? nil : timelines
        report.activities = activities.activities.isEmpty ? nil : activities
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
        let shard = map.shard(ofJob: id, in: jobs)
        let now = now()
        let facts = try WhyFacts.gather(id, store: try database.store(shard: shard, epoch: 0), jobs: jobs, memory: nil,
                                        source: .database, now: now)
        var report = WhyExplainer.explain(facts)
        if report.subject != .unknown {
            report.paragraph += " In the cluster, \(id) is in shard \(shard), \(try leader(of: shard)) (answered by node \(node) from the database)."
        }
        var reply = ControlReply(id: request.id, now: now)
        reply.why = report
        return reply
    }
}

/// Instances, activities and widgets in cluster mode (issue 32): each lives in one shard
/// (`ShardMap`), so a command about one is queued for that shard's leader, and a list or a
/// count reads every shard.
extension ClusterControl {
    /// `TEMPLATE[KEY]` of an instance command, once the template is one of the job files' and
    /// the key one an instance may have (the leader checks the values, as one machine does).
    func instanceIdentifier(_ request: ControlRequest) throws -> String {
        let template = try templateName(request)
        guard let key = request.key else {
            throw ControlFailure(code: "bad-request", message: "\"\(request.command)\" needs \"key\": the instance's key (\(InstanceName.keyExpectation))")
        }
        if let problem = InstanceName.keyProblem(key) { throw InstanceError.badKey(template: template, key: key, problem: problem) }
        return InstanceName.identifier(template: template, key: key)
    }

    func templateName(_ request: ControlRequest) throws -> String {
        guard let template = request.template, !template.isEmpty else {
            throw ControlFailure(code: "bad-request", message: "\"\(request.command)\" needs \"template\": the identifier of a job file with template: true")
        }
        guard jobs.contains(where: { $0.template != nil && $0.identifier == template }) else { throw InstanceError.unknownTemplate(template) }
        return template
    }

    /// `instance-list` across shards: a page in key order (UTF-8 bytes), after `after`.
    func instanceList(_ request: ControlRequest) throws -> ControlReply {
        let template = try templateName(request)
        let limit = request.limit ?? ControlRequest.Bounds.instances.upperBound
        var page: [InstanceRecord] = []
        for shard in 0..<database.shardCount {
            page += try database.store(shard: shard, epoch: 0).instances(of: template, after: request.after, limit: limit + 1)
        }
        page.sort { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }
        var reply = ControlReply(id: request.id, now: now())
        reply.instances = Array(page.prefix(limit))
        if page.count > limit { reply.nextAfter = reply.instances?.last?.key }
        reply.message = "\(template): \(reply.instances?.count ?? 0) instance\(reply.instances?.count == 1 ? "" : "s")"
            + (request.after.map { " after \($0)" } ?? "") + (page.count > limit ? " (more: ask after \(reply.nextAfter ?? ""))" : "")
        return reply
    }

    /// The shard of an `activity` request: a start's namespace's; an update's or end's, the
    /// shard whose state holds the activity (nil: refused as the machine refuses it).
    func activityShard(_ request: ControlRequest) throws -> (Int, String) {
        let (text, namespace) = try RefreshRuntime.activityNamespace(request)
        let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
        let id = object["id"] as? String ?? ""
        if object["activity"] as? String == "start" { return (map.shard(of: namespace), "\(id) (namespace \(namespace))") }
        for shard in 0..<database.shardCount where try SavedMachineState(store: database.store(shard: shard, epoch: 0)).activities.contains(where: { $0.id == id }) {
            return (shard, id)
        }
        throw ControlFailure(ActivityError.unknownActivity(id: id, event: object["activity"] as? String == "end" ? .end : .update))
    }

    /// Every shard's widgets and activities as the database holds them.
    func machines() throws -> (TimelineSnapshot, ActivitySnapshot) {
        let saved = try reader().savedMachineState(), now = now()
        return (saved.timelineSnapshot(at: now), saved.activitySnapshot(at: now))
    }

    /// Which of `kinds` are instances' widgets, by their template (what `stats` folds into one
    /// row per template): a kind no plain job declares that has the text around the template's
    /// placeholders (`feed.{user}`: begins `feed.`). Read from the job files, not from a
    /// million instances.
    func instanceWidgetTemplates(_ kinds: Set<String>) -> [String: String] {
        let jobs = self.jobs
        let plain = Set(jobs.filter { $0.template == nil }.compactMap { $0.widget?.kind })
        var templates: [String: String] = [:]
        for spec in jobs where spec.template != nil {
            guard let pattern = spec.widget?.kind, let open = pattern.firstIndex(of: "{"),
                  let close = pattern.lastIndex(of: "}") else { continue }
            let prefix = pattern[..<open], suffix = pattern[pattern.index(after: close)...]
            for kind in kinds where !plain.contains(kind) && kind.count > prefix.count + suffix.count
                && kind.hasPrefix(prefix) && kind.hasSuffix(suffix) && templates[kind] == nil {
                templates[kind] = spec.identifier
            }
        }
        return templates
    }
}
