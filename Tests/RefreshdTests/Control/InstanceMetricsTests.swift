import Testing
@testable import Refreshd
@testable import RefreshdDaemon
import RefreshdCore
import RefreshdRuntime

/// Issue 23: instances count under their template's `job` label, never one series each.
@Suite struct InstanceMetricsTests {
    @Test func instancesAreAggregatedUnderTheirTemplate() {
        let metrics = MetricsExporter()
        let t0 = Instant(milliseconds: 1_800_000_000_000)
        var batch: [RuntimeObservation] = []
        for (run, key) in ["alice", "bob", "carol"].enumerated() {
            let id = "app.feed.refresh[\(key)]"
            batch.append(RuntimeObservation(.launched(LaunchOrder(runID: Int64(run + 1), identifier: id, kind: .appRefresh, started: t0,
                                                                  deadline: t0 + .seconds(30), attempt: 1), lateness: .zero), at: t0))
            batch.append(RuntimeObservation(.finished(runID: Int64(run + 1), identifier: id, outcome: key == "bob" ? .failure : .success,
                                                      exit: .exited(key == "bob" ? 1 : 0), duration: .seconds(1)), at: t0))
        }
        metrics.record(batch)
        let text = metrics.text()
        #expect(text.contains(#"refreshd_launches_total{job="app.feed.refresh"} 3"#))
        #expect(text.contains(#"refreshd_runs_total{job="app.feed.refresh",outcome="failure"} 1"#))
        #expect(!text.contains("alice"))
    }
}
