import Testing
@testable import RefreshdCore
@testable import RefreshdRuntime
import RefreshdDaemon

/// Instances' widgets folded per template (issue 23) in `status` and `watch`: one line a
/// template with counts, a job's own widget unfolded, `watch --instance` that instance's only.
@Suite struct InstanceWidgetFoldTests {
    static let now = Instant(milliseconds: 1_800_000_000_000)

    static func widget(_ kind: String, job: String, left: Int?, stale: Bool = false) -> TimelineSnapshot.Widget {
        TimelineSnapshot.Widget(kind: kind, family: .systemSmall, job: job, shown: nil, shownSince: nil, nextEntrySwitch: nil,
                                entries: 0, policy: nil, nextReload: nil, nextReloadWhy: .onRequest, providerRunningSince: nil,
                                budgetLimit: left.map { _ in 10 }, budgetUsed: left.map { 10 - $0 }, budgetLeft: left,
                                windowSeconds: 86_400, staleSince: stale ? now : nil, staleReason: stale ? .budgetSpent : nil,
                                staleSpans: [], lastSuccess: nil, lastFailure: nil)
    }

    static let snapshot = TimelineSnapshot(at: now, widgets: [
        widget("dayparts", job: "app.dayparts", left: 9),
        widget("feed.alice", job: "t.feed[alice]", left: 4),
        widget("feed.bob-at-x", job: "t.feed[bob@x]", left: 0, stale: true),
        widget("feed.carol", job: "t.feed[carol]", left: 7),
    ], nextDeadline: nil)

    @Test func instancesWidgetsAreOneLineATemplate() {
        let (rows, folds) = InstanceWidgetFold.fold(Self.snapshot.widgets)
        #expect(rows.map(\.kind) == ["dayparts"])
        #expect(folds.map(\.line) == ["t.feed[*]  3 instances, 3 widgets  1 stale  0 reloading  lowest budget left 0 "
            + "(feed.bob-at-x/systemSmall)  stale: feed.bob-at-x/systemSmall"])
        let status = MachineStatusText.widgets(Self.snapshot, now: Self.now)
        #expect(status.first == "Widgets (4):")
        #expect(status.filter { $0.hasPrefix("  ") && !$0.hasPrefix("    ") } == ["  dayparts/systemSmall  (job app.dayparts)", "  " + folds[0].line])
    }

    @Test func watchFoldsThemAndShowsOneInstancesUnfolded() {
        let snapshot = SchedulerSnapshot(pending: [], runs: [], failureStreaks: [], nextWakeUp: nil, isStopping: false, stopped: false,
                                         conditions: Conditions(), watchingConditions: false, nextRunID: 1, nextSequence: 1)
        let all = WatchView.render(snapshot: snapshot, events: [], now: Self.now, timelines: Self.snapshot, width: 200)
        #expect(all.contains { $0.hasPrefix("  t.feed[*]  3 instances, 3 widgets") })
        #expect(!all.contains { $0.hasPrefix("  feed.alice/") })
        let one = WatchView.render(snapshot: snapshot, events: [], now: Self.now, timelines: Self.snapshot, width: 200,
                                   instance: "t.feed[alice]")
        #expect(one.contains { $0.hasPrefix("  feed.alice/systemSmall  budget") })
        #expect(!one.contains { $0.contains("t.feed[*]") || $0.contains("dayparts") })
    }
}
