import Testing
@testable import RefreshdSimulation

/// The picture's layout rules (what it draws is checked in `SimulationTests` and `RunBarTests`).
@Suite struct SimulationPictureTests {
    /// Dates under the plot stay about 80 px apart however many days it spans.
    @Test func theDayGridThinsOutOverLongSpans() {
        #expect(SimulationPicture.dayStep(days: 7, plotWidth: 1100) == 1)
        #expect(SimulationPicture.dayStep(days: 14, plotWidth: 1100) == 2)
        #expect(SimulationPicture.dayStep(days: 30, plotWidth: 1100) == 7)
        #expect(SimulationPicture.dayStep(days: 365, plotWidth: 1100) == 28)
        #expect(SimulationPicture.dayStep(days: 3660, plotWidth: 1100) == 364)
        for days in 1...4_000 {
            let step = SimulationPicture.dayStep(days: days, plotWidth: 1100)
            #expect(Double(step) * 1100 / Double(days) >= 80 || step == 364, "\(days) days")
        }
    }
}
