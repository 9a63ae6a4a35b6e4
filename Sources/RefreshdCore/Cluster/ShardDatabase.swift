import Foundation

/// Several nodes on one database (issue 24): what a node needs of the database they share.
///
/// Jobs and template instances hash into `shardCount` shards (`ShardMap`). Each shard has one
/// lease row: its owner, an epoch, and an expiry in **database time** (the database's own clock,
/// never a node's). A node leads the shards whose lease it holds; within a shard one
/// `RefreshRuntime` is the only decider, exactly as on one machine, over the store that
/// `store(shard:epoch:)` returns. Every commit of that store is fenced: it succeeds only while
/// the shard's epoch is still the one the node acquired and the lease has not expired at the
/// database's instant of the commit; otherwise it throws `ShardFenced` and nothing of the batch
/// is visible.
///
/// Two implementations: the PostgreSQL one (real nodes) and the modelled database of the
/// cluster simulation (linearizable conditional writes, one database clock). The same
/// conformance tests run on both.
///
/// Calls block the calling thread (a node makes them off its loop thread) and may throw any
/// error when the database cannot be reached; only `ShardFenced` means the lease is gone.
package protocol ShardDatabase: AnyObject, Sendable {
    /// The number of shards, fixed when the database was created.
    var shardCount: Int { get }

    /// The database's clock now.
    func now() throws -> Instant

    /// Takes `shard`'s lease for `node` when nobody holds it or its lease has expired at the
    /// database's instant (the epoch goes up by one; the expiry becomes database now + `lease`).
    /// Nil when another node holds an unexpired lease, or when the shard's lease is being written
    /// right now (PostgreSQL: its row is locked by a transaction in flight, which is not waited
    /// for; the next survey tries again). A node taking back its own lease, expired
    /// or not (a restarted node with the same name), gets a new epoch too: whatever its previous
    /// life still holds is fenced.
    func acquire(shard: Int, node: String, lease: Duration) throws -> ShardLease?

    /// Extends the lease to database now + `lease` when `node` still holds `shard` at `epoch`
    /// and it has not expired; nil when the lease is lost (never re-acquires).
    func renew(shard: Int, node: String, epoch: Int64, lease: Duration) throws -> ShardLease?

    /// Gives the lease up (its expiry becomes database now) when `node` holds it at `epoch`, so
    /// another node may take it at once; the epoch stays, the next acquire bumps it.
    func release(shard: Int, node: String, epoch: Int64) throws

    /// Every shard's lease row, by shard.
    func leases() throws -> [ShardLease]

    /// Records that `node` is alive until database now + `ttl` and answers the nodes alive at
    /// the database's instant (sorted), so that nodes spread the shards evenly among themselves.
    func heartbeat(node: String, ttl: Duration) throws -> [String]

    /// The state of one shard, as a store whose every `apply` is fenced by `epoch` (see above).
    /// Reads are not fenced.
    func store(shard: Int, epoch: Int64) throws -> any StateStoring

    /// Queues an operator's command for `shard`'s leader, and wakes the leader at the commit
    /// where the database can (PostgreSQL: a NOTIFY in the same transaction). `id` makes it
    /// idempotent: a command whose id is already queued or applied is not queued again (false).
    func enqueueCommand(_ command: ShardCommand) throws -> Bool

    /// Queues several commands at once, in one transaction where the database has them (a
    /// batch of instances split by shard: one durable write, not one a shard); the ids of those
    /// that were not already queued or applied.
    func enqueueCommands(_ commands: [ShardCommand]) throws -> Set<String>

    /// The commands queued for `shard` not yet applied, oldest first. Applied means: the id has
    /// a record in the shard's state, table `ShardCommand.appliedTable` (the leader commits it
    /// in the same fenced transaction as the command's own changes, so a command is applied once).
    func pendingCommands(shard: Int) throws -> [ShardCommand]

    /// What the leaders said of those of `commands` they applied, by id (the applied record's
    /// value: `{"ok":true,"message":...}` or `{"ok":false,"code":...,"message":...}`); a
    /// command not applied yet is absent. A point read a command, never the whole table (it
    /// keeps every id ever applied).
    func appliedOutcomes(of commands: [ShardCommand]) throws -> [String: String]

    /// Whether a shard's new leader has reaped every process its previous leader started (one
    /// machine, whose previous life ran on this machine): an interrupted run is then retried, as
    /// one machine retries it. False for a cluster: the new leader cannot reap another node's
    /// processes, so an interrupted slot counts as run and never runs twice.
    var reapsPreviousOwners: Bool { get }
}

