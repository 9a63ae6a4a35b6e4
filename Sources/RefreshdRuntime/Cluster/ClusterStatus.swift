import RefreshdCore

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

    /// `watch`'s cluster section: one line per node leading shards (its shards with their
    /// epochs, and which of `runs` run in them: a run in flight runs on its shard's leader),
    /// then the shards nobody leads now.
    package func watchLines(runs: [SchedulerSnapshot.Run]) -> [String] {
        let map = ShardMap(shardCount: max(1, shards.count))
        let led = shards.filter { $0.led && $0.owner != nil }
        var lines = ["Cluster  \(shards.count) shards, \(Set(led.map { $0.owner! }).count) nodes leading (answered by node \(node), database time \(databaseNow))"]
        for owner in Set(led.map { $0.owner! }).sorted() {
            let mine = led.filter { $0.owner == owner }
            let shardSet = Set(mine.map(\.shard))
            let running = runs.filter { shardSet.contains(map.shard(ofRun: $0.runID)) }.map { "\($0.identifier) run \($0.runID)" }
            lines.append("  \(owner)\(owner == node ? " (this node)" : "")  \(mine.count) shard\(mine.count == 1 ? "" : "s"): "
                + mine.map { "\($0.shard) e\($0.epoch)" }.joined(separator: ", ")
                + (running.isEmpty ? "" : "  running: " + running.joined(separator: ", ")))
        }
        let unled = shards.filter { !($0.led && $0.owner != nil) }
        if !unled.isEmpty {
            lines.append("  not led now: " + unled.map { "\($0.shard) (last \($0.owner ?? "nobody"), e\($0.epoch))" }.joined(separator: ", "))
        }
        return lines
    }

    /// What changed since `old`, one line a shard whose leader or epoch changed (`watch`
    /// without a terminal prints them as events).
    package func changes(from old: ClusterStatus) -> [String] {
        let before = Dictionary(old.shards.map { ($0.shard, $0) }, uniquingKeysWith: { first, _ in first })
        return shards.compactMap { s in
            let was = before[s.shard]
            guard was?.led != s.led || was?.owner != s.owner || was?.epoch != s.epoch else { return nil }
            return s.led ? "cluster: shard \(s.shard) led by \(s.owner ?? "") (epoch \(s.epoch))"
                : "cluster: shard \(s.shard) not led now (last \(s.owner ?? "nobody"), epoch \(s.epoch))"
        }
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
