import Foundation
import Testing
import RefreshdCore
@testable import RefreshdDashboard
@testable import RefreshdWeb

/// The overview's 24 h picture stays a picture at scale: one lane per template however many
/// instances ran, many runs of one job counted in half-hour bins, hour ticks, the operator's words.
@Suite struct OverviewPictureTests {
    @Test func threeHundredInstancesAndSixHundredRunsStayASmallPicture() throws {
        let now = Instant(milliseconds: 1_800_000_000_000)
        var runs: [RunRecord] = []
        func run(_ id: String, _ minutesAgo: Int, _ outcome: Outcome) {
            let started = now - .seconds(Int64(minutesAgo) * 60)
            runs.append(RunRecord(runID: Int64(runs.count + 1), identifier: id, kind: .processing, submitted: started, earliest: started,
                                  started: started, deadline: started + .seconds(60), ended: started + .seconds(1), outcome: outcome))
        }
        for i in 0..<320 { run("feed[user\(i)]", i % 1400, i % 7 == 0 ? .failure : .success) }
        for i in 0..<600 { run("busy", i * 2, .success) }
        for i in 0..<50 { run("job.\(i)", 10, .success) }
        let svg = OverviewPicture.svg(runs: runs, jobs: ["feed", "busy"] + (0..<50).map { "job.\($0)" }, templates: ["feed"], now: now, violations: [])
        // One lane for the template, none per instance; lanes bounded, the rest counted.
        #expect(svg.contains(">feed[*]</text>") && !svg.contains("user1"))
        #expect(svg.contains("and 12 more jobs"))
        let height = try #require(svg.firstMatch(of: /height="(\d+)"/).flatMap { Int($0.1) })
        #expect(height < 900, "\(height)")
        // The failing template's lane comes first; 600 runs of one job (one every 2 minutes) are
        // counted per bin: 15 a half hour early on (in the bin's title: too narrow to print),
        // 5 in each 10 minutes of the last 6 hours.
        #expect(svg.range(of: ">feed[*]</text>")!.lowerBound < svg.range(of: ">busy</text>")!.lowerBound)
        #expect(svg.contains("<title>15 runs: 15 success</title>") && svg.contains(">5</text>"))
        // Hour ticks: labelled every 2 h for the first 18 h, every hour for the last 6; no
        // simulator words.
        #expect(svg.matches(of: /:00<\/text>/).count == 9 + 6, "\(svg.matches(of: /:00<\/text>/).count)")
        #expect(!svg.contains("seed") && !svg.contains("invariants") && !svg.contains("refreshd down"))
        #expect(svg.utf8.count < 200_000, "\(svg.utf8.count)")
    }

    /// The last hours are drawn wider than the first (issue 33, item 7): a run 5 minutes ago
    /// gets a bin of 10 minutes about 14 px wide, one 20 hours ago a half hour about 10 px wide,
    /// so an hour of the last six is 4.5 times wider; bins and ticks share one axis.
    @Test func theLastHoursAreDrawnWiderThanTheFirst() throws {
        let now = Instant(milliseconds: 1_800_000_000_000)
        func run(_ id: Int64, minutesAgo: Int64) -> RunRecord {
            let started = now - .seconds(minutesAgo * 60)
            return RunRecord(runID: id, identifier: "j", kind: .processing, submitted: started, earliest: started, started: started,
                             deadline: started + .seconds(60), ended: started + .seconds(1), outcome: .failure)
        }
        let svg = OverviewPicture.svg(runs: [run(1, minutesAgo: 1200), run(2, minutesAgo: 5)], jobs: ["j"], templates: [], now: now, violations: [])
        let widths = svg.matches(of: /<rect x="[0-9.]+" y="[0-9.]+" width="([0-9.]+)" height="14.0" fill="#d43c3c"/).compactMap { Double($0.1) }
        #expect(widths.count == 2, "\(svg)")
        let (early, late) = (widths.min() ?? 0, widths.max() ?? 0)
        #expect(abs(early - (860 * 0.4 / 36 - 1)) < 0.11 && abs(late - (860 * 0.6 / 36 - 1)) < 0.11, "\(widths)")
        #expect(abs(OverviewPicture.Axis.x(86_400_000) - 860) < 0.001 && abs(OverviewPicture.Axis.x(18 * 3_600_000) - 344) < 0.001)
        #expect(OverviewPicture.Axis.bin(18 * 3_600_000 - 1) == 35 && OverviewPicture.Axis.bin(18 * 3_600_000) == 36
                && OverviewPicture.Axis.bin(86_400_000) == 71)
        #expect(svg.contains("last 6 h, wider"))
    }

    @Test func anOversizedSimulationPictureIsReplacedBySaying() {
        let small = "<svg/>"
        #expect(SimulationRunner.bounded(small, days: 3) == small)
        let big = String(repeating: "<rect/>", count: SimulationRunner.maxPictureBytes / 7 + 1)
        let bounded = SimulationRunner.bounded(big, days: 31)
        #expect(bounded.utf8.count < 2000 && bounded.contains("Too many runs to draw") && bounded.contains("31 days"))
    }
}
