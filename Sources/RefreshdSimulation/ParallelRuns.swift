import Foundation

/// Runs independent simulations on every core; the reports come back in the order given.
/// Each simulation has its own host, store and runtime.
///
/// Why workers build their own scenarios: a scenario's strings (identifiers above 15 bytes,
/// commands, namespaces) are reference-counted objects, and every copy of an identifier into a
/// request, a run or a log line retains and releases them. Two threads doing that on the same
/// objects fight over one cache line: measured on 2 cores, 20 plans of `Jobs/` ran 1.46x faster
/// than on one core in one process, against 2.0x as two processes. `run(count:base:plan:)`
/// has each worker build its base scenario once (a parse of the job files) and its plans from
/// that, so nothing a simulation touches is shared with another thread.
public enum ParallelRuns {
    /// - Parameter keepRuns: keep every run in the reports; false keeps the figures, faults and
    ///   violations only, so a thousand explored plans do not hold millions of runs in memory.
    ///
    /// The scenarios are shared by the threads (see the type's note); prefer
    /// `run(count:keepRuns:base:plan:)` when the scenarios can be rebuilt per worker.
    public static func run(_ scenarios: [Scenario], keepRuns: Bool = true) -> [SimulationReport] {
        run(count: scenarios.count, keepRuns: keepRuns, base: { scenarios }, plan: { $0[$1] })
    }

    /// Runs `count` simulations on every core. Each worker calls `base()` once, then runs
    /// `plan(base, i)` for the indices it takes (in any order, one at a time); report `i` is
    /// plan `i`'s. `plan` must depend only on its arguments, so the reports do not depend on
    /// which worker ran what.
    ///
    /// - Parameter progress: called after each simulation ends with how many have ended and
    ///   that one's report, one call at a time (from whichever worker ran it), for a progress line.
    public static func run<Base>(count: Int, keepRuns: Bool = true,
                                 base: @Sendable () -> Base,
                                 plan: @Sendable (Base, Int) -> Scenario,
                                 progress: (@Sendable (_ ended: Int, _ report: SimulationReport) -> Void)? = nil)
        -> [SimulationReport] {
        let slots = ReportSlots(count: count)
        let workers = min(count, max(1, ProcessInfo.processInfo.activeProcessorCount))
        DispatchQueue.concurrentPerform(iterations: workers) { _ in
            let own = base()
            while let i = slots.take() {
                let report = Simulation(scenario: plan(own, i)).run(keepingRuns: keepRuns)
                slots.set(i, report, progress: progress)
            }
        }
        return slots.all
    }

    private final class ReportSlots: @unchecked Sendable {
        private var reports: [SimulationReport?]
        private var next = 0
        private let lock = NSLock()
        init(count: Int) { reports = Array(repeating: nil, count: count) }
        /// The next index nobody has taken, nil when all are.
        func take() -> Int? {
            lock.withLock {
                guard next < reports.count else { return nil }
                defer { next += 1 }
                return next
            }
        }
        private var ended = 0
        func set(_ i: Int, _ r: SimulationReport,
                 progress: (@Sendable (Int, SimulationReport) -> Void)? = nil) {
            lock.withLock {
                reports[i] = r
                ended += 1
                progress?(ended, r)
            }
        }
        var all: [SimulationReport] { lock.withLock { reports.map { $0! } } }
    }
}
