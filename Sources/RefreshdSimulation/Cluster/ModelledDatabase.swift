import RefreshdCore
import RefreshdRuntime
import RefreshdStore

/// The shared database of the cluster simulation (issue 24), a `ShardDatabase` as PostgreSQL
/// will be one: every call is one linearizable step under one lock, conditional writes decide
/// by the database's own clock (`time`, the simulation's virtual time, set by the world loop),
/// each shard's state is an `InMemoryStore` behind the fence (a commit whose epoch is not the
/// lease's, or whose lease expired at the database's instant, throws `ShardFenced` and applies
/// nothing). Faults: `down` (a database restart: every call throws until it is up again, and
/// what was committed stays; a restarting server refuses at once) and a partition between one
/// node and the database (`connection(for:)` gives each node its own view, which throws while it
/// is cut off). A real partition answers nothing: the call waits for its bound, then fails
/// (issue 32). The modelled one throws at once, as every modelled call returns at once, and
/// the caller is told the bound it would have waited (`callBound`): the node's `Connection`
/// adds it to `waited`, which the simulation spends on whichever thread made the call (the
/// node's calls thread, or a shard's loop); a shard's `FencedStore` calls `onHang` first, which
/// freezes that shard's loop until then (`SimulatedHost.freeze(until:)`).
package final class ModelledDatabase: ShardDatabase, @unchecked Sendable {
    /// A call that did not reach the database.
    package struct Unreachable: Error, Sendable, Hashable, CustomStringConvertible {
        package var why: String
        package var description: String { "database unreachable: \(why)" }
    }

    package let shardCount: Int
    let lock = Lock()
    // Guarded by `lock`.
    var clock: Instant
    var isDown = false
    var cutOff: Set<String> = []
    var rows: [ShardLease]
    var alive: [String: Instant] = [:]
    var stores: [InMemoryStore]
    /// Every committed batch of any shard (under the database's lock): the simulation folds
    /// them into what the shared container holds (staged playlists the providers read).
    package var onCommit: (([StateChange]) -> Void)?
    var commands: [ShardCommand] = []
    var commandIDs: Set<String> = []
    /// How long a call of a cut-off node waits for an answer that never comes before it fails
    /// (PostgreSQL: the statement bound, 10 s by default).
    package let callBound: Duration

    package init(shardCount: Int = 16, time: Instant, callBound: Duration = .seconds(10)) {
        precondition(shardCount > 0, "a cluster has at least one shard")
        self.shardCount = shardCount
        self.callBound = callBound
        clock = time
        rows = (0..<shardCount).map { ShardLease(shard: $0, owner: nil, epoch: 0, expiresAt: time) }
        stores = (0..<shardCount).map { _ in InMemoryStore() }
    }

    // MARK: The world's controls

    /// The database's clock (the simulation's virtual time).
    package var time: Instant {
        get { lock.withLock { clock } }
        set { lock.withLock { clock = max(clock, newValue) } }
    }

    /// Down (restarting): every call throws; committed state stays.
    package var down: Bool {
        get { lock.withLock { isDown } }
        set { lock.withLock { isDown = newValue } }
    }

    /// Cuts `node` off the database, or joins it again.
    package func partition(_ node: String, _ cut: Bool) {
        lock.withLock { if cut { cutOff.insert(node) } else { cutOff.remove(node) } }
    }

    /// A node's own view of the database: the same calls, refused while it is cut off.
    package func connection(for node: String) -> any ShardDatabase { Connection(database: self, node: node) }

    /// Whether `node` is cut off now (its calls wait for their bound, then fail).
    func isCutOff(_ node: String) -> Bool { lock.withLock { cutOff.contains(node) } }

    /// One shard's committed state, unfenced (for the simulation's checks).
    package func committed(shard: Int) -> InMemoryStore { lock.withLock { stores[shard] } }

    // MARK: ShardDatabase

    func reachable(_ node: String?, shard: Int? = nil) throws {
        if let shard, !(0..<rows.count).contains(shard) {
            throw Unreachable(why: "no shard \(shard): the database has shards 0 to \(rows.count - 1)")
        }
        if isDown { throw Unreachable(why: "the database is restarting") }
        if let node, cutOff.contains(node) { throw Unreachable(why: "\(node) is cut off from the database") }
    }

    package func now() throws -> Instant { try now(from: nil) }

    func now(from node: String?) throws -> Instant {
        try lock.withLock { () throws -> Instant in
            try reachable(node)
            return clock
        }
    }

    package func acquire(shard: Int, node: String, lease: Duration) throws -> ShardLease? {
        try lock.withLock { () throws -> ShardLease? in
            try reachable(node, shard: shard)
            var row = rows[shard]
            if let owner = row.owner, owner != node, row.expiresAt > clock { return nil }
            row.owner = node
            row.epoch += 1
            row.expiresAt = clock + lease
            rows[shard] = row
            return row
        }
    }

    package func renew(shard: Int, node: String, epoch: Int64, lease: Duration) throws -> ShardLease? {
        try lock.withLock { () throws -> ShardLease? in
            try reachable(node, shard: shard)
            var row = rows[shard]
            guard row.owner == node, row.epoch == epoch, row.expiresAt > clock else { return nil }
            row.expiresAt = clock + lease
            rows[shard] = row
            return row
        }
    }

    package func release(shard: Int, node: String, epoch: Int64) throws {
        try lock.withLock { () throws in
            try reachable(node, shard: shard)
            guard rows[shard].owner == node, rows[shard].epoch == epoch, rows[shard].expiresAt > clock else { return }
            rows[shard].expiresAt = clock
        }
    }

    package func leases() throws -> [ShardLease] { try leases(from: nil) }

    func leases(from node: String?) throws -> [ShardLease] {
        try lock.withLock { () throws -> [ShardLease] in
            try reachable(node)
            return rows
        }
    }

    package func heartbeat(node: String, ttl: Duration) throws -> [String] {
        try lock.withLock { () throws -> [String] in
            try reachable(node)
            alive[node] = clock + ttl
            return alive.filter { $0.value > clock }.map(\.key).sorted()
        }
    }

    package func store(shard: Int, epoch: Int64) throws -> any StateStoring { try store(shard: shard, epoch: epoch, from: nil) }

    func store(shard: Int, epoch: Int64, from node: String?) throws -> any StateStoring {
        try lock.withLock { () throws in try reachable(node, shard: shard) }
        return FencedStore(database: self, shard: shard, epoch: epoch, node: node)
    }

    package func enqueueCommand(_ command: ShardCommand) throws -> Bool {
        try lock.withLock { () throws -> Bool in
            try reachable(nil, shard: command.shard)
            guard !commandIDs.contains(command.id) else { return false }
            commandIDs.insert(command.id)
            commands.append(command)
            return true
        }
    }

    package func pendingCommands(shard: Int) throws -> [ShardCommand] { try pendingCommands(shard: shard, from: nil) }

    func pendingCommands(shard: Int, from node: String?) throws -> [ShardCommand] {
        try lock.withLock { () throws -> [ShardCommand] in
            try reachable(node, shard: shard)
            // Applied: its id recorded in the shard's state, in the command's own transaction.
            let done = Set((try? stores[shard].records(table: ShardCommand.appliedTable))?.map(\.key) ?? [])
            return commands.filter { $0.shard == shard && !done.contains($0.id) }
        }
    }

    /// A commit of `shard` at `epoch`: applied only while the lease is that epoch's and has not
    /// expired at the database's instant (one step: the check and the write under one lock).
    func commit(_ changes: [StateChange], shard: Int, epoch: Int64, from node: String?) throws {
        try lock.withLock {
            try reachable(node)
            let row = rows[shard]
            guard row.epoch == epoch, row.expiresAt > clock else {
                throw ShardFenced(shard: shard, epoch: epoch, current: row)
            }
            // Commands for other shards (a sync run's instance lines) are queued with the commit,
            // as PostgreSQL's store does, and kept as no record.
            let sent = changes.compactMap { change -> ShardCommand? in
                if case let .putRecord(record) = change { return ShardCommand(outbox: record) }
                return nil
            }
            try stores[shard].apply(sent.isEmpty ? changes : changes.filter {
                if case let .putRecord(record) = $0 { return record.table != ShardCommand.outboxTable }
                return true
            })
            onCommit?(changes)
            for command in sent where !commandIDs.contains(command.id) {
                commandIDs.insert(command.id)
                commands.append(command)
            }
        }
    }

    func read<T>(_ shard: Int, from node: String?, _ body: (InMemoryStore) throws -> T) throws -> T {
        let store = try lock.withLock { () throws -> InMemoryStore in
            try reachable(node)
            return stores[shard]
        }
        return try body(store)
    }
}

