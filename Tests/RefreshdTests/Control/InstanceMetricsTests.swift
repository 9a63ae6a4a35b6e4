import Foundation
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

    /// The most failing instances of a template (issue 23): at most 10 series, longest streak
    /// first (ties by key); the others only in the template's count; one that leaves the top
    /// or recovers loses its series at the next snapshot.
    @Test func theTenMostFailingInstancesOfATemplateHaveASeriesAndNoMore() {
        let metrics = MetricsExporter()
        // 25 failing instances: u00 has 1 failure, u01 2, ..., u24 25; another template's 1; a job's.
        var streaks = (0..<25).map { SchedulerSnapshot.FailureStreak(identifier: "t.feed[u\(String(format: "%02d", $0))]", count: $0 + 1) }
        streaks.append(SchedulerSnapshot.FailureStreak(identifier: "t.other[x]", count: 3))
        streaks.append(SchedulerSnapshot.FailureStreak(identifier: "t.plain", count: 7))
        metrics.recordFailingInstances(streaks)
        var text = metrics.text()
        #expect(text.contains(#"refreshd_failing_instances{job="t.feed"} 25"#))
        #expect(text.contains(#"refreshd_failing_instances{job="t.other"} 1"#))
        let series = text.split(separator: "\n").filter { $0.hasPrefix("refreshd_failing_instance_streak{") }
        #expect(series.count == 11)
        #expect(text.contains(#"refreshd_failing_instance_streak{job="t.feed",instance="u24"} 25"#))
        #expect(text.contains(#"refreshd_failing_instance_streak{job="t.feed",instance="u15"} 16"#))
        #expect(!text.contains(#"instance="u14""#))
        #expect(text.contains(#"refreshd_failing_instance_streak{job="t.other",instance="x"} 3"#))
        #expect(text.contains("# HELP refreshd_failing_instance_streak "))
        #expect(!text.contains("t.plain"))

        // u24 recovered, u00 now fails most: u24's series goes, u14 enters the top.
        streaks.removeAll { $0.identifier == "t.feed[u24]" || $0.identifier == "t.other[x]" }
        streaks[0].count = 100
        metrics.recordFailingInstances(streaks)
        text = metrics.text()
        #expect(!text.contains(#"instance="u24""#))
        #expect(text.contains(#"refreshd_failing_instance_streak{job="t.feed",instance="u00"} 100"#))
        #expect(text.contains(#"refreshd_failing_instance_streak{job="t.feed",instance="u15"} 16"#))
        #expect(!text.contains(#"instance="u14""#))
        #expect(text.contains(#"refreshd_failing_instances{job="t.feed"} 24"#))
        #expect(text.contains(#"refreshd_failing_instances{job="t.other"} 0"#))
        #expect(text.split(separator: "\n").filter { $0.hasPrefix("refreshd_failing_instance_streak{") }.count == 10)
    }
}
