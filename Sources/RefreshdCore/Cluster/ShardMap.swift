/// Which shard a job or a template instance belongs to (issue 24).
///
/// FNV-1a (64-bit) of the identifier's UTF-8 bytes, modulo the shard count: stable across
/// processes, releases and machines (Swift's `Hasher` is seeded per process, so it cannot be
/// used), cheap, and spread well enough for names like `feed[user-17]`. An instance hashes by its
/// whole identifier (`template[key]`), so a million instances of one template spread over every
/// shard; its template's definition is known to every shard.
package struct ShardMap: Sendable, Hashable {
    package let shardCount: Int

    package init(shardCount: Int) {
        precondition(shardCount > 0, "a cluster has at least one shard")
        self.shardCount = shardCount
    }

    /// The shard of `identifier`, in 0..<shardCount.
    package func shard(of identifier: String) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in identifier.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return Int(hash % UInt64(shardCount))
    }
}