/// A node's connection to the modelled database: refused while the node is cut off, after the
/// time a real call would have waited (`waited`).
final class Connection: ShardDatabase, @unchecked Sendable {
    let database: ModelledDatabase
    let node: String
    let lock = Lock()
    /// What the calls failed since the last `takeWaited()` would have waited for an answer.
    var waitedSoFar: Duration = .zero

    init(database: ModelledDatabase, node: String) {
        self.database = database
        self.node = node
    }

    /// The time the calls made since the last take spent waiting (zero: they answered at once).
    func takeWaited() -> Duration {
        lock.withLock {
            defer { waitedSoFar = .zero }
            return waitedSoFar
        }
    }

    /// Gives back a wait taken to tell apart the calls of another thread.
    func addWaited(_ waited: Duration) { lock.withLock { waitedSoFar += waited } }

    /// A call: a cut-off node's waits for its bound before it fails.
    func call<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as ModelledDatabase.Unreachable {
            if database.isCutOff(node) { lock.withLock { waitedSoFar += database.callBound } }
            throw error
        }
    }

    var shardCount: Int { database.shardCount }
    func now() throws -> Instant { try call { try database.now(from: node) } }
    func acquire(shard: Int, node: String, lease: Duration) throws -> ShardLease? {
        try call { try database.acquire(shard: shard, node: node, lease: lease) }
    }
    func renew(shard: Int, node: String, epoch: Int64, lease: Duration) throws -> ShardLease? {
        try call { try database.renew(shard: shard, node: node, epoch: epoch, lease: lease) }
    }
    func release(shard: Int, node: String, epoch: Int64) throws {
        try call { try database.release(shard: shard, node: node, epoch: epoch) }
    }
    func leases() throws -> [ShardLease] { try call { try database.leases(from: node) } }
    func heartbeat(node: String, ttl: Duration) throws -> [String] { try call { try database.heartbeat(node: node, ttl: ttl) } }
    func store(shard: Int, epoch: Int64) throws -> any StateStoring { try call { try database.store(shard: shard, epoch: epoch, from: node) } }
    func enqueueCommand(_ command: ShardCommand) throws -> Bool { try call { try database.enqueueCommand(command) } }
    func pendingCommands(shard: Int) throws -> [ShardCommand] { try call { try database.pendingCommands(shard: shard, from: node) } }
}

