/// Which shard a job, a template instance, a namespace or a run belongs to (issues 24, 32).
///
/// - A template instance (`template[key]`) is in the shard of its whole identifier, so a million
///   instances of one template spread over every shard; its template's definition is known to
///   every shard.
/// - Any other job is in the shard of its NAMESPACE (issue 32): every rule that shares state
///   across the jobs of a namespace (pending limits, `budget-scope: kind|namespace`, live
///   activities per namespace) then holds in one shard's machines, exactly as on one machine,
///   and a live activity started with `--namespace NS` goes to `shard(of: NS)` too.
/// - A run is in the shard its id says: each shard's run ids start at `shard × runIDSpan + 1`.
///
/// FNV-1a (64-bit) of the UTF-8 bytes, modulo the shard count: stable across processes,
/// releases and machines (Swift's `Hasher` is seeded per process, so it cannot be used), cheap,
/// and spread well enough for names like `feed[user-17]`.
package struct ShardMap: Sendable, Hashable {
    package let shardCount: Int

    /// Each shard's run ids start at `shard × runIDSpan + 1` (shard 0 at 1, as SQLite).
    package static let runIDSpan: Int64 = 1_000_000_000_000

    /// A defect planted on purpose (issue 32: an explored plan must find a bug in how a shared
    /// budget is sharded): plain jobs placed by their identifier instead of their namespace, so
    /// that two jobs of one namespace may land in two shards, whose machines then each enforce
    /// the namespace's rules on their half. Only the cluster simulation sets it (scenario hook
    /// `misplacePlainJobs`), for the task that runs it; never true in refreshd.
    @TaskLocal package static var plantedPlacementByIdentifier = false

    package init(shardCount: Int) {
        precondition(shardCount > 0, "a cluster has at least one shard")
        self.shardCount = shardCount
    }

    /// The shard of the name `name` (a namespace, or an instance's whole identifier), in
    /// 0..<shardCount.
    package func shard(of name: String) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in name.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return Int(hash % UInt64(shardCount))
    }

    /// The shard of the job `identifier` whose namespace is `namespace`: an instance by its
    /// identifier, any other job by its namespace.
    package func shard(ofJob identifier: String, namespace: String) -> Int {
        InstanceName.split(identifier) != nil || Self.plantedPlacementByIdentifier ? shard(of: identifier) : shard(of: namespace)
    }

    /// The shard of the job `identifier` among `jobs` (a plain job's namespace is its spec's); an
    /// identifier no job declares falls in the shard of its own name.
    package func shard(ofJob identifier: String, in jobs: [JobSpec]) -> Int {
        guard InstanceName.split(identifier) == nil,
              let spec = jobs.first(where: { $0.template == nil && $0.identifier == identifier }) else { return shard(of: identifier) }
        return shard(ofSpec: spec)
    }

    /// The shard a plain job's spec belongs to (a template's belongs to every shard).
    package func shard(ofSpec spec: JobSpec) -> Int {
        shard(of: Self.plantedPlacementByIdentifier ? spec.identifier : spec.definition.namespace)
    }

    /// `lines` split by the shard of each instance: `set` lists go to every shard (each keeps
    /// only what its part lists, so one with no part removes its instances of the template);
    /// adds and removes only where there are some.
    package func split(_ lines: [InstanceLines]) -> [Int: [InstanceLines]] {
        var parts: [Int: [InstanceLines]] = [:]
        for line in lines {
            // Appended in place (`default:`): a copy of the part for each record made the split
            // of a 4,000-key request quadratic (11% of the receiving node's CPU at 1,000,000).
            var byShard: [Int: InstanceLines] = [:]
            let empty = InstanceLines(template: line.template)
            for record in line.add {
                byShard[shard(of: record.identifier), default: empty].add.append(record)
            }
            for key in line.remove {
                byShard[shard(of: InstanceName.identifier(template: line.template, key: key)), default: empty].remove.append(key)
            }
            if let set = line.set {
                for shard in 0..<shardCount where byShard[shard, default: empty].set == nil { byShard[shard, default: empty].set = [] }
                for record in set { byShard[shard(of: record.identifier)]?.set?.append(record) }
            }
            for shard in byShard.keys.sorted() { parts[shard, default: []].append(byShard[shard]!) }
        }
        return parts
    }

    /// The shard whose range holds `runID`.
    package func shard(ofRun runID: Int64) -> Int {
        Int(min(Int64(shardCount - 1), max(0, (runID - 1) / Self.runIDSpan)))
    }
}

/// One shard of a cluster: the map and which shard (`SchedulerConfiguration.shardPlace`).
package struct ShardPlace: Sendable, Hashable {
    package var map: ShardMap
    package var shard: Int

    package init(map: ShardMap, shard: Int) {
        self.map = map
        self.shard = shard
    }
}
