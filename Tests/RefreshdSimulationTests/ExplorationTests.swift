import Foundation
import Testing
import RefreshdConfig
import RefreshdCore
import RefreshdRuntime
@testable import RefreshdSimulation

/// Exploration finds a defect put in on purpose, reports the seed, and the seed reproduces it;
/// without the defect the same plans pass.
@Suite struct ExplorationTests {
    static func plans(injected: Bool) -> [Scenario] {
        let jobs = [SimulationTests.nightly(missed: .once), SimulationTests.refresh()]
        return (1...24).map { seed in
            var s = Scenario(name: "plan \(seed)", jobs: jobs, start: SimulationTests.monday, days: 3, seed: UInt64(seed))
            s.faults = FaultPlan.random(seed: UInt64(seed), days: 3, jobs: jobs.map(\.spec.identifier))
            s.hooks.losePendingAfterKill = injected
            return s
        }
    }

    @Test func exploreFindsALostCommitAndItsSeedReproducesIt() throws {
        let reports = ParallelRuns.run(Self.plans(injected: true))
        let failing = reports.filter { !$0.violations.isEmpty }
        #expect(!failing.isEmpty, "24 plans and none found the injected defect")
        let first = try #require(failing.first)
        #expect(first.violations[0].invariant == "nothing-lost-across-kill")
        #expect(first.faults.contains { $0.kind == "kill" })
        // The seed alone reproduces the same failure, byte for byte.
        let again = Simulation(scenario: Self.plans(injected: true).first { $0.seed == first.seed }!).run()
        #expect(again == first)
    }

    /// The simulator leaves the per-run events (submitted, launched, finished) off and runs a
    /// failing scenario again with them on: its report is the one a run with them on all along
    /// gives, and the events before the violation include them.
    @Test func aViolationIsReportedWithThePerRunEventsBeforeIt() throws {
        let failing = try #require(Self.plans(injected: true).first { !Simulation(scenario: $0).run().violations.isEmpty })
        let reported = Simulation(scenario: failing).run()
        let withEvents = Simulation(scenario: failing)
        withEvents.routineEvents = true
        #expect(reported == withEvents.run())
        let recent = try #require(reported.violations.first).recent
        #expect(recent.contains { $0.contains(" launched ") }, "\(recent)")
    }

    /// Real commands (`simulate --exec`) are not run a second time: with them, the per-run events
    /// are on from the start.
    @Test func realCommandsAreObservedWithThePerRunEventsFromTheStart() {
        let scenario = Self.plans(injected: false)[0]
        #expect(!Simulation(scenario: scenario).routineEvents)
        #expect(Simulation(scenario: scenario, real: NoCommands()).routineEvents)
    }

    /// Real commands that never run: only their presence matters here.
    final class NoCommands: RealCommands {
        func start(_ order: LaunchOrder, _ job: CommandJob, environment: [String], instance: String,
                   host: any RealCommandsHost) -> CommandStart { .failed("not run") }
        func signal(runID: Int64, _ signal: RunSignal) {}
        func killGroup(runID: Int64) {}
        func closeResults(runID: Int64) {}
        func sweep(_ run: RunRecord, instance: String) -> [Int32] { [] }
        func reapLeftovers(of runs: [RunRecord], instance: String) -> [(RunRecord, [Int32])] { [] }
        var virtualNow: Instant? { nil }
        func wait(until instant: Instant?, from clock: Instant) -> Bool { false }
        func shift(by delta: Duration) {}
    }

    /// Passing runs never read the per-run events: with them on or off, the same report.
    @Test func thePerRunEventsChangeNoPassingReport() {
        for plan in Self.plans(injected: false).prefix(8) {
            let withEvents = Simulation(scenario: plan)
            withEvents.routineEvents = true
            #expect(Simulation(scenario: plan).run() == withEvents.run(), "seed \(plan.seed)")
        }
    }

