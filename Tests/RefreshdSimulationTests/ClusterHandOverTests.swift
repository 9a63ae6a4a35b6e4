import Foundation
import Testing
import RefreshdConfig
import RefreshdCore
import RefreshdRuntime
@testable import RefreshdSimulation

/// Issue 32: a defect the README's three-node example found before the simulator did. A shard
/// handed over while its widget's provider request was held (the shard launches nothing more
/// while it drains) came back on the next leader with the call "interrupted": asked again into
/// the reload spacing, and the held run's result ignored (`TimelineMachine.RestoredState.
/// providersWaiting` is the fix). The simulator now finds it.
@Suite struct ClusterHandOverTests {
    static let t0 = Instant(milliseconds: 1_800_000_000_000)

    /// A widget asking every minute and a 100 s sync in one namespace, whose shard is the one
    /// node0 hands over when node1 joins (with 2 shards, the highest: shard 1).
    static func folder() throws -> (dir: String, namespace: String) {
        let map = ShardMap(shardCount: 2)
        let namespace = try #require(["test.app", "test.web", "test.one", "test.two"].first { map.shard(of: $0) == 1 })
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("refreshd-hand-over-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try """
        identifier: \(namespace).weather
        kind: timeline
        command: ["/bin/true"]
        widget: {kind: weather, families: [systemSmall], min-reload-interval: 4m}
        simulate: {duration: 2s, timeline: {every: 1m, count: 1, policy: at-end}}

        """.write(toFile: dir + "/weather.yaml", atomically: true, encoding: .utf8)
        try """
        identifier: \(namespace).sync
        kind: processing
        command: ["/bin/true"]
        allowance: 10m
        resubmit: {after: 5s}
        simulate: {duration: 100s}

        """.write(toFile: dir + "/sync.yaml", atomically: true, encoding: .utf8)
        return (dir, namespace)
    }

    /// node1 joins at +230 s; node0 hands shard 1 over from +233.3 s, draining the sync run until
    /// +300 s; the widget's reload falls due at +240 s (4 min after the first), its provider
    /// request is committed and held; node1 leads the shard from +303.3 s and restores it. With
    /// the fix the held request launches there and its timeline is taken. Without it (the call
    /// restored as interrupted) the simulator reports, at +305.3 s, "node1, shard 1 (epoch 2):
    /// provider result for weather/systemSmall ignored: no provider call in flight: a reload
    /// lost", with a failed reload counted and the widget stale.
    @Test func aProviderCallHeldThroughAHandOverIsDeliveredByTheNextLeader() throws {
        let (dir, namespace) = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let scenario = try JobsFolderSimulation.scenario(jobs: dir, start: Self.t0, zone: TimeZone(identifier: "UTC")!, seed: 3).get()
        let report = ClusterSimulation(scenario: scenario, nodes: 2, shards: 2, faults: [.join(node: 1, at: .seconds(230))],
                                       duration: .seconds(600)).run()
        #expect(report.violations == [], "\(report.lines + report.events)")
        // The hand-over: node0 released shard 1 while the sync drained, node1 took it.
        let released = try #require(report.changes.first { $0.shard == 1 && $0.node == 0 && $0.what == .released })
        let taken = try #require(report.changes.first { $0.shard == 1 && $0.node == 1 && $0.what == .takeover })
        #expect(released.at > .seconds(240) && taken.at > released.at, "\(report.events)")
        // The provider request asked by node0 before the release, launched by node1 after it.
        let runs = try #require(report.machine?.jobs.first { $0.identifier == "\(namespace).weather#systemSmall" }).runs
        let held = try #require(runs.first { $0.earliest < Self.t0 + released.at && $0.started >= Self.t0 + taken.at },
                                "no provider call held through the hand-over: \(runs)")
        #expect(held.outcome == .success)
        // Its timeline taken: no reload lost, none failed, never stale.
        #expect(report.ignoredProviderResults == 0, "\(report.lines)")
        let weather = report.widgets.filter { $0.kind == "weather" }
        #expect(!weather.isEmpty && weather.allSatisfy { $0.failed == 0 && $0.staleMinutes == 0 }, "\(weather)")
    }
}
