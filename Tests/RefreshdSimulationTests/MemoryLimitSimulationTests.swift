import Testing
import RefreshdConfig
import RefreshdCore
import RefreshdRuntime
@testable import RefreshdSimulation

/// Issue 35: a modelled run whose `simulate.memory` is over its job's `limits.memory` is killed
/// by the limit and ends `crashed`, as in production (the simulated host reports the kill, the
/// core decides); under the limit, or without one, it runs as modelled.
@Suite struct MemoryLimitSimulationTests {
    static func simulation(limit: Int64?, peak: Int64) -> Simulation {
        var command = CommandJob(argv: ["fetch"])
        command.limits.memoryBytes = limit
        var model = JobModel(duration: .fixed(.seconds(5)))
        model.memoryBytes = peak
        let job = Scenario.Job(spec: JobSpec(definition: TaskDefinition(identifier: "test.hungry", kind: .processing,
                                                                         allowance: .seconds(60),
                                                                         resubmit: .after(.seconds(3600))),
                                             command: command),
                               model: model)
        let scenario = Scenario(name: "memory limit", jobs: [job], device: DeviceModel(discretion: .exact),
                                start: SimulationTests.monday, days: 1, seed: 1)
        return Simulation(scenario: scenario)
    }

    @Test func overItsLimitEveryRunCrashes() throws {
        let simulation = Self.simulation(limit: 64 << 20, peak: 300 << 20)
        let report = simulation.run()
        #expect(report.violations.isEmpty, "\(report.violations)")
        let figures = report.jobs[0].figures
        #expect(figures.launched > 0 && figures.crashed == figures.launched && figures.success == 0, "\(figures)")
        // Kept with each run as production keeps it: the reason, and the peak the limit allowed.
        let runs = try simulation.store.recentRuns(limit: 1000)
        #expect(runs.count == figures.launched)
        #expect(runs.allSatisfy { $0.reason == "memory limit" && $0.usage.peakMemoryBytes == 64 << 20 }, "\(runs)")
    }

    @Test func underItsLimitOrWithoutOneItSucceeds() {
        for limit in [Int64(512 << 20), nil] {
            let figures = Self.simulation(limit: limit, peak: 300 << 20).run().jobs[0].figures
            #expect(figures.launched > 0 && figures.success == figures.launched, "\(figures)")
        }
    }
}
