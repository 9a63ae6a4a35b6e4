import Foundation
import Logging
import Testing
import RefreshdCore
@testable import RefreshdRuntime
@testable import RefreshdStore
@testable import RefreshdSimulation
import RefreshdDaemon

/// `watch` and `stats runs` fold a template's instances (issue 23): one row a template with its
/// counts and its ten most failing instances, never a row per instance; `instance` shows one.
@Suite struct InstanceFoldingTests {
    static let start = Instant(milliseconds: 1_800_000_000_000)

    /// 30 instances of `t.feed` (u00...u29; u00 to u11 fail every run, retried after 10 minutes),
    /// each run once or more on the simulated host; the runtime, for its snapshot.
    static func runtime() throws -> (SimulatedHost, RefreshRuntime) {
        let host = SimulatedHost(start: start) { order, _ in
            let bad = (InstanceName.split(order.identifier)?.key).map { $0 < "u12" } ?? false
            return SimulatedHost.Behaviour(duration: .seconds(1), exit: .exited(bad ? 1 : 0))
        }
        let runtime = try host.start(store: InMemoryStore(),
                                     options: .init(logger: Logger(label: "sim") { _ in SwiftLogNoOpLogHandler() }))
        runtime.declareTemplate(TaskDefinition(identifier: "t.feed", namespace: "t.feed", resubmit: .after(.seconds(86_400)),
                                               retry: RetryPolicy(initial: .seconds(600))),
                                parameters: ["user"], handler: .command(CommandJob(argv: ["/bin/true", "{user}"])))
        let refused = runtime.addInstances((0..<30).map { InstanceRecord(template: "t.feed", key: String(format: "u%02d", $0), values: [:]) })
        #expect(refused.isEmpty)
        runtime.register(TaskDefinition(identifier: "t.plain"), handler: .command(CommandJob(argv: ["/bin/true"])))
        try runtime.submit(TaskRequest(identifier: "t.plain", earliestBeginDate: start + .seconds(3600)))
        host.advance(by: .seconds(60))
        return (host, runtime)
    }

    @Test func watchFoldsATemplatesInstancesIntoOneRowAndNamesTheMostFailing() throws {
        let (host, runtime) = try Self.runtime()
        let lines = WatchView.render(snapshot: runtime.snapshot(), events: [], now: host.clock, width: 200)
        // 30 instances pending (each has its next request or its retry): one row, not 30.
        #expect(lines.filter { $0.contains("t.feed[") }.count == 1, "\(lines)")
        #expect(lines.contains { $0.hasSuffix("t.feed[*]  30 instances pending, next u00") })
        #expect(lines.contains { $0.contains("t.plain") })
        #expect(lines.contains("Templates"))
        #expect(lines.contains("  t.feed  30 instances  30 pending  0 running  12 failing"))
        #expect(lines.contains("    most failing: " + (0..<10).map { String(format: "u%02d (1)", $0) }.joined(separator: ", ")))
        #expect(!lines.contains { $0.contains("u10 (1)") })
    }

    @Test func watchShowsOneInstanceUnfolded() throws {
        let (host, runtime) = try Self.runtime()
        let lines = WatchView.render(snapshot: runtime.snapshot(), events: [], now: host.clock, width: 200, instance: "t.feed[u03]")
        #expect(lines[1] == "instance t.feed[u03]  failing: 1 consecutive failed attempt")
        #expect(lines.contains { $0.contains("t.feed[u03]  app-refresh") })
        #expect(!lines.contains { $0.contains("t.plain") || $0.contains("t.feed[u04]") || $0.contains("[*]") })
        #expect(!lines.contains("Templates"))
    }

    @Test func statsFoldRunsPerTemplateWithTheTenMostFailing() {
        var counts: [(identifier: String, outcome: Outcome, count: Int)] = []
        for n in 0..<25 {
            counts.append(("t.feed[u\(n)]", .success, 3))
            if n >= 5 { counts.append(("t.feed[u\(n)]", .failure, n)) }
        }
        counts.append(("t.feed[u7]", .expired, 100))
        counts.append(("t.plain", .success, 4))
        let stats = RunStats(counts: counts, days: 7, since: Self.start)
        #expect(stats.rows.map(\.identifier) == ["t.feed", "t.plain"])
        let feed = stats.rows[0]
        #expect(feed.instances == 25 && feed.failingInstances == 20)
        #expect(feed.runs == 75 + (5..<25).reduce(0, +) + 100)
        #expect(feed.outcomes == ["success": 75, "failure": (5..<25).reduce(0, +), "expired": 100])
        #expect(feed.mostFailing?.map(\.key) == ["u7", "u24", "u23", "u22", "u21", "u20", "u19", "u18", "u17", "u16"])
        #expect(feed.mostFailing?.first?.failures == 107)
        #expect(stats.lines[1].hasPrefix("  t.feed[*]  25 instances  "))
        #expect(stats.lines[2].hasPrefix("    most failing: u7 (107), u24 (24), "))
        #expect(stats.rows[1] == RunStats.Row(identifier: "t.plain", runs: 4, outcomes: ["success": 4]))

        let one = RunStats(counts: counts, days: 7, since: Self.start, instance: "t.feed[u7]")
        #expect(one.rows == [RunStats.Row(identifier: "t.feed[u7]", runs: 110, outcomes: ["success": 3, "failure": 7, "expired": 100])])
    }

