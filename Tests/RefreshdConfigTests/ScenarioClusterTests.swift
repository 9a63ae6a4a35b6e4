import Testing
import RefreshdCore
@testable import RefreshdConfig

/// `nodes:` and `node-faults:` in a scenario file (issue 24): read into a `ClusterModel`, or
/// refused with the file, the line and what was expected.
@Suite struct ScenarioClusterTests {
    static let jobs = """
        start: 2026-11-23T00:00:00Z
        days: 1
        jobs:
          - identifier: test.tick
            kind: processing
            command: ["/bin/true"]
            resubmit: {after: 1m}

        """

    static func parse(_ yaml: String) -> Result<ScenarioConfig, ConfigErrors> {
        ScenarioFileTests.parse(yaml)
    }

    @Test func nodesAndTheirFaultsAreRead() throws {
        let scenario = try Self.parse(Self.jobs + """
            nodes: 3
            node-faults: [kill:0@120+60, kill:2@10, pause:1@300+30, partition:2@400+20, drift:1*1.1, database-down@500+5, join:2@600]
            expect: [no-violation]
            """).get()
        #expect(scenario.cluster == ClusterModel(nodes: 3, faults: [
            .kill(node: 0, at: .seconds(120), restartAfter: .seconds(60)), .kill(node: 2, at: .seconds(10), restartAfter: nil),
            .pause(node: 1, at: .seconds(300), for: .seconds(30)), .partition(node: 2, at: .seconds(400), for: .seconds(20)),
            .drift(node: 1, rate: 1.1), .databaseDown(at: .seconds(500), for: .seconds(5)), .join(node: 2, at: .seconds(600)),
        ]))
        // Without nodes:, one machine as before.
        #expect(try Self.parse(Self.jobs).get().cluster == nil)
    }

    @Test func badNodeFaultsAreRefusedWithWhatWasExpected() {
        func errors(_ extra: String) -> [String] {
            switch Self.parse(Self.jobs + extra) {
            case .success: return []
            case let .failure(errors): return errors.errors.map(\.description)
            }
        }
        let node3 = errors("nodes: 2\nnode-faults: [kill:3@10]\n")
        #expect(node3.count == 1, "\(node3)")
        #expect(node3.first?.hasPrefix("Tests/Scenarios/test.yaml:9:15: ") == true, "\(node3)")
        #expect(node3.first?.contains("node-faults: expected kill:NODE@SECONDS[+RESTART]") == true)
        #expect(node3.first?.contains("with NODE in 0..<2, found \"kill:3@10\"") == true)
        #expect(errors("nodes: 2\nnode-faults: [pause:0@10]\n").count == 1)  // a pause needs its span
        #expect(errors("node-faults: [kill:0@10]\n").first?.contains("node-faults: needs nodes:") == true)
        #expect(errors("nodes: 40\n").first?.contains("nodes") == true)
        #expect(errors("nodes: 2\nexpect: [{runs: {job: test.tick, equal: 3}}]\n").first?
            .contains("a scenario with nodes: checks the cluster's invariants only") == true)
    }
}
