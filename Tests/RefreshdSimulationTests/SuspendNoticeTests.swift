import Testing
import RefreshdConfig
import RefreshdCore
import RefreshdRuntime
@testable import RefreshdSimulation

/// A suspend over a slot, with and without the kernel's notice at resume: the runtime's rule
/// (a notice is a change at once; otherwise the next wake-up finds the clocks apart by more than
/// the 1 s tolerance), as `refreshd simulate` runs it.
@Suite struct SuspendNoticeTests {
    /// Asleep 03:00-05:00 on the first day, over the 04:00 slot.
    func firstRunStart(seenAtWakeUp: Bool) throws -> Instant {
        let scenario = Scenario(name: "suspend", jobs: [SimulationTests.nightly(missed: .once)],
                                device: DeviceModel(discretion: .exact),
                                faults: [.suspend(TimeSpan(start: .afterStart(.seconds(3 * 3600)), duration: .seconds(7200)),
                                                  seenAtWakeUp: seenAtWakeUp)],
                                start: SimulationTests.monday, days: 2, seed: 9)
        let report = Simulation(scenario: scenario).run()
        #expect(report.violations.isEmpty, "\(report.violations)")
        #expect(report.jobs[0].figures.success == 2)
        return try #require(report.jobs[0].runs.first).started
    }

    @Test func withTheNoticeTheSlotRunsAtResume() throws {
        #expect(try firstRunStart(seenAtWakeUp: false) == SimulationTests.monday + .seconds(5 * 3600))
    }

    /// The wake-up for 04:00 waited on the monotonic clock, stopped for two hours: 06:00.
    @Test func withoutItTheSlotRunsAtTheNextWakeUpLateByTheSleep() throws {
        #expect(try firstRunStart(seenAtWakeUp: true) == SimulationTests.monday + .seconds(6 * 3600))
    }
}
