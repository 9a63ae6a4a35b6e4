import Foundation
import Testing
import RefreshdConfig
import RefreshdCore
import RefreshdRuntime
@testable import RefreshdSimulation

/// Issue 32, item 4: the cluster's picture (`simulate --nodes N --svg`) is one machine's (a lane
/// per job with its runs, per widget, per activity) plus a lane per shard, coloured by its
/// leader, with its takeovers, fences and releases, and the node faults across every lane.
@Suite struct ClusterPictureTests {
    static let t0 = Instant(milliseconds: 1_800_000_000_000)

    /// The x of the instant `offset` after the start, as `SimulationPicture` computes it.
    static func x(_ offset: Duration, left: Double, duration: Duration) -> String {
        String(format: "%.1f", left + 1100 * Double(offset.components.seconds * 1000 + offset.components.attoseconds / 1_000_000_000_000_000)
            / Double(duration.components.seconds * 1000))
    }

    static func count(_ text: String, _ of: String) -> Int { text.components(separatedBy: of).count - 1 }

    @Test func theClusterPictureIsOneMachinesPlusALanePerShardWithItsTakeovers() throws {
        let jobs = ClusterTests.jobs(3)
        let duration = Duration.seconds(120)
        let report = ClusterSimulation(jobs: jobs, nodes: 2, shards: 4, start: Self.t0, duration: duration,
                                       faults: [.kill(node: 0, at: .seconds(40), restartAfter: .seconds(30))],
                                       behaviour: ClusterTests.fiveSeconds).run()
        #expect(report.violations == [])
        let machine = try #require(report.machine)
        let svg = ClusterPicture.svg(report)
        #expect(svg.hasPrefix("<svg") && svg.hasSuffix("</svg>\n"))
        // A lane per job, its runs drawn (each run's bar titled with the job), as one machine's.
        #expect(machine.jobs.map(\.identifier) == ["job0", "job1", "job2"])
        for job in jobs {
            #expect(Self.count(svg, ##"font-size="12">\##(job.identifier)</text>"##) == 1)
            let runs = machine.jobs.first { $0.identifier == job.identifier }?.runs.count ?? 0
            #expect(runs >= 4, "\(job.identifier): \(runs) runs")
            #expect(Self.count(svg, "<title>\(job.identifier) run") >= 1, "no run drawn for \(job.identifier)")
        }
        // The runs are the cluster's: every run committed in any shard, each once.
        #expect(machine.total.launched == report.launches)
        // A lane per shard, with its leaders' spans.
        for shard in 0..<4 { #expect(Self.count(svg, ##"font-size="12">shard \##(shard)</text>"##) == 1) }
        #expect(Self.count(svg, ##"<rect class="lead""##) == report.ownership.filter { $0.to > $0.from }.count)
        // Each takeover marked at the instant the report gives, in the shard's lane.
        let left = 300.0
        let takeovers = report.changes.filter { $0.what == .takeover }
        #expect(!takeovers.isEmpty)
        #expect(Self.count(svg, ##"<path class="takeover""##) == takeovers.count)
        for t in takeovers {
            let at = ClusterSimulation.Report.seconds(t.at)
            // The report's own line for it.
            #expect(report.events.contains("+\(at) node\(t.node): \(t.line)"), "\(t)")
            #expect(t.line.hasPrefix("leads shard \(t.shard) "))
            let y = 56.0 + 34 * Double(jobs.count + t.shard)
            let mid = Double(Self.x(t.at, left: left, duration: duration))!
            let d = String(format: "M%.1f %.1f L%.1f %.1f L%.1f %.1f Z", mid - 4, y, mid + 4, y, mid, y + 7)
            #expect(svg.contains(##"<path class="takeover" data-at="\##(at)" d="\##(d)""##), "takeover at +\(at) s not drawn at x \(mid)")
        }
        // node0's kill and restart, a dashed line each across every lane (the plot's top to bottom).
        let bottom = String(format: "%.1f", 56.0 + 34 * Double(jobs.count + 4))
        for (at, what) in [(40, "kill node0"), (70, "start node0")] {
            let x = Self.x(.seconds(Int64(at)), left: left, duration: duration)
            #expect(svg.contains(##"<line class="node-fault" data-at="\##(at).0" x1="\##(x)" y1="42.0" x2="\##(x)" y2="\##(bottom)""##), "\(what)")
            #expect(svg.contains(">\(what)</text>"))
        }
        #expect(Self.count(svg, ##"class="node-fault""##) == 2)
    }
}
