import Foundation
import RefreshdCore
import RefreshdConfig
import RefreshdRuntime
@testable import RefreshdSimulation
import Testing

/// The world's state on nodes (issue 32, item 4): a scenario's network loss, Low Power Mode and
/// emptied widget budget reach every shard's leader as they reach one machine's runtime, so two
/// nodes without node faults show what one machine shows, day by day and job by job. Before,
/// the cluster simulator carried only reloads and pauses: the hourly job ran without a network
/// (every run on time), the low-power widget reloaded as if charged, the budget was never empty.
@Suite struct ClusterWorldStateTests {
    @Test(arguments: ["network-back-without-notice.yaml", "widget-low-power.yaml", "widget-provider-faults.yaml"])
    func twoNodesShowWhatOneMachineShows(_ file: String) throws {
        let scenario = try WidgetDayRowsTests.load(file)
        let machine = Simulation(scenario: scenario)
        let alone = machine.run()
        let cluster = ClusterSimulation(scenario: scenario, nodes: 2, faults: []).run()
        #expect(cluster.violations.isEmpty, "\(cluster.violations)")
        let nodes = try #require(cluster.machine)
        // The same runs and outcomes, late by the same amounts, each day and for each job.
        #expect(nodes.days.map(\.jobs) == alone.days.map(\.jobs), "\(file): \(nodes.days.map(\.jobs)) vs \(alone.days.map(\.jobs))")
        // The same widgets' days, from the committed state: reloads asked, made, deferred,
        // provider calls, the lowest budget, stale time.
        let line = { (c: WidgetDayCounter) in
            "\(c.day) \(c.kind) asked \(c.requested) made \(c.performed) deferred \(c.deferred) calls \(c.providerCalls) low \(c.budgetLow ?? -1) stale \(c.staleMilliseconds / 60_000) min"
        }
        let mine = try SavedMachineState(store: machine.store).counters
        // The cluster's world runs a moment into the next day (its last lease renewals).
        let days = Set(mine.map(\.day))
        #expect(cluster.widgets.filter { days.contains($0.day) }.map(line).sorted() == mine.map(line).sorted(), "\(file)")
    }
}
