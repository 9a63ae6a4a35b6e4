import Foundation
import RefreshdCore
import RefreshdRuntime
import Testing
@testable import RefreshdConfig

/// `simulate: {timeline:, activity:}`, the device's widget keys, the widget and activity faults
/// and expectations of scenario files: read into values, or refused with located errors.
@Suite struct SimulateSideModelsTests {
    static let timelineJob = """
        start: 2026-11-23T00:00:00Z
        jobs:
          - identifier: test.widget
            kind: timeline
            command: ["/bin/true"]
            widget: {kind: w, families: [systemSmall]}
            simulate:
              timeline: TIMELINE
          - identifier: test.pack
            kind: processing
            command: ["/bin/true"]
            simulate:
              activity: ACTIVITY

        """

    static func scenario(timeline: String = "{entries: now}", activity: String = "{type: Pack, id: p}", rest: String = "") -> String {
        timelineJob.replacingOccurrences(of: "TIMELINE", with: timeline).replacingOccurrences(of: "ACTIVITY", with: activity) + rest
    }

    func parsed(_ yaml: String, sourceLocation: SourceLocation = #_sourceLocation) -> ScenarioConfig? {
        switch ScenarioFileTests.parse(yaml) {
        case .success(let s): return s
        case .failure(let errors):
            Issue.record("expected a scenario, got:\n\(errors)", sourceLocation: sourceLocation)
            return nil
        }
    }

    func errors(_ yaml: String) -> [String] {
        switch ScenarioFileTests.parse(yaml) {
        case .success: return []
        case .failure(let errors): return errors.errors.map(\.description)
        }
    }

    @Test func timelineModelsReadEveryForm() throws {
        let days = try #require(parsed(Self.scenario(timeline: #"{entries: ["06:00", "18:30"], policy: at-end, upstream-fetch: false}"#)))
        #expect(days.jobs[0].simulate?.timeline == TimelineModel(entries: .timesOfDay([360, 1110]), policy: .atEnd, upstreamFetch: false))
        let hourly = try #require(parsed(Self.scenario(timeline: "{every: 1h, count: 2, policy: {after: tomorrow}}")))
        #expect(hourly.jobs[0].simulate?.timeline == TimelineModel(entries: .every(.seconds(3600), count: 2), policy: .afterTomorrow))
        let never = try #require(parsed(Self.scenario(timeline: "{entries: now, policy: never}")))
        #expect(never.jobs[0].simulate?.timeline?.policy == .never)
        let after = try #require(parsed(Self.scenario(timeline: "{policy: {after: 6h}}")))
        #expect(after.jobs[0].simulate?.timeline?.policy == .after(.seconds(6 * 3600)))
    }

    @Test func badTimelineModelsNameWhatWasExpected() {
        #expect(errors(Self.scenario(timeline: "{entries: [\"25:00\"]}")).contains { $0.contains("simulate.timeline.entries: expected a time of day like \"22:00\"") })
        #expect(errors(Self.scenario(timeline: "{entries: now, every: 1h}")).contains { $0.contains("expected either entries: or every: (with count:), found both") })
        #expect(errors(Self.scenario(timeline: "{policy: at-start}")).contains { $0.contains("policy: expected at-end, never or {after: tomorrow}") })
        #expect(errors(Self.scenario(timeline: "{every: 1h, count: 0}")).contains { $0.contains("count: expected a whole number from 1 to 500") })
    }

