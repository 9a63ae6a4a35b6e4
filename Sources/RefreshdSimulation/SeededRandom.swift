import Foundation
import RefreshdConfig
import RefreshdCore

/// Deterministic randomness for simulations: every draw is a pure function of the seed and
/// what it is for (a job, a run number, a slot), so a simulation repeats byte for byte and one
/// job's draws do not shift when another job is added.
package struct SeededRandom: Sendable, Hashable {
    package let seed: UInt64

    package init(seed: UInt64) { self.seed = seed }

    /// A 64-bit value for (purpose, key, n).
    package func bits(_ purpose: String, _ key: String, _ n: Int64 = 0) -> UInt64 {
        var h = SchedulerCore.stableHash(purpose) ^ seed
        h = Self.mix(h ^ SchedulerCore.stableHash(key))
        return Self.mix(h ^ UInt64(bitPattern: n))
    }

    /// Uniform in [0, 1).
    package func unit(_ purpose: String, _ key: String, _ n: Int64 = 0) -> Double {
        Double(bits(purpose, key, n) >> 11) / Double(1 << 53)
    }

    static func mix(_ x: UInt64) -> UInt64 { SplitMix64.mix(x) }
}

extension JobModel {
    /// The behaviour of a job's `run`-th run (1-based), its `attempt` (2 and later: a retry),
    /// under `random`.
    func draw(run: Int, attempt: Int = 1, identifier: String, random: SeededRandom) -> (duration: Duration, exit: RunExit) {
        if let recorded = replayedRun(identifier, run) { return (recorded.duration, recorded.exit) }
        var duration: Duration
        switch self.duration {
        case let .fixed(d):
            duration = d
        case let .uniform(low, high):
            let span = Double(max(0, high.wholeMilliseconds - low.wholeMilliseconds))
            duration = low + .milliseconds(Int64(span * random.unit("duration", identifier, Int64(run))))
        case let .skewed(median, p99):
            // Log-normal through (p50 = median, p99 = p99): ln d = ln median + z * sigma.
            let m = Double(max(1, median.wholeMilliseconds)), top = Double(max(1, p99.wholeMilliseconds))
            let sigma = max(0, log(top / m) / 2.326)
            let u1 = max(1e-12, random.unit("duration.a", identifier, Int64(run)))
            let u2 = random.unit("duration.b", identifier, Int64(run))
            let z = (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
            duration = .milliseconds(Int64(min(9e15, m * exp(z * sigma))))
        case let .quantiles(values):
            duration = Self.quantileDraw(values, random.unit("duration", identifier, Int64(run)))
        }
        duration = duration + growth * (run - 1)
        let w = attempt > 1 ? retryOutcomes ?? outcomes : outcomes
        let total = max(0, w.success) + max(0, w.failure) + max(0, w.crash)
        var exit = RunExit.exited(0)
        if total > 0 {
            let pick = random.unit("outcome", identifier, Int64(run)) * total
            if pick >= max(0, w.success) + max(0, w.failure) {
                exit = .signaled(11)
            } else if pick >= max(0, w.success) {
                exit = .exited(1)
            }
        }
        return (duration, exit)
    }

    /// How long the `run`-th launch of `order`'s identifier lasts when it replays a recorded
    /// run (`simulate --replay`); nil when it replays none.
    func replayedDuration(_ order: LaunchOrder, run: Int) -> Duration? {
        replayedRun(order.identifier, run)?.duration(launchedAt: order.started)
    }

    /// The inverse of the piecewise-linear distribution function through `values` (evenly
    /// spaced quantiles, p0 to p100) at `unit` in [0, 1), to the millisecond.
    static func quantileDraw(_ values: [Duration], _ unit: Double) -> Duration {
        guard let first = values.first else { return .zero }
        guard values.count > 1 else { return first }
        let position = unit * Double(values.count - 1)
        let index = min(values.count - 2, Int(position))
        let low = Double(values[index].wholeMilliseconds), high = Double(values[index + 1].wholeMilliseconds)
        return .milliseconds(Int64((low + (high - low) * (position - Double(index))).rounded(.down)))
    }
}