/// One shard's lease as the database holds it.
package struct ShardLease: Sendable, Hashable, Codable {
    package var shard: Int
    /// The node holding it (nil: never held).
    package var owner: String?
    /// Goes up by one at every acquire; fences every commit.
    package var epoch: Int64
    /// When the lease ends, in database time.
    package var expiresAt: Instant

    package init(shard: Int, owner: String?, epoch: Int64, expiresAt: Instant) {
        self.shard = shard
        self.owner = owner
        self.epoch = epoch
        self.expiresAt = expiresAt
    }
}

/// An operator's command carried to a shard's leader through the database.
package struct ShardCommand: Sendable, Hashable, Codable {
    /// Chosen by the sender (a retried `ctl submit` sends the same id, and is applied once).
    package var id: String
    package var shard: Int
    /// The control request, as the control socket would receive it (JSON).
    package var payload: String

    /// The `MachineRecord` table of a shard's state that records applied command ids: a leader
    /// marks a command applied with a `.putRecord` keyed by its id in the fenced transaction that
    /// applies it, so the command leaves `pendingCommands` exactly when (and only if) that
    /// transaction commits; its id stays known, and a resent one is not queued again.
    package static let appliedTable = "cluster-command"
    /// A record of this table is a command for ANOTHER shard, sent in the transaction that
    /// commits it (a shared store inserts it into the commands table and keeps no record): key
    /// `ID`, value `{"shard": TARGET, "payload": TEXT}`. A sync run's instance lines about
    /// other shards' instances travel so, applied once by their leaders.
    package static let outboxTable = "cluster-outbox"

    /// The outbox record that sends `payload` to `shard` as command `id`.
    package static func outbox(id: String, shard: Int, payload: String) -> MachineRecord {
        let value = (try? JSONEncoder().encode(Outbox(shard: shard, payload: payload))).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return MachineRecord(table: outboxTable, key: id, value: value)
    }

    /// The command an outbox record sends, or nil for a record that is not one.
    package init?(outbox record: MachineRecord) {
        guard record.table == Self.outboxTable,
              let sent = try? JSONDecoder().decode(Outbox.self, from: Data(record.value.utf8)) else { return nil }
        self.init(id: record.key, shard: sent.shard, payload: sent.payload)
    }

    private struct Outbox: Codable {
        var shard: Int
        var payload: String
    }

    package init(id: String, shard: Int, payload: String) {
        self.id = id
        self.shard = shard
        self.payload = payload
    }
}

/// A commit refused by the fence: the shard's lease is no longer the epoch the store was opened
/// with (taken by another node) or it expired at the database's instant. Nothing of the batch
/// was applied; the node must stop leading the shard and act on nothing of that event.
package struct ShardFenced: Error, Sendable, Hashable, CustomStringConvertible {
    package var shard: Int
    /// The epoch the commit carried.
    package var epoch: Int64
    /// The lease as the database held it at the refusal, when known.
    package var current: ShardLease?

    package init(shard: Int, epoch: Int64, current: ShardLease?) {
        self.shard = shard
        self.epoch = epoch
        self.current = current
    }

    package var description: String {
        var text = "shard \(shard): commit fenced at epoch \(epoch)"
        if let current {
            text += "; the lease is at epoch \(current.epoch), held by \(current.owner ?? "nobody") until \(current.expiresAt)"
        }
        return text
    }
}

extension ShardDatabase {
    package var reapsPreviousOwners: Bool { false }

    /// From each shard's records (a database whose stores are in memory: the simulation's).
    package func appliedOutcomes(of commands: [ShardCommand]) throws -> [String: String] {
        var outcomes: [String: String] = [:]
        for (shard, sent) in Dictionary(grouping: commands, by: \.shard) {
            let wanted = Set(sent.map(\.id))
            for record in try store(shard: shard, epoch: 0).records(table: ShardCommand.appliedTable) where wanted.contains(record.key) {
                outcomes[record.key] = record.value
            }
        }
        return outcomes
    }

    /// One command after the other (a database without transactions of several commands).
    package func enqueueCommands(_ commands: [ShardCommand]) throws -> Set<String> {
        var queued: Set<String> = []
        for command in commands where try enqueueCommand(command) { queued.insert(command.id) }
        return queued
    }
}
