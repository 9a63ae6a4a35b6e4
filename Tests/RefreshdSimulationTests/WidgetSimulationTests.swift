import Foundation
import Testing
import RefreshdConfig
import RefreshdCore
import RefreshdRuntime
@testable import RefreshdSimulation

/// Widget timelines and live activities in whole simulations: modelled providers, the device's
/// reloads, the faults, the report's figures and the end-to-end invariants.
@Suite struct WidgetSimulationTests {
    static let monday = SimulationTests.monday

    static func widget(_ id: String = "test.widget", kind: String = "w", families: [String] = ["systemSmall"], budget: Int? = 50,
                       sharedFetch: Duration = .seconds(300), timeline: TimelineModel, results: [String] = []) -> Scenario.Job {
        let spec = JobSpec(definition: TaskDefinition(identifier: id, kind: .processing, allowance: .seconds(30)),
                           command: CommandJob(argv: ["provider"]),
                           widget: WidgetSpec(kind: kind, families: families, budget: budget, sharedFetch: sharedFetch))
        return Scenario.Job(spec: spec, model: JobModel(duration: .fixed(.seconds(2)), results: results, timeline: timeline))
    }

    static func download(_ id: String = "test.pack", duration: Duration, allowance: Duration, activity: ActivityModel) -> Scenario.Job {
        Scenario.Job(spec: JobSpec(definition: TaskDefinition(identifier: id, kind: .processing, allowance: allowance),
                                   command: CommandJob(argv: ["download"]), firstRequest: .after(.seconds(3600))),
                     model: JobModel(duration: .fixed(duration), activity: activity))
    }

    static func run(_ jobs: [Scenario.Job], device: DeviceModel = DeviceModel(discretion: .exact), faults: [Fault] = [],
                    days: Int = 1, seed: UInt64 = 1) -> SimulationReport {
        Simulation(scenario: Scenario(name: "widgets", jobs: jobs, device: device, faults: faults,
                                      start: monday, days: days, seed: seed)).run()
    }

    @Test func explicitReloadsEveryTwelveMinutesSpendTheBudgetByLateMorning() throws {
        var device = DeviceModel(discretion: .exact)
        device.explicitReloads = .seconds(720)
        let report = Self.run([Self.widget(timeline: TimelineModel(entries: .every(.seconds(3600), count: 1)))], device: device)
        #expect(report.violations.isEmpty, "\(report.violations)")
        let day = try #require(report.days.first?.widgets.first)
        #expect(day.reloadsPerformed == 50)
        #expect(day.reloadsRequested > 100)
        #expect(day.budgetLow == 0)
        let first = try #require(day.firstStale)
        #expect(first > Self.monday + .seconds(8 * 3600) && first < Self.monday + .seconds(12 * 3600))
        #expect(day.staleReason == "budget spent")
        #expect(report.text.contains("stale from day 1 10:00 (budget spent)"))
    }

