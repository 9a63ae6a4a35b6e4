import Foundation
import RefreshdCore
import RefreshdConfig
@testable import RefreshdSimulation
import Testing

/// The restore of a provider call interrupted by a takeover (issue 32), in the cluster simulator:
/// `widget-kill-mid-provider.yaml` on two nodes, both killed at 00:25:30 while the app's 00:25
/// reload (the scenario's device, which reaches the shards' leaders) runs the provider, back 5
/// minutes later, after the widget's own 00:30 policy reload fell due. The cluster simulator
/// audits every shard's commits as one machine's journal does: with the restore's fix taken out
/// (`Machines.settlingRestore`) it reports `reload-counted-once` at 00:30:30 ("6 provider calls
/// counted for 4 provider runs started", one machine's very words) and 6 reloads that day; with
/// it, no violation and 50 reloads and provider calls, as on one machine.
@Suite struct ClusterReloadAuditTests {
    @Test func aLeaderKilledMidProviderCountsEachReloadOnce() throws {
        let nodes = 2
        var scenario = try WidgetDayRowsTests.load("widget-kill-mid-provider.yaml")
        scenario.faults = []
        // Every node killed at the one machine's instant and back 5 minutes later: whichever
        // leads the widget's shard then restores it from the store.
        let faults: [NodeFault] = (0..<nodes).map { .kill(node: $0, at: .seconds(25 * 60 + 30), restartAfter: .seconds(300)) }
        let report = ClusterSimulation(scenario: scenario, nodes: nodes, faults: faults).run()
        #expect(report.violations.isEmpty, "\(report.violations)")
        // The one machine's figures for the day (the run goes a moment into the next).
        let busy = report.widgets.filter { $0.kind == "busy" && $0.day == "2026-11-23" }
        #expect(busy.map(\.performed) == [50], "\(report.lines.joined(separator: "\n"))")
        #expect(busy.map(\.providerCalls) == [50], "\(report.lines.joined(separator: "\n"))")
    }
}
