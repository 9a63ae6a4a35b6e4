import Foundation
import Testing
@testable import Refreshd
import RefreshdCore
import RefreshdRuntime

/// Widget timelines and live activities through the runtime, on both hosts: real provider
/// processes writing timelines to fd 3 under libuv, modelled ones in virtual time.
@Suite(.serialized) struct MachinesBothHostsTests {
    /// A widget in two families whose provider returns "a" (shown now) then "b" (in a second),
    /// policy atEnd, with a budget of 3 reloads a day.
    private func widget(_ h: HostHarness, budget: Int = 3) {
        let spec = JobSpec(definition: TaskDefinition(identifier: "t.widget", kind: .processing, allowance: .seconds(5)),
                           command: CommandJob(argv: ["/bin/true"]),
                           widget: WidgetSpec(kind: "w", families: ["systemSmall", "systemMedium"], budget: budget,
                                              minReloadInterval: .zero))
        let timeline = #"{"entries": [{"date": "{+-1}", "content": {"asset": "a"}}, {"date": "{+1}", "content": {"asset": "b"}}], "policy": "atEnd"}"#
        h.spec(spec, Work(results: [timeline]))
    }

    private func widgets(_ h: HostHarness) -> [TimelineSnapshot.Widget] { h.runtime.timelineSnapshot().widgets }

    @Test(arguments: HostKind.allCases)
    func entriesArePublishedAndTheBudgetDefersWithAStaleSpan(_ kind: HostKind) throws {
        let h = try HostKind.harness(kind)
        defer { h.finish() }
        widget(h)
        try h.start()
        // First timelines (reason: added to screen), entry "a" shown in both families.
        #expect(h.wait(.seconds(5)) { widgets(h).count == 2 && widgets(h).allSatisfy { $0.shown?.content == #"{"asset":"a"}"# } })
        #expect(h.wait(.seconds(5)) { h.published("widgets/w/systemMedium.json")?.contains(#""asset":"a""#) == true })
        // At its date "b" is shown without asking the provider; atEnd then reloads, until the
        // budget of 3 is spent: the fourth reload is deferred and the widget is stale.
        #expect(h.wait(.seconds(12)) { widgets(h).allSatisfy { $0.staleReason == .budgetSpent } })
        for w in widgets(h) {
            #expect(w.budgetUsed == 3 && w.budgetLeft == 0, "\(w)")
            let ledgerStart = try #require(h.runs().first { $0.identifier == "t.widget#\(w.family.rawValue)" }?.started)
            // Deferred to the exact instant the window frees a slot: the first counted reload + 24 h.
            #expect(w.nextReload.map { abs($0.milliseconds - (ledgerStart + .seconds(86_400)).milliseconds) < 1000 } == true,
                    "\(String(describing: w.nextReload)) vs \(ledgerStart)")
        }
        #expect(h.wait(.seconds(5)) { h.published("widgets/w/systemSmall.json")?.contains(#""asset":"b""#) == true })
        let providerRuns = h.runs().filter { $0.identifier.hasPrefix("t.widget#") }
        #expect(providerRuns.count == 6, "\(providerRuns.map(\.identifier))")
        #expect(providerRuns.allSatisfy { $0.outcome == .success })
        #expect(h.runtime.checkTimelineInvariants().isEmpty)