    @Test func aFullDayTimelineIsNeverStaleAndShowsEachEntryAtItsTime() throws {
        let report = Self.run([Self.widget(timeline: TimelineModel(entries: .timesOfDay([360, 720, 1080, 1320])))], days: 2)
        #expect(report.violations.isEmpty, "\(report.violations)")
        let rows = report.days.flatMap(\.widgets)
        #expect(rows.allSatisfy { $0.staleMinutes == 0 && $0.firstStale == nil })
        #expect(rows.map(\.reloadsPerformed).reduce(0, +) <= 4)
        let shown = report.widgetLanes[0].marks.filter { $0.kind == "shown" }.map(\.at)
        for hour in [6, 12, 18, 22] { #expect(shown.contains(Self.monday + .seconds(Int64(hour) * 3600)), "\(hour):00") }
    }

    @Test func foregroundSessionsAreExemptAndSystemReloadsCount() throws {
        var device = DeviceModel(discretion: .exact)
        device.foreground = [8 * 60, 19 * 60]
        device.systemReloads = .seconds(6 * 3600)
        let report = Self.run([Self.widget(timeline: TimelineModel(entries: .now, policy: .never))], device: device)
        let day = try #require(report.days.first?.widgets.first)
        #expect(day.reloadsExempt == 2)
        #expect(day.reloadsPerformed == 4)  // added to screen, then 06:00, 12:00, 18:00
    }

    @Test func fiveFamiliesCostFiveCallsButOneSharedFetch() throws {
        let families = ["systemSmall", "systemMedium", "systemLarge", "accessoryRectangular", "accessoryCircular"]
        let model = TimelineModel(entries: .every(.seconds(6 * 3600), count: 1))
        let shared = Self.run([Self.widget(families: families, timeline: model)])
        let apart = Self.run([Self.widget(families: families, sharedFetch: .zero, timeline: model)])
        func sum(_ r: SimulationReport, _ f: (SimulationReport.WidgetDay) -> Int) -> Int { r.days[0].widgets.map(f).reduce(0, +) }
        #expect(sum(shared, \.providerCalls) == 20 && sum(apart, \.providerCalls) == 20)
        #expect(sum(shared, \.upstreamFetches) == 4)
        #expect(sum(apart, \.upstreamFetches) == 20)
    }

    @Test func garbageAndAnExpiredProviderAreFailedReloadsThatKeepTheLastTimeline() throws {
        let report = Self.run([Self.widget(timeline: TimelineModel(entries: .every(.seconds(3600), count: 1)))],
                              faults: [.providerGarbage(job: "test.widget", run: 2, span: nil),
                                       .providerExpires(job: "test.widget", run: 4)])
        #expect(report.violations.isEmpty, "\(report.violations)")
        let failed = report.widgetLanes[0].marks.filter { $0.kind == "failed" }.map(\.detail)
        #expect(failed.count == 2)
        #expect(failed[0].hasPrefix("malformed timeline"))
        #expect(failed[1].contains("expired"))
        #expect(report.days[0].widgets[0].staleMinutes == 30)  // each retried 15 minutes later
    }

    @Test func anEmptyBudgetDefersReloadsToTheEndOfTheSpan() throws {
        let report = Self.run([Self.widget(timeline: TimelineModel(entries: .every(.seconds(3600), count: 1)))],
                              faults: [.budgetEmpty(TimeSpan(start: .afterStart(.seconds(12 * 3600 + 60)), duration: .seconds(3 * 3600)))])
        #expect(report.violations.isEmpty, "\(report.violations)")
        let row = report.days[0].widgets[0]
        #expect(row.reloadsDeferred == 1)
        #expect(row.staleReason == "budget spent")
        // The 13:00 reload is deferred; the budget comes back at 15:01 and the reload happens then.
        #expect(row.staleMinutes == 121)
    }

    @Test func aPublishedEntryNoProviderModelReturnedIsAViolation() {
        // A timeline line ahead of the model's: the machine takes the first one, so the widget
        // shows an entry the modelled provider never returned.
        let forged = #"{"entries": [{"date": "2026-11-23T00:00:00Z", "content": {"asset": "forged"}}], "policy": "never"}"#
        let report = Self.run([Self.widget(timeline: TimelineModel(), results: [forged])])
        #expect(report.violations.first?.invariant == "widget-entry-returned")
        #expect(report.violations.first?.message.contains("forged") == true)
    }

    @Test func aJobDrivesItsActivityWhileItRunsAndItsExpiryEndsIt() throws {
        let activity = ActivityModel(type: "Pack", id: "pack-{run}", updates: .seconds(600), staleAfter: .seconds(900))
        let ok = Self.run([Self.download(duration: .seconds(1800), allowance: .seconds(3600), activity: activity)])
        #expect(ok.violations.isEmpty, "\(ok.violations)")
        let lane = try #require(ok.activityLanes.first)
        #expect(lane.steps.map(\.to) == ["active", "ended", "dismissed"])
        #expect(lane.steps[1].at == Self.monday + .seconds(3600 + 1800))
        #expect(ok.days[0].activities.first?.state == "dismissed")

        let expired = Self.run([Self.download(duration: .seconds(7200), allowance: .seconds(1800), activity: activity)])
        let steps = try #require(expired.activityLanes.first?.steps)
        #expect(steps[1].cause == "owner-failed")
        #expect(steps[1].at == Self.monday + .seconds(3600 + 1800))
    }

    @Test func aSilentJobLeavesItsActivityToGoStale() throws {
        let activity = ActivityModel(type: "Pack", id: "pack-{run}", updates: .seconds(300), end: .default, staleAfter: .seconds(900))
        let report = Self.run([Self.download(duration: .seconds(3600), allowance: .seconds(7200), activity: activity)],
                              faults: [.activitySilent(job: "test.pack", run: 1, after: .seconds(1200))])
        #expect(report.violations.isEmpty, "\(report.violations)")
        let steps = try #require(report.activityLanes.first?.steps)
        #expect(steps.map(\.to) == ["active", "stale", "ended", "dismissed"])
        #expect(steps[1].at == Self.monday + .seconds(3600 + 1200 + 900))
        #expect(steps[2].cause == "active-limit")
    }

    @Test func widgetsAndActivitiesRepeatByteForByte() throws {
        var device = DeviceModel(discretion: .delayed(maximum: .seconds(900)))
        device.explicitReloads = .seconds(1800)
        device.foreground = [9 * 60]
        let jobs = [SimulationTests.refresh(model: JobModel(duration: .uniform(.seconds(1), .seconds(40)),
                                                           outcomes: .init(success: 0.7, failure: 0.3))),
                    Self.widget(families: ["systemSmall", "systemMedium"], timeline: TimelineModel(entries: .timesOfDay([360, 1080]))),
                    Self.download(duration: .seconds(1800), allowance: .seconds(3600),
                                  activity: ActivityModel(type: "Pack", id: "pack-{run}", updates: .seconds(600)))]
        let faults: [Fault] = [.kill(at: .afterStart(.seconds(30_000)), restartAfter: .seconds(900)),
                               .budgetEmpty(TimeSpan(start: .afterStart(.seconds(90_000)), duration: .seconds(7200))),
                               .providerGarbage(job: "test.widget", run: nil, span: TimeSpan(start: .afterStart(.seconds(150_000)), duration: .seconds(36_000)))]
        func run(_ seed: UInt64) throws -> Data {
            let report = Self.run(jobs, device: device, faults: faults, days: 3, seed: seed)
            #expect(report.violations.isEmpty, "\(report.violations)")
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            return try encoder.encode(report) + Data(SimulationPicture.svg(report).utf8)
        }
        let first = try run(21)
        #expect(try run(21) == first)
        #expect(try run(22) != first)
        let text = String(decoding: first, as: UTF8.self)
        #expect(text.contains("\"reloads_requested\"") && text.contains("\"transitions\""))
        #expect(text.contains("widget w/systemMedium") && text.contains("activity pack-1"))
    }
}
