import Foundation
@_spi(Benchmarks) import RefreshdCore
import RefreshdConfig
@testable import RefreshdSimulation
import Testing

/// The restore of a provider call interrupted by a takeover (issue 32), in the cluster simulator:
/// `widget-kill-mid-provider.yaml` on nodes, every node killed at 00:31 while the widget's
/// 00:30 policy reload runs its provider (3 minutes), back 5 minutes later. The cluster
/// simulator audits every shard's commits for a reload counted twice (`reload-counted-once`,
/// as one machine's does) and flags a provider result dropped. With the restore's fix taken out
/// (`Machines.settlingRestore`) it reports "provider result ... ignored: a reload lost" and the
/// widget reloads 5 times that day; with it, no violation and 50 reloads, as on one machine.
///
/// (The scenario's own kill lands at 00:25:30 in the app's explicit 00:25 reload: the cluster
/// simulator does not model the device's reloads yet, so there it finds no provider running.)
@Suite struct ClusterReloadAuditTests {
    @Test func aLeaderKilledMidProviderCountsEachReloadOnce() throws {
        let nodes = 2
        var scenario = try WidgetDayRowsTests.load("widget-kill-mid-provider.yaml")
        scenario.faults = []
        // Every node killed and back 5 minutes later: whichever leads the widget's shard then
        // restores it from the store.
        let faults: [NodeFault] = (0..<nodes).map { .kill(node: $0, at: .seconds(31 * 60), restartAfter: .seconds(300)) }
        let report = ClusterSimulation(scenario: scenario, nodes: nodes, faults: faults).run()
        #expect(report.violations.isEmpty, "\(report.violations)")
        // The one machine's figures for the day (the run goes a moment into the next).
        let busy = report.widgets.filter { $0.kind == "busy" && $0.day == "2026-11-23" }
        #expect(busy.map(\.performed) == [50], "\(report.lines.joined(separator: "\n"))")
        #expect(busy.map(\.providerCalls) == [50], "\(report.lines.joined(separator: "\n"))")
    }
}