    /// The provider runs of a timeline template's instances' widgets (`T[K]#family`) fold per
    /// template and family (`T[*]#family`), as the instances' own runs do; `instance` keeps an
    /// instance's provider runs in its row. Before, each was a row of its own (issue 23).
    @Test func statsFoldAnInstancesWidgetsProviderRunsPerTemplateAndFamily() {
        var counts: [(identifier: String, outcome: Outcome, count: Int)] = []
        for user in ["alice", "bob", "carol"] {
            counts.append(("t.widget[\(user)]#systemSmall", .success, 2))
            counts.append(("t.widget[\(user)]#systemMedium", .success, 1))
        }
        counts.append(("t.widget[bob]#systemSmall", .failure, 3))
        counts.append(("t.plain.widget#systemSmall", .success, 5))
        let stats = RunStats(counts: counts, days: 7, since: Self.start)
        #expect(stats.rows.map { "\($0.identifier) \($0.family ?? "-")" }
            == ["t.plain.widget#systemSmall -", "t.widget systemMedium", "t.widget systemSmall"], "\(stats.rows)")
        let small = stats.rows[2]
        #expect(small.instances == 3 && small.runs == 9 && small.failingInstances == 1)
        #expect(small.mostFailing == [RunStats.Failing(key: "bob", failures: 3)])
        #expect(stats.lines.contains("  t.widget[*]#systemSmall  3 instances  9 runs: 6 success, 3 failure  1 failing"), "\(stats.lines)")
        let bob = RunStats(counts: counts, days: 7, since: Self.start, instance: "t.widget[bob]")
        #expect(bob.rows.map(\.identifier) == ["t.widget[bob]#systemMedium", "t.widget[bob]#systemSmall"])
    }

    /// `stats reloads` folds the widgets of a template's instances into one row a day per family
    /// (`T[*]`, counts summed, the lowest budget left, the earliest stale instant).
    @Test func reloadStatsFoldInstancesWidgetsPerTemplate() {
        func counter(_ kind: String, _ day: String, performed: Int, low: Int?, staleFrom: Int64?) -> WidgetDayCounter {
            var c = WidgetDayCounter(day: day, widget: WidgetID(kind: kind, family: .systemSmall))
            c.requested = performed + 1
            c.performed = performed
            c.budgetLow = low
            if let staleFrom {
                c.firstStale = Instant(milliseconds: staleFrom)
                c.staleMilliseconds = 600_000
                c.staleReason = .budgetSpent
            }
            return c
        }
        let now = Instant(milliseconds: 1_764_201_600_000)  // 2025-11-27
        let counters = [counter("feed.alice", "2025-11-27", performed: 3, low: 40, staleFrom: nil),
                        counter("feed.bob", "2025-11-27", performed: 5, low: 12, staleFrom: 1_764_205_200_000),
                        counter("plain", "2025-11-27", performed: 1, low: nil, staleFrom: nil),
                        counter("feed.alice", "2025-11-26", performed: 2, low: 45, staleFrom: nil)]
        let stats = ReloadStats(counters: counters, days: 7, now: now)
            .folding(["feed.alice": "t.feed.widget", "feed.bob": "t.feed.widget"])
        #expect(stats.rows.map { "\($0.day) \($0.kind) \($0.instances ?? 0)" }
            == ["2025-11-27 t.feed.widget[*] 2", "2025-11-27 plain 0", "2025-11-26 t.feed.widget[*] 1"], "\(stats.rows)")
        let today = stats.rows[0]
        #expect(today.performed == 8 && today.requested == 10 && today.budgetLow == 12 && today.staleMinutes == 10)
        #expect(today.firstStale == Instant(milliseconds: 1_764_205_200_000) && today.staleReason == .budgetSpent)
        #expect(stats.lines.contains { $0.hasPrefix("2025-11-27  t.feed.widget[*]/systemSmall (2)") }, "\(stats.lines)")
        #expect(ReloadStats(counters: counters, days: 7, now: now).folding([:]) == ReloadStats(counters: counters, days: 7, now: now))
    }
}
