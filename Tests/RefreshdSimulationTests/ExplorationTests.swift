import Testing
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

    @Test func withoutTheDefectEveryPlanHoldsItsInvariants() {
        for report in ParallelRuns.run(Self.plans(injected: false)) {
            #expect(report.violations.isEmpty, "seed \(report.seed): \(report.violations)")
        }
    }

    @Test func plansAreAFunctionOfTheSeed() {
        let a = FaultPlan.random(seed: 77, days: 30, jobs: ["a", "b"])
        #expect(a == FaultPlan.random(seed: 77, days: 30, jobs: ["a", "b"]))
        #expect(a != FaultPlan.random(seed: 78, days: 30, jobs: ["a", "b"]))
        #expect((1...5).contains(a.count))
    }
}
