@_spi(Benchmarks) import RefreshdCore

/// Who leads each shard, as the database says (issue 24): what `refreshd status` adds in cluster
/// mode, whichever node answers. A node that does not lead a shard answers from the database,
/// the one place every node agrees on; the leases are read at one database instant.
package struct ClusterStatus: Codable, Sendable, Equatable {
    package struct Shard: Codable, Sendable, Equatable {
        package var shard: Int
        /// The lease's holder (nil: never held).
        package var owner: String?
        package var epoch: Int64
        /// When the lease ends, in database time.
        package var expiresAt: Instant
        /// The lease has not expired at `databaseNow`: `owner` leads the shard.
        package var led: Bool
        /// Operator commands queued for the shard and not yet applied by its leader.
        package var pendingCommands: Int

        package init(_ lease: ShardLease, databaseNow: Instant, pendingCommands: Int) {
            shard = lease.shard
            owner = lease.owner
            epoch = lease.epoch
            expiresAt = lease.expiresAt
            led = lease.owner != nil && lease.expiresAt > databaseNow
            self.pendingCommands = pendingCommands
        }
    }

    /// The node that answered.
    package var node: String
    /// The database's clock when the leases were read.
    package var databaseNow: Instant
    package var shards: [Shard]

    package init(node: String, databaseNow: Instant, shards: [Shard]) {
        self.node = node
        self.databaseNow = databaseNow
        self.shards = shards
    }

    /// One line per shard: `shard 3  led by b (epoch 7) until ...` or `not led`.
    package var lines: [String] {
        shards.map { s in
            var text = "shard \(s.shard)  "
            if s.led, let owner = s.owner {
                text += "led by \(owner)\(owner == node ? " (this node)" : "") epoch \(s.epoch), lease until \(s.expiresAt)"
            } else {
                text += "not led (last \(s.owner ?? "nobody"), epoch \(s.epoch), expired \(s.expiresAt))"
            }
            if s.pendingCommands > 0 { text += "  \(s.pendingCommands) command\(s.pendingCommands == 1 ? "" : "s") queued" }
            return text
        }
    }
}
