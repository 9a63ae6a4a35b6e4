import Testing
import RefreshdConfig
import RefreshdCore
@testable import RefreshdSimulation

/// The picture's run bars: merging consecutive runs of one outcome paints exactly the pixels
/// that one bar per run painted, and keeps the order in which colours overlap.
@Suite struct RunBarTests {
    /// Paints bars, in order, onto a line of cells a twentieth of a pixel wide; each cell keeps
    /// the outcome painted last (nil: nothing, `.some(nil)`: a run still running).
    static func paint(_ bars: [RunBar]) -> [Outcome??] {
        var cells = [Outcome??](repeating: nil, count: 1_300 * 20)
        for bar in bars {
            let from = max(0, Int((bar.x0 * 20).rounded(.up))), to = min(cells.count, Int((bar.x1 * 20).rounded(.up)))
            if from < to { for i in from..<to { cells[i] = .some(bar.outcome) } }
        }
        return cells
    }

    @Test func mergedBarsPaintWhatOneBarPerRunPainted() {
        let random = SeededRandom(seed: 9)
        func below(_ n: Int, _ what: String, _ plan: Int, _ id: Int64) -> Int { Int(random.bits(what, "\(plan)", id) % UInt64(n)) }
        let outcomes: [Outcome?] = [.success, .success, .success, .success, .failure, .expired, nil]
        for plan in 0..<300 {
            var runs: [SimulationReport.Run] = []
            var t: Int64 = 0
            for id in 1...Int64(1 + plan % 60) {
                // Mostly forward, sometimes back (a clock step), sometimes far ahead.
                let step = Int64(below(9, "step", plan, id)) - 1
                t = max(0, t + step * 600_000)
                let duration = Int64(below(4, "length", plan, id)) * 400_000
                let outcome = outcomes[below(outcomes.count, "outcome", plan, id)]
                runs.append(.init(runID: id, earliest: Instant(milliseconds: t), started: Instant(milliseconds: t),
                                  ended: outcome == nil ? nil : Instant(milliseconds: t + duration), outcome: outcome))
            }
            let x = { (i: Instant) in 100 + Double(i.milliseconds) / 60_000 }  // a pixel a minute
            let merged = RunBar.bars(runs, x: x)
            let single = runs.enumerated().map { i, run in
                RunBar(x0: x(run.started), x1: max(x(run.started) + 3, x(run.ended ?? run.started)),
                       outcome: run.outcome, first: i, count: 1)
            }
            #expect(Self.paint(merged) == Self.paint(single), "plan \(plan)")
            #expect(merged.map(\.count).reduce(0, +) == runs.count)
        }
    }

    @Test func aYearOfAPerMinuteJobIsAFewBars() {
        let runs = (0..<525_600).map { i in
            SimulationReport.Run(runID: Int64(i + 1), earliest: Instant(milliseconds: Int64(i) * 60_000),
                                 started: Instant(milliseconds: Int64(i) * 60_000),
                                 ended: Instant(milliseconds: Int64(i) * 60_000 + 10), outcome: .success)
        }
        let span = 365.0 * 86_400_000
        let bars = RunBar.bars(runs) { 300 + 1_100 * Double($0.milliseconds) / span }
        #expect(bars.count == 1)
        #expect(bars[0].label("job", runs) == "job runs 1 to 525600 (525600, all success) from 1970-01-01T00:00:00.000Z to 1970-12-31T23:59:00.000Z")
    }
}
