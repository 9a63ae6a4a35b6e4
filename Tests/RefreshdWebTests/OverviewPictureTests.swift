import Foundation
import Testing
@_spi(Benchmarks) import RefreshdCore
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
        // The failing template's lane comes first; 600 runs of one job are counted per half hour.
        #expect(svg.range(of: ">feed[*]</text>")!.lowerBound < svg.range(of: ">busy</text>")!.lowerBound)
        #expect(svg.contains(">15</text>"))
        // Hour ticks (labelled every 2 h), and no simulator words.
        #expect(svg.matches(of: /:00<\/text>/).count == 12)
        #expect(!svg.contains("seed") && !svg.contains("invariants") && !svg.contains("refreshd down"))
        #expect(svg.utf8.count < 200_000, "\(svg.utf8.count)")
    }

    @Test func anOversizedSimulationPictureIsReplacedBySaying() {
        let small = "<svg/>"
        #expect(SimulationRunner.bounded(small, days: 3) == small)
        let big = String(repeating: "<rect/>", count: SimulationRunner.maxPictureBytes / 7 + 1)
        let bounded = SimulationRunner.bounded(big, days: 31)
        #expect(bounded.utf8.count < 2000 && bounded.contains("Too many runs to draw") && bounded.contains("31 days"))
    }
}
