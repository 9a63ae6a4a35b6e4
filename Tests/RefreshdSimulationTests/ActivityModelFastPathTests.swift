import Foundation
import RefreshdConfig
import RefreshdCore
import RefreshdRuntime
@testable import RefreshdSimulation
import Testing

/// The activity lines `simulate: {activity: ...}` writes (about 96,000 in a simulated year of
/// `Jobs/`) are all read by the fast path, and read as Foundation reads them.
@Suite struct ActivityModelFastPathTests {
    @Test(arguments: [ActivityModel.End.default, .immediate, .after(.seconds(3600)), .none])
    func everyModelledLineTakesTheFastPath(end: ActivityModel.End) {
        let now = Instant(milliseconds: 1_800_000_000_000)
        for (stale, high) in [(nil, false), (Duration.seconds(120), true)] {
            let model = ActivityModel(type: "WallpaperPack", id: "pack-autumn-{run}", updates: .milliseconds(700),
                                      progress: 0...1, end: end, staleAfter: stale, highPriority: high)
            let lines = model.lines(run: 3, start: now, duration: .seconds(10))
            #expect(lines.count >= 14)
            for (_, line) in lines {
                let fast = ResultLine.fastActivity(line, owner: "job.a", namespace: "ns", now: now)
                #expect(fast != nil, "\(line)")
                #expect(fast == ResultLine.parse(line, owner: "job.a", namespace: "ns", now: now), "\(line)")
            }
        }
    }

    /// The run number goes where `{run}` is, as Foundation's `replacingOccurrences` put it.
    @Test func theRunNumberReplacesEveryRunPlaceholder() {
        for template in ["pack-autumn-{run}", "{run}", "{run}{run}-x", "no placeholder", "{ru}n{run", "{{run}}", "é-{run}-ü", ""] {
            #expect(ActivityModel.substitutingRun(template, 42) == template.replacingOccurrences(of: "{run}", with: "42"), "\(template)")
        }
    }
}
