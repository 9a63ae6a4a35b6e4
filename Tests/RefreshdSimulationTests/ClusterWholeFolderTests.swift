import Foundation
import RefreshdCore
import RefreshdRuntime
import RefreshdConfig
@testable import RefreshdSimulation
import Testing

/// `simulate --nodes` runs a jobs folder whole (issue 32, item 4): the shipped `Jobs/` (a
/// built-in action staging the playlist, the widget reading it, the live activity, commands) on
/// three simulated nodes through a kill, a pause past the lease and a partition: the widget's
/// reloads and publications happen, the staged day is read by the provider across shards, and
/// the cluster's invariants hold.
@Suite struct ClusterWholeFolderTests {
    static let project = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    @Test func theShippedJobsRunWholeOnThreeNodesThroughFaults() throws {
        let scenario = try JobsFolderSimulation.scenario(jobs: Self.project + "/Jobs", start: Instant(secondsSinceEpoch: 1_795_392_000),
                                                        zone: TimeZone(identifier: "UTC")!, days: 1).get()
        let faults: [NodeFault] = [.kill(node: 0, at: .seconds(3600), restartAfter: .seconds(60)),
                                   .pause(node: 1, at: .seconds(7200), for: .seconds(30)),
                                   .partition(node: 2, at: .seconds(10_800), for: .seconds(40))]
        let report = ClusterSimulation(scenario: scenario, nodes: 3, faults: faults).run()
        #expect(report.violations.isEmpty, "\(report.violations)")
        #expect(report.duplicates == 0 && report.lost == 0)
        let jobs = Dictionary(grouping: report.jobs, by: \.identifier).mapValues { $0.reduce(0) { $0 + $1.successes } }
        #expect((jobs["design.example.wallpaper.refresh"] ?? 0) >= 1, "the built-in action never succeeded: \(report.lines.joined(separator: "\n"))")
        #expect((jobs["design.example.heartbeat"] ?? 0) > 100, "\(jobs)")
        let wallpaper = report.widgets.filter { $0.kind == "wallpaper" }
        #expect(Set(wallpaper.map(\.family.rawValue)) == ["systemSmall", "systemMedium"], "\(report.widgets)")
        #expect(wallpaper.allSatisfy { $0.performed >= 1 }, "\(wallpaper)")
        #expect(report.publications > 0)
        #expect(report.ignoredProviderResults == 0, "a reload lost: \(report.lines.joined(separator: "\n"))")
        #expect(report.lines.contains { $0.hasPrefix("per day and widget") })
        #expect(report.jsonText().contains("\"publications\""))
    }
}

