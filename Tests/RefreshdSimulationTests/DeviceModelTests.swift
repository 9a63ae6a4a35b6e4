import Testing
import RefreshdConfig
import RefreshdCore
@testable import RefreshdSimulation

@Suite struct DeviceModelTests {
    @Test func dailyWindowsWrapPastMidnight() {
        let night = DeviceModel.DailyWindow(start: 22 * 60, end: 7 * 60)
        #expect(night.contains(23 * 60))
        #expect(night.contains(3 * 60))
        #expect(!night.contains(12 * 60))
        #expect(!night.contains(7 * 60))
        let day = DeviceModel.DailyWindow(start: 9 * 60, end: 17 * 60)
        #expect(day.contains(9 * 60) && !day.contains(17 * 60) && !day.contains(3 * 60))
    }

    @Test func simulationTimesAreAbsoluteOrFromTheStart() {
        let start = Instant(milliseconds: 1_800_000_000_000)
        #expect(SimulationTime.afterStart(.seconds(60)).instant(start: start) == start + .seconds(60))
        #expect(SimulationTime.at(start).instant(start: .earliest) == start)
    }
}
