import Testing
@testable import Refreshd
@testable import RefreshdDaemon
import RefreshdCore
import RefreshdRuntime

/// Instant arithmetic on the way to metrics and reports saturates, whatever reaches it (the
/// socket's bounds refuse such numbers first; these hold without them).
@Suite struct SaturationTests {
    @Test func latenessBeyondInt64NanosecondsSaturates() {
        // 1700 to 2026: 326 years, more nanoseconds than Int64 holds (292 years).
        let late = Instant(milliseconds: 1_800_000_000_000).duration(since: ISO8601.parse("1700-01-01T00:00:00Z")!)
        #expect(MetricsExporter.nanoseconds(late) == Int64.max)
        #expect(MetricsExporter.nanoseconds(.milliseconds(-5)) == 0)
        #expect(MetricsExporter.nanoseconds(.milliseconds(7)) == 7_000_000)
        let metrics = MetricsExporter()
        metrics.record([RuntimeObservation(.launched(LaunchOrder(runID: 1, identifier: "test.old", kind: .processing, started: Instant(milliseconds: 0), deadline: Instant(milliseconds: 60_000), attempt: 1), lateness: late), at: Instant(milliseconds: 0))])
        #expect(metrics.text().contains("refreshd_launch_lateness_seconds"))
    }

    @Test func reloadStatsOfAnyNumberOfDays() {
        let now = Instant(milliseconds: 1_800_000_000_000)
        for days in [Int.min, -1, 0, 1, 3660, 1_000_000_000_000_000, Int.max] {
            let stats = ReloadStats(counters: [], days: days, now: now)
            #expect(stats.to == "2027-01-15")
            #expect(stats.from <= stats.to)
        }
        #expect(ReloadStats(counters: [], days: Int.max, now: now).from == "0001-01-01")
    }
}
