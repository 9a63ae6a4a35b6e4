import Foundation

/// Runs independent simulations on every core; the reports come back in the order given.
/// Each simulation has its own host, store and runtime, so nothing is shared between them.
public enum ParallelRuns {
    /// - Parameter keepRuns: keep every run in the reports; false keeps the figures, faults and
    ///   violations only, so a thousand explored plans do not hold millions of runs in memory.
    public static func run(_ scenarios: [Scenario], keepRuns: Bool = true) -> [SimulationReport] {
        let slots = ReportSlots(count: scenarios.count)
        DispatchQueue.concurrentPerform(iterations: scenarios.count) { i in
            slots.set(i, Simulation(scenario: scenarios[i]).run(keepingRuns: keepRuns))
        }
        return slots.all
    }

    private final class ReportSlots: @unchecked Sendable {
        private var reports: [SimulationReport?]
        private let lock = NSLock()
        init(count: Int) { reports = Array(repeating: nil, count: count) }
        func set(_ i: Int, _ r: SimulationReport) { lock.withLock { reports[i] = r } }
        var all: [SimulationReport] { lock.withLock { reports.map { $0! } } }
    }
}