    @Test func activityModelsReadAndRefuse() throws {
        let s = try #require(parsed(Self.scenario(activity: "{type: Pack, id: \"p-{run}\", updates: 10m, progress: 0.2..0.9, end: {after: 1h}, stale-after: 15m, priority: high}")))
        #expect(s.jobs[1].simulate?.activity == ActivityModel(type: "Pack", id: "p-{run}", updates: .seconds(600), progress: 0.2...0.9,
                                                          end: .after(.seconds(3600)), staleAfter: .seconds(900), highPriority: true))
        #expect(errors(Self.scenario(activity: "{type: Pack, id: \"a b\"}")).contains { $0.contains("simulate.activity.id: expected letters, digits") })
        #expect(errors(Self.scenario(activity: "{type: Pack, id: p, progress: 1..0}")).contains { $0.contains("expected a range like 0..1 (low..high), found \"1..0\"") })
        #expect(errors(Self.scenario(activity: "{type: Pack, id: p, end: later}")).contains { $0.contains("end: expected default, immediate, none or {after: 1h}") })
        #expect(errors(Self.scenario(activity: "{id: p}")).contains { $0.contains("missing required key \"type\"") })
    }

    @Test func theDeviceReadsForegroundReloadsAndTheBudget() throws {
        let s = try #require(parsed(Self.scenario(rest: """
            device: {foreground: ["08:00", "19:30"], system-reloads: {every: 6h}, reloads: {every: 12m}, widget-budget: 40}

            """)))
        #expect(s.device.foreground == [480, 1170])
        #expect(s.device.systemReloads == .seconds(6 * 3600))
        #expect(s.device.explicitReloads == .seconds(720))
        #expect(s.device.widgetBudget == 40)
        #expect(errors(Self.scenario(rest: "device: {reloads: {every: 10s}}\n")).contains { $0.contains("device.reloads.every: expected a duration of at least 1m, found \"10s\"") })
        #expect(errors(Self.scenario(rest: "device: {widget-budget: -1}\n")).contains { $0.contains("expected a budget from 0 to 1440 reloads a day") })
    }

    @Test func widgetAndActivityFaultsAndExpectationsRead() throws {
        let s = try #require(parsed(Self.scenario(rest: """
            faults:
              - provider-garbage: {job: test.widget, run: 3}
              - provider-garbage: {job: test.widget, at: +1d, for: 2h}
              - provider-expires: {job: test.widget, run: 2}
              - budget-empty: {at: +12h, for: 3h}
              - activity-silent: {job: test.pack, run: 1, after: 20m}
            expect:
              - widget: {kind: w, family: systemSmall, day: 1, stale-minutes: {at-least: 600}}
              - widget: {kind: w, first-stale: never}
              - widget: {kind: w, first-stale: {before: "12:00"}}
              - activity: {id: p, state: ended, cause: active-limit, after: {equal: 8h}}
              - activity: {id: p, final: dismissed}

            """)))
        #expect(s.faults.count == 5)
        #expect(s.faults[0] == .providerGarbage(job: "test.widget", run: 3, span: nil))
        #expect(s.faults[4] == .activitySilent(job: "test.pack", run: 1, after: .seconds(1200)))
        #expect(s.expectations.count == 5)
        #expect(s.expectations[1] == .widgetFirstStale(kind: "w", family: nil, day: nil, before: nil))
    }

    @Test func badFaultsAndExpectationsAreLocatedAndSayWhatWasExpected() {
        let e = errors(Self.scenario(rest: """
            faults:
              - provider-garbage: {job: test.widget}
              - provider-expires: {job: test.nope, run: 1}
            expect:
              - widget: {kind: w, stale-minutes: {at-least: 1}, reloads-deferred: {equal: 0}}
              - widget: {kind: w, family: systemHuge, stale-minutes: {equal: 0}}
              - activity: {id: p, state: gone}

            """))
        #expect(e.contains { $0.contains("provider-garbage: expected run: N or at: and for:") })
        #expect(e.contains { $0.contains("test.nope") })
        #expect(e.contains { $0.contains("widget: expected exactly one of") && $0.contains("found 2") })
        #expect(e.contains { $0.contains("widget.family: expected one of systemSmall") })
        #expect(e.contains { $0.contains("activity.state: expected one of pending, active") })
        #expect(e.allSatisfy { $0.hasPrefix("Tests/Scenarios/test.yaml:") })
    }
}
