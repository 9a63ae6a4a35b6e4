import Foundation
import Testing
import RefreshdConfig
import RefreshdCore
@testable import RefreshdSimulation

/// The report's per-day widget rows are the report's own local days, and together they count
/// exactly what the widget lanes show, in every shipped scenario and in zones east and west of
/// UTC (the rows once were UTC days filed under local labels, and a UTC day with no label was
/// lost: the first day's early hours east of UTC, the last day's late hours west of it).
@Suite struct WidgetDayRowsTests {
    static let scenarios: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Scenarios")

    static var shipped: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: scenarios.path)) ?? [])
            .filter { $0.hasSuffix(".yaml") }.sorted()
    }

    static func load(_ name: String, yaml: String? = nil) throws -> Scenario {
        let path = scenarios.appendingPathComponent(name).path
        let result = yaml.map {
            ScenarioFile.parse(yaml: $0, file: path, defaultStart: Instant(milliseconds: 1_795_392_000_000))
        } ?? ScenarioFile.load(path: path, defaultStart: Instant(milliseconds: 1_795_392_000_000))
        switch result {
        case let .success(scenario): return Scenario(scenario)
        case let .failure(errors): throw errors
        }
    }

    /// The rows' sums against the lanes' marks: provider calls, counted and exempt reloads,
    /// deferrals, and stale minutes (each row rounds to the minute).
    static func checkRowsMatchLanes(_ report: SimulationReport, _ what: String) {
        let rows = report.days.flatMap(\.widgets)
        let marks = report.widgetLanes.flatMap(\.marks)
        func count(_ kinds: Set<String>) -> Int { marks.filter { kinds.contains($0.kind) }.count }
        #expect(rows.reduce(0) { $0 + $1.providerCalls } == count(["reload", "reload-exempt"]), "\(what): provider calls")
        #expect(rows.reduce(0) { $0 + $1.reloadsPerformed } == count(["reload"]), "\(what): reloads performed")
        #expect(rows.reduce(0) { $0 + $1.reloadsExempt } == count(["reload-exempt"]), "\(what): exempt reloads")
        #expect(rows.reduce(0) { $0 + $1.reloadsDeferred } == count(["deferred"]), "\(what): deferrals")
        var staleMilliseconds: Int64 = 0
        for lane in report.widgetLanes {
            // A lane of a template's instances' widgets (issue 23) holds each one's stale spans.
            var since: [String: Instant] = [:]
            for mark in lane.marks {
                let whose = mark.instance ?? ""
                if mark.kind == "stale", since[whose] == nil { since[whose] = mark.at }
                if mark.kind == "fresh", let from = since[whose] {
                    staleMilliseconds += mark.at.milliseconds - from.milliseconds
                    since[whose] = nil
                }
            }
            for from in since.values { staleMilliseconds += report.end.milliseconds - from.milliseconds }
        }
        let rowMinutes = rows.reduce(Int64(0)) { $0 + $1.staleMinutes }
        // Each widget's row rounds to the minute (a folded row holds `instances` of them).
        let rounded = rows.reduce(0) { $0 + ($1.instances ?? 1) }
        #expect(abs(rowMinutes - staleMilliseconds / 60_000) <= Int64(rounded), "\(what): stale minutes \(rowMinutes) in rows, \(staleMilliseconds / 60_000) in lanes")
        let labels = Set(report.days.map(\.date))
        #expect(report.days.count == labels.count, "\(what): one row set per local day")
    }

    /// Each shipped scenario as written, and again with its report in Tokyo and in Los Angeles
    /// (the same instants; only the days the rows are counted on move).
    @Test(arguments: shipped)
    func everyShippedScenarioCountsInItsRowsWhatItsLanesShow(_ name: String) throws {
        let scenario = try Self.load(name)
        Self.checkRowsMatchLanes(Simulation(scenario: scenario).run(), name)
        for zone in ["Asia/Tokyo", "America/Los_Angeles"] {
            var moved = scenario
            moved.timeZone = zone
            Self.checkRowsMatchLanes(Simulation(scenario: moved).run(), "\(name) in \(zone)")
        }
    }

    /// The reproduction: the full-day widget in Tokyo (and in Los Angeles, west of UTC).
    @Test(arguments: [("Asia/Tokyo", "+09:00"), ("America/Los_Angeles", "-08:00")])
    func aZoneAwayFromUTCLosesNoDay(_ zone: String, _ offset: String) throws {
        let text = try String(contentsOf: Self.scenarios.appendingPathComponent("widget-full-day.yaml"), encoding: .utf8)
            .replacingOccurrences(of: "timezone: UTC", with: "timezone: \(zone)")
            .replacingOccurrences(of: "start: 2026-11-23T00:00:00Z", with: "start: 2026-11-23T00:00:00\(offset)")
        let report = Simulation(scenario: try Self.load("widget-full-day.yaml", yaml: text)).run()
        #expect(report.timeZone == zone)
        Self.checkRowsMatchLanes(report, zone)
        let calls = report.days.flatMap(\.widgets).reduce(0) { $0 + $1.providerCalls }
        let reloads = report.widgetLanes.flatMap(\.marks).filter { $0.kind.hasPrefix("reload") }.count
        #expect(calls == reloads && calls >= 8, "\(calls) provider calls in the rows, \(reloads) on the lanes")
        // Each day's rows are that local day's: the first day holds the first timeline (at 00:00 local).
        #expect(report.days.first?.widgets.first?.reloadsPerformed ?? 0 >= 1)
    }
}

/// `budget-scope: namespace`: three kinds of one app share one budget in a whole simulation.
@Suite struct SharedBudgetSimulationTests {
    static func performed(_ report: SimulationReport, day: Int) -> Int {
        report.days[day - 1].widgets.reduce(0) { $0 + $1.reloadsPerformed }
    }

    @Test func threeKindsSharingOneBudgetPerformAtMostItTogether() throws {
        let report = Simulation(scenario: try WidgetDayRowsTests.load("widget-shared-budget.yaml")).run()
        #expect(report.violations.isEmpty, "\(report.violations)")
        #expect(report.passed, "\(report.expectations.filter { !$0.passed })")
        #expect(Self.performed(report, day: 1) == 30)
        #expect(report.days[0].widgets.count == 3)
        #expect(report.days[0].widgets.compactMap(\.budgetLow).min() == 0)
    }

    @Test func theSameKindsWithTheirOwnBudgetsStayFresh() throws {
        let path = WidgetDayRowsTests.scenarios.appendingPathComponent("widget-shared-budget.yaml")
        let text = try String(contentsOf: path, encoding: .utf8).replacingOccurrences(of: "budget-scope: namespace", with: "budget-scope: family")
        let report = Simulation(scenario: try WidgetDayRowsTests.load("widget-shared-budget.yaml", yaml: text)).run()
        #expect(report.violations.isEmpty)
        #expect(Self.performed(report, day: 1) >= 72)
        #expect(report.days[0].widgets.allSatisfy { $0.staleMinutes == 0 })
    }
}
