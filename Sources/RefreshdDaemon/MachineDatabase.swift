import Foundation
import RefreshdCore
import RefreshdStore

/// One machine as a cluster of one (issue 32: one daemon): the state file is the one shard's
/// store, and the state directory's lock (`StateDirectoryLock`, flock) is its lease. The lock is
/// exclusive and the kernel gives it back at the holder's death, so the lease never lapses while
/// refreshd lives and no other process can hold it meanwhile: acquiring always succeeds (a new
/// epoch each time, as a restarted node's), a renewal always holds, and the self-fence deadline
/// is far beyond any run. Commits need no fence for the same reason.
///
/// Operator commands are not queued here: one machine answers them from its runtime on its loop
/// (the control server is hosted by the shard's own scheduler), so the commands table is empty.
/// The previous holder's processes were this machine's: the restore reaps them, so an
/// interrupted run is retried (`reapsPreviousOwners`).
package final class MachineDatabase: ShardDatabase, @unchecked Sendable {
    package let shardCount = 1
    /// A lease as long as refreshd lives: a hundred years.
    package static let forever: Duration = .seconds(100 * 365 * 86_400)
    let store: any StateStoring
    private let lock = NSLock()
    private var epoch: Int64 = 0
    private var owner: String?

    /// `store`: the state file, opened once the state directory's lock is held.
    package init(store: any StateStoring) {
        self.store = store
    }

    package var reapsPreviousOwners: Bool { true }

    package func now() throws -> Instant { Instant(secondsSinceEpoch: Date().timeIntervalSince1970) }

    package func acquire(shard: Int, node: String, lease: Duration) throws -> ShardLease? {
        lock.withLock {
            epoch += 1
            owner = node
            return ShardLease(shard: 0, owner: node, epoch: epoch, expiresAt: Instant(secondsSinceEpoch: Date().timeIntervalSince1970) + Self.forever)
        }
    }

    package func renew(shard: Int, node: String, epoch: Int64, lease: Duration) throws -> ShardLease? {
        let expiry = try now() + Self.forever
        return lock.withLock { self.epoch == epoch && owner == node ? ShardLease(shard: 0, owner: node, epoch: epoch, expiresAt: expiry) : nil }
    }

    package func release(shard: Int, node: String, epoch: Int64) throws {}

    package func leases() throws -> [ShardLease] {
        let expiry = try now() + Self.forever
        return lock.withLock { [ShardLease(shard: 0, owner: owner, epoch: epoch, expiresAt: owner == nil ? expiry - Self.forever : expiry)] }
    }

    package func heartbeat(node: String, ttl: Duration) throws -> [String] { [node] }

    package func store(shard: Int, epoch: Int64) throws -> any StateStoring { store }

    package func enqueueCommand(_ command: ShardCommand) throws -> Bool { false }

    package func pendingCommands(shard: Int) throws -> [ShardCommand] { [] }

    package func appliedOutcomes(of commands: [ShardCommand]) throws -> [String: String] { [:] }
}