/// One shard's state as its leader sees it: reads go to the shard's store, every `apply` is
/// fenced by the epoch the leader acquired. Its calls are the shard's loop's own: a cut-off
/// node's call tells `onHang` the bound it blocks the loop for, then fails.
final class FencedStore: StateStoring, @unchecked Sendable {
    let database: ModelledDatabase
    let shard: Int
    let epoch: Int64
    let node: String?
    /// Told the time a call of a cut-off node blocks its caller before it fails.
    var onHang: ((Duration) -> Void)?

    init(database: ModelledDatabase, shard: Int, epoch: Int64, node: String?) {
        self.database = database
        self.shard = shard
        self.epoch = epoch
        self.node = node
    }

    /// A call: a cut-off node's waits for its bound (`onHang`), then fails.
    func call<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as ModelledDatabase.Unreachable {
            if let node, database.isCutOff(node) { onHang?(database.callBound) }
            throw error
        }
    }

    func apply(_ changes: [StateChange]) throws { try call { try database.commit(changes, shard: shard, epoch: epoch, from: node) } }
    func restoredState() throws -> SchedulerCore.RestoredState { try call { try database.read(shard, from: node) { try $0.restoredState() } } }
    func instanceID() throws -> String { try call { try database.read(shard, from: node) { try $0.instanceID() } } }
    func pendingRequests() throws -> [PendingRequest] { try call { try database.read(shard, from: node) { try $0.pendingRequests() } } }
    func recentRuns(limit: Int) throws -> [RunRecord] { try call { try database.read(shard, from: node) { try $0.recentRuns(limit: limit) } } }
    func recentRuns(limit: Int, before: Int64?) throws -> [RunRecord] {
        try call { try database.read(shard, from: node) { try $0.recentRuns(limit: limit, before: before) } }
    }
    func lastRunPerJob() throws -> [RunRecord] { try call { try database.read(shard, from: node) { try $0.lastRunPerJob() } } }
    func dailyCounters(days: Int?) throws -> [DailyCounter] { try call { try database.read(shard, from: node) { try $0.dailyCounters(days: days) } } }
    func seedSpec(for identifier: String) throws -> String? { try call { try database.read(shard, from: node) { try $0.seedSpec(for: identifier) } } }
    func records(table: String) throws -> [MachineRecord] { try call { try database.read(shard, from: node) { try $0.records(table: table) } } }
    func close() {}
}
