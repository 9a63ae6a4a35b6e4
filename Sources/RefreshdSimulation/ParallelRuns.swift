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
package enum ParallelRuns {
    /// - Parameter keepRuns: keep every run in the reports; false keeps the figures, faults and
    ///   violations only, so a thousand explored plans do not hold millions of runs in memory.
    ///
    /// The scenarios are shared by the threads (see the type's note); prefer
    /// `run(count:keepRuns:base:plan:)` when the scenarios can be rebuilt per worker.
    package static func run(_ scenarios: [Scenario], keepRuns: Bool = true) -> [SimulationReport] {
        run(count: scenarios.count, keepRuns: keepRuns, base: { scenarios }, plan: { $0[$1] })
    }

    /// Runs `count` simulations on every core. Each worker calls `base()` once, then runs
    /// `plan(base, i)` for the indices it takes (in any order, one at a time); report `i` is
    /// plan `i`'s. `plan` must depend only on its arguments, so the reports do not depend on
    /// which worker ran what.
    ///
    /// - Parameter progress: called after each simulation ends with how many have ended and
    ///   that one's report, one call at a time (from whichever worker ran it), for a progress line.
    package static func run<Base>(count: Int, keepRuns: Bool = true,
                                 base: @Sendable () -> Base,
                                 plan: @Sendable (Base, Int) -> Scenario,
                                 progress: (@Sendable (_ ended: Int, _ report: SimulationReport) -> Void)? = nil)
        -> [SimulationReport] {
        run(count: count, keepRuns: keepRuns, base: base, plan: plan, progress: progress) { _, report in report }
    }

    /// `run(count:keepRuns:base:plan:progress:)` keeping only what `summary` makes of each plan
    /// and its report, in the worker that ran it: a report holds every day's figures and the
    /// widget and activity lanes (about 128 KB for 30 days of `Jobs/`), which a thousand
    /// explored plans need not keep once their result is read.
    package static func run<Base, Summary>(count: Int, keepRuns: Bool = true,
                                          base: @Sendable () -> Base,
                                          plan: @Sendable (Base, Int) -> Scenario,
                                          progress: (@Sendable (_ ended: Int, _ report: SimulationReport) -> Void)? = nil,
                                          summary: @Sendable (Scenario, SimulationReport) -> Summary) -> [Summary] {
        let slots = Slots<Summary>(count: count)
        let workers = min(count, max(1, ProcessInfo.processInfo.activeProcessorCount))
        DispatchQueue.concurrentPerform(iterations: workers) { _ in
            let own = base()
            while let i = slots.take() {
                let scenario = plan(own, i)
                let report = Simulation(scenario: scenario).run(keepingRuns: keepRuns)
                slots.set(i, summary(scenario, report)) { ended in progress?(ended, report) }
            }
        }
        return slots.all
    }

    private final class Slots<Summary>: @unchecked Sendable {
        private var summaries: [Summary?]
        private var next = 0
        private var ended = 0
        private let lock = NSLock()
        init(count: Int) { summaries = Array(repeating: nil, count: count) }
        /// The next index nobody has taken, nil when all are.
        func take() -> Int? {
            lock.withLock {
                guard next < summaries.count else { return nil }
                defer { next += 1 }
                return next
            }
        }
        /// Keeps plan `i`'s summary, then tells `ended` how many have ended (under the lock, so
        /// one call at a time).
        func set(_ i: Int, _ summary: Summary, ended report: (Int) -> Void) {
            lock.withLock {
                summaries[i] = summary
                ended += 1
                report(ended)
            }
        }
        var all: [Summary] { lock.withLock { summaries.map { $0! } } }
    }
}