        // Everything persists: after a restart the widgets are still stale with their budget spent.
        try h.restart(downtime: .milliseconds(100))
        #expect(h.wait(.seconds(5)) { widgets(h).count == 2 && widgets(h).allSatisfy { $0.staleReason == .budgetSpent && $0.budgetUsed == 3 } })
        #expect(h.runs().filter { $0.identifier.hasPrefix("t.widget#") }.count == 6, "no reload after a restart while over budget")
    }

    @Test(arguments: HostKind.allCases)
    func aMalformedTimelineIsAFailedReloadAndTheLastGoodOneStays(_ kind: HostKind) throws {
        let h = try HostKind.harness(kind)
        defer { h.finish() }
        let spec = JobSpec(definition: TaskDefinition(identifier: "t.bad", kind: .processing),
                           command: CommandJob(argv: ["/bin/true"]),
                           widget: WidgetSpec(kind: "bad", families: ["systemSmall"], budget: 10))
        h.spec(spec, Work(results: [#"{"entries": [{"date": "yesterday"}], "policy": "atEnd"}"#]))
        try h.start()
        #expect(h.wait(.seconds(5)) { widgets(h).first?.staleReason == .providerFailed })
        #expect(widgets(h).first?.shown == nil)
        #expect(h.published("widgets/bad/systemSmall.json") == nil)
    }

    @Test(arguments: HostKind.allCases)
    func aJobDrivesAnActivityAndItsFailureEndsIt(_ kind: HostKind) throws {
        let h = try HostKind.harness(kind)
        defer { h.finish() }
        h.job(TaskDefinition(identifier: "t.download", kind: .processing),
              Work(duration: .milliseconds(300), exit: 1, results: [
                  #"{"activity": "start", "id": "pack-1", "type": "WallpaperPack", "content": {"progress": 0}}"#,
                  #"{"activity": "update", "id": "pack-1", "content": {"progress": 0.5}, "timestamp": "{+0}"}"#,
              ]))
        try h.start()
        try h.runtime.submit(TaskRequest(identifier: "t.download", kind: .processing))
        #expect(h.wait(.seconds(5)) { h.outcomes("t.download") == [.failure] })
        #expect(h.wait(.seconds(2)) { h.runtime.activitySnapshot().activities.first?.state == .ended })
        let activity = try #require(h.runtime.activitySnapshot().activities.first)
        #expect(activity.progressPercent == 50)
        #expect(activity.dismissal.map { $0.duration(since: activity.since) } == .seconds(4 * 3600))
        #expect(h.wait(.seconds(2)) { h.published("activities/pack-1.json")?.contains("failure") == true })
        #expect(h.runtime.checkActivityInvariants().isEmpty)
    }

    @Test(arguments: HostKind.allCases)
    func anInterruptedRunLeavesItsActivityToTheRetry(_ kind: HostKind) throws {
        let h = try HostKind.harness(kind)
        defer { h.finish() }
        h.job(TaskDefinition(identifier: "t.slow", kind: .processing),
              Work(duration: .seconds(30), results: [
                  #"{"activity": "start", "id": "slow-1", "type": "Build", "content": {"progress": 0.2}}"#,
              ]))
        try h.start()
        try h.runtime.submit(TaskRequest(identifier: "t.slow", kind: .processing))
        // libuv applies the start live; the simulated host delivers results at the run's end, so
        // there the start comes with the interruption itself: either way the activity is live.
        if kind == .libuv { #expect(h.wait(.seconds(3)) { h.runtime.activitySnapshot().activities.first?.state == .active }) }
        h.pass(.milliseconds(100))
        try h.restart(downtime: .milliseconds(50))  // refreshd stops mid-run: interrupted, not failed
        #expect(h.outcomes("t.slow").first == .interrupted)
        if kind == .libuv {
            #expect(h.wait(.seconds(2)) { h.runtime.activitySnapshot().activities.first?.state == .active },
                    "an interruption is refreshd's doing: the activity stays for the retried job")
        }
        #expect(h.runtime.activitySnapshot().activities.allSatisfy { $0.state != .ended })
    }

    @Test func liveLinesReachTheActivityWhileTheCommandRuns() throws {
        let h = try HostKind.harness(.libuv)
        defer { h.finish() }
        h.job(TaskDefinition(identifier: "t.long", kind: .processing),
              Work(duration: .seconds(3), results: [
                  #"{"activity": "start", "id": "long-1", "type": "Build", "content": {"progress": 0.1}}"#,
              ]))
        try h.start()
        try h.runtime.submit(TaskRequest(identifier: "t.long", kind: .processing))
        #expect(h.wait(.seconds(2)) { h.runtime.activitySnapshot().activities.first?.state == .active })
        #expect(h.runs().last?.ended == nil, "the activity started while its job still runs")
    }
}

/// A job without a command (an API caller's mistake) is a failed start on both hosts, never a
/// crash of the loop.
@Suite(.serialized) struct EmptyCommandTests {
    @Test(arguments: HostKind.allCases)
    func anEmptyCommandIsAFailedStart(_ kind: HostKind) throws {
        let h = try HostKind.harness(kind)
        defer { h.finish() }
        try h.start()
        h.runtime.register(TaskDefinition(identifier: "t.empty"), handler: .command(CommandJob(argv: [])))
        try h.runtime.submit(TaskRequest(identifier: "t.empty"))
        #expect(h.wait(.seconds(3)) { h.outcomes("t.empty") == [.failure] })
    }
}
