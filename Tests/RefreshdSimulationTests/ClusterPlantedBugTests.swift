import Foundation
import Testing
import RefreshdConfig
import RefreshdCore
import RefreshdRuntime
@testable import RefreshdSimulation

/// Issue 32, item 4: an explored plan finds a bug planted in how a shared budget is sharded.
@Suite struct ClusterPlantedBugTests {
    static let t0 = Instant(milliseconds: 1_800_000_000_000)

    /// Two timeline jobs of one app (namespace `test.app`) share one reload budget
    /// (`budget-scope: namespace`), each asking every 2 minutes: 6 a day between them.
    static func sharedBudgetFolder() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("refreshd-shared-budget-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        for kind in ["weather", "photos"] {
            try """
            identifier: test.app.\(kind)
            kind: timeline
            command: ["/bin/true"]
            widget: {kind: \(kind), families: [systemSmall], budget: 6, budget-scope: namespace, min-reload-interval: 0s}
            simulate: {duration: 2s, timeline: {every: 2m, count: 1, policy: at-end}}

            """.write(toFile: dir + "/\(kind).yaml", atomically: true, encoding: .utf8)
        }
        return dir
    }

    /// Issue 32: a namespace's shared budget is one budget across the cluster only because a
    /// plain job lives in the shard of its namespace. Plant the defect (placement by identifier)
    /// and the explored plans find it, from the ledgers the shards committed; the real placement
    /// passes the same plans.
    @Test func exploredPlansFindABudgetShardedByIdentifierAndPassTheRealPlacement() throws {
        let dir = try Self.sharedBudgetFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var setup = try JobsFolderSimulation.scenario(jobs: dir, start: Self.t0, zone: TimeZone(identifier: "UTC")!, seed: 7).get()
        // The planted placement splits them (one shard each), the real one keeps them together.
        let map = ShardMap(shardCount: 16)
        #expect(map.shard(of: "test.app.weather") != map.shard(of: "test.app.photos"))
        for seed in UInt64(7)...10 {
            setup.hooks.misplacePlainJobs = false
            let real = ClusterSimulation.explored(setup, nodes: 3, seed: seed)
            #expect(real.report.violations == [], "seed \(seed), \(real.faults): \(real.report.violations)")
            // Within its budget: 6 performed in the hour across both kinds.
            let performed = real.report.widgets.reduce(0) { $0 + $1.performed }
            #expect(performed >= 6, "seed \(seed): \(real.report.widgets)")
            setup.hooks.misplacePlainJobs = true
            let planted = ClusterSimulation.explored(setup, nodes: 3, seed: seed)
            let found = try #require(planted.report.violations.first, "seed \(seed): the planted defect went unseen")
            // Each shard spent the whole budget on its own kind: the cluster counted more than 6.
            let shards = [map.shard(of: "test.app.weather"), map.shard(of: "test.app.photos")].sorted()
            #expect(found.hasPrefix("the namespace test.app budget shared by photos, weather: "), "\(found)")
            #expect(found.hasSuffix(" reloads counted within 86400.0 s across shards \(shards[0]), \(shards[1]), beyond its limit of 6"), "\(found)")
        }
        // The switch is the run's own: nothing else sees it.
        #expect(!ShardMap.plantedPlacementByIdentifier)
    }
}