    @Test func withoutTheDefectEveryPlanHoldsItsInvariants() {
        for report in ParallelRuns.run(Self.plans(injected: false)) {
            #expect(report.violations.isEmpty, "seed \(report.seed): \(report.violations)")
        }
    }

    /// Workers that build their own base (so threads share no strings) give, in plan order,
    /// the reports each plan gives alone; each worker builds its base once.
    @Test func workersWithTheirOwnBaseGiveThePlansReportsInOrder() {
        let bases = Counter()
        let reports = ParallelRuns.run(count: 12, keepRuns: true, base: { () -> [Scenario] in
            bases.increment()
            return Self.plans(injected: false)
        }, plan: { own, i in own[i] })
        let alone = Self.plans(injected: false).prefix(12).map { Simulation(scenario: $0).run() }
        #expect(reports == Array(alone))
        #expect((1...max(1, ProcessInfo.processInfo.activeProcessorCount)).contains(bases.value))
    }

    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func increment() { lock.withLock { count += 1 } }
        var value: Int { lock.withLock { count } }
    }

    @Test func plansAreAFunctionOfTheSeed() {
        let a = FaultPlan.random(seed: 77, days: 30, jobs: ["a", "b"])
        #expect(a == FaultPlan.random(seed: 77, days: 30, jobs: ["a", "b"]))
        #expect(a != FaultPlan.random(seed: 78, days: 30, jobs: ["a", "b"]))
        #expect((1...5).contains(a.count))
    }

    static let sideLabels: Set<String> = ["provider-garbage", "provider-expires", "budget-empty", "activity-silent", "widget-intents", "low-power"]

    @Test func widgetAndActivityFaultsAreDrawnWhenThereAreSuchJobs() {
        let plain = (1...300).flatMap { FaultPlan.random(seed: UInt64($0), days: 10, jobs: ["a", "b"]) }
        #expect(!plain.contains { Self.sideLabels.contains($0.label) })
        let rich = (1...300).flatMap {
            FaultPlan.random(seed: UInt64($0), days: 10, jobs: ["a", "w"], widgetJobs: ["w"], activityJobs: ["a"])
        }
        for label in Self.sideLabels { #expect(rich.contains { $0.label == label }, "no \(label) in 300 plans") }
        let widgetsOnly = (1...300).flatMap { FaultPlan.random(seed: UInt64($0), days: 10, jobs: ["w"], widgetJobs: ["w"]) }
        #expect(!widgetsOnly.contains { $0.label == "activity-silent" })
        #expect(widgetsOnly.contains { $0.label == "budget-empty" })
    }

    /// Plans drawn against a widget and an activity-driving job hold every invariant (the
    /// side machines' and the end-to-end ones) through their faults.
    @Test func plansWithWidgetAndActivityFaultsHoldTheInvariants() {
        let jobs = [
            WidgetSimulationTests.widget(timeline: TimelineModel(entries: .every(.seconds(3600), count: 4))),
            WidgetSimulationTests.download(duration: .seconds(1800), allowance: .seconds(3600),
                                           activity: ActivityModel(type: "Pack", id: "pack-{run}", updates: .seconds(300),
                                                                   staleAfter: .seconds(900))),
        ]
        let plans = (1...16).map { seed in
            var s = Scenario(name: "plan \(seed)", jobs: jobs, device: DeviceModel(discretion: .exact),
                             start: SimulationTests.monday, days: 2, seed: UInt64(seed))
            s.faults = FaultPlan.random(seed: UInt64(seed), days: 2, jobs: ["test.widget", "test.pack"],
                                        widgetJobs: ["test.widget"], activityJobs: ["test.pack"])
            return s
        }
        #expect(plans.flatMap(\.faults).contains { Self.sideLabels.contains($0.label) })
        for report in ParallelRuns.run(plans) {
            #expect(report.violations.isEmpty, "seed \(report.seed): \(report.violations)")
        }
    }
}
