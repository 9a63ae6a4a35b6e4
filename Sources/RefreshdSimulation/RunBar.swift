import RefreshdCore

/// What the picture draws for a job's runs: one bar per run, or one for consecutive runs of
/// one outcome whose bars overlap or touch on screen.
///
/// Why: a run is at least 3 px wide, so at a week's scale a per-minute job's runs overlap by
/// dozens, and at a year's the picture held half a million run elements (88 MB, more than a
/// browser opens). Merging paints the same pixels: bars are opaque, a bar of consecutive runs
/// covers exactly the union of theirs, and an outcome change (or a run drawn left of the bar,
/// after a clock step back) starts a new bar, so the order in which colours overlap is kept.
/// (The picture draws the successes first and the rarer outcomes over them, so that a failure
/// among a per-minute job's successes stays in sight.)
struct RunBar: Equatable {
    var x0: Double
    var x1: Double
    var outcome: Outcome?
    /// The runs it stands for: `runs[first ..< first + count]`.
    var first: Int
    var count: Int

    /// The bars for `runs` in drawing order (the order given); `x` maps an instant to the plot.
    static func bars(_ runs: [SimulationReport.Run], x: (Instant) -> Double) -> [RunBar] {
        var bars: [RunBar] = []
        for (i, run) in runs.enumerated() {
            let x0 = x(run.started)
            let x1 = max(x0 + 3, x(run.ended ?? run.started))
            if let last = bars.last, last.outcome == run.outcome, last.first + last.count == i,
               x0 >= last.x0, x0 <= last.x1 {
                bars[bars.count - 1].x1 = max(last.x1, x1)
                bars[bars.count - 1].count += 1
            } else {
                bars.append(RunBar(x0: x0, x1: x1, outcome: run.outcome, first: i, count: 1))
            }
        }
        return bars
    }

    /// Successes and runs in flight: the bulk of a lane, drawn under the rare outcomes.
    var isCommon: Bool { outcome == .success || outcome == nil }

    /// The bar's tooltip: the run, or the first and last of the runs it stands for.
    func label(_ identifier: String, _ runs: [SimulationReport.Run]) -> String {
        let outcome = outcome?.rawValue ?? "running"
        let run = runs[first]
        if count == 1 { return "\(identifier) run \(run.runID): \(outcome) at \(run.started.iso8601)" }
        let last = runs[first + count - 1]
        return "\(identifier) runs \(run.runID) to \(last.runID) (\(count), all \(outcome)) from \(run.started.iso8601) to \(last.started.iso8601)"
    }
}
