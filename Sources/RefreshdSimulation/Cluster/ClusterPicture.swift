import Foundation
import RefreshdCore

/// The picture of a cluster run (`simulate --nodes N --svg FILE`): one machine's picture of the
/// whole cluster's runs (`SimulationPicture`: a lane per job with its runs and outcomes, per
/// widget, per activity) and under it a lane per shard, coloured by the node that led it over
/// time, a takeover marked ▼ where another node began to lead it, a fence ✕, a release |; each
/// node fault a dashed vertical line across every lane. Plain SVG text.
package enum ClusterPicture {
    static let colours = ["#4e79a7", "#f28e2b", "#76b7b2", "#b07aa1", "#edc948", "#ff9da7", "#9c755f", "#bab0ac"]

    package static func svg(_ report: ClusterSimulation.Report) -> String {
        let start = report.machine?.start ?? Instant(milliseconds: 0)
        let machine = report.machine ?? SimulationReport(
            scenario: "\(report.nodes) nodes", start: start, end: start + report.duration, seed: 0, timeZone: "UTC", days: [],
            jobs: [], total: .init(), missed: [], faults: [], downtime: [], violations: [], expectations: [], steps: 0)
        return SimulationPicture.svg(machine, extra: lanes(report, start: start))
    }

    /// The shard lanes and the node faults' lines, drawn by `SimulationPicture` under its lanes.
    static func lanes(_ report: ClusterSimulation.Report, start: Instant) -> SimulationPicture.ExtraLanes {
        let escape = SimulationPicture.escape
        func f(_ v: Double) -> String { String(format: "%.1f", v) }
        func seconds(_ d: Duration) -> String { ClusterSimulation.Report.seconds(d) }
        func colour(_ node: Int) -> String { colours[node % colours.count] }
        let draw: (Double, Double, Double, Double, Double, Double, (Instant) -> Double) -> [String] = { top, plotTop, plotBottom, lane, left, plotWidth, x in
            var s: [String] = []
            for shard in 0..<report.shards {
                let y = top + lane * Double(shard)
                let changes = report.changes.filter { $0.shard == shard }
                let leaders = changes.filter { $0.what == .leads || $0.what == .takeover }.map { "node\($0.node)" }
                var seen: [String] = []
                for l in leaders where seen.last != l { seen.append(l) }
                s.append(##"<text x="10" y="\##(f(y + 15))" font-size="12">shard \##(shard)</text>"##)
                let summary = "\(seen.isEmpty ? "never led" : "led by " + seen.joined(separator: " → ")) · "
                    + "\(changes.filter { $0.what == .takeover }.count) takeovers · \(changes.filter { $0.what == .fenced }.count) fences"
                s.append(##"<text x="10" y="\##(f(y + 28))" font-size="10" fill="#57606f">\##(escape(summary))</text>"##)
                s.append(##"<rect x="\##(f(left))" y="\##(f(y + 7))" width="\##(f(plotWidth))" height="\##(f(lane - 14))" fill="#eeeeee"/>"##)
                for span in report.ownership where span.shard == shard && span.to > span.from {
                    let x0 = x(start + span.from), x1 = max(x0 + 0.5, x(start + span.to))
                    let title = "node\(span.node) leads shard \(shard) from +\(seconds(span.from)) s to +\(seconds(span.to)) s"
                    s.append(##"<rect class="lead" x="\##(f(x0))" y="\##(f(y + 7))" width="\##(f(x1 - x0))" height="\##(f(lane - 14))" fill="\##(colour(span.node))"><title>\##(escape(title))</title></rect>"##)
                }
                for change in changes where change.what != .leads {
                    let mx = x(start + change.at)
                    let title = escape("+\(seconds(change.at)) s node\(change.node): \(change.line)")
                    switch change.what {
                    case .takeover:
                        s.append(##"<path class="takeover" data-at="\##(seconds(change.at))" d="M\##(f(mx - 4)) \##(f(y)) L\##(f(mx + 4)) \##(f(y)) L\##(f(mx)) \##(f(y + 7)) Z" fill="\##(colour(change.node))" stroke="#2f3542" stroke-width="0.8"><title>\##(title)</title></path>"##)
                    case .fenced:
                        s.append(##"<path class="fence" data-at="\##(seconds(change.at))" d="M\##(f(mx - 4)) \##(f(y + lane / 2 - 4)) L\##(f(mx + 4)) \##(f(y + lane / 2 + 4)) M\##(f(mx - 4)) \##(f(y + lane / 2 + 4)) L\##(f(mx + 4)) \##(f(y + lane / 2 - 4))" stroke="#d43c3c" stroke-width="2"><title>\##(title)</title></path>"##)
                    default:
                        s.append(##"<line class="release" data-at="\##(seconds(change.at))" x1="\##(f(mx))" y1="\##(f(y + 5))" x2="\##(f(mx))" y2="\##(f(y + lane - 5))" stroke="#2f3542" stroke-width="1.5"><title>\##(title)</title></line>"##)
                    }
                }
            }
            // Node faults: a dashed line at each boundary across every lane, jobs' and shards'.
            for mark in report.marks {
                let mx = x(start + mark.at)
                let title = escape("+\(seconds(mark.at)) s: \(mark.what)")
                s.append(##"<line class="node-fault" data-at="\##(seconds(mark.at))" x1="\##(f(mx))" y1="\##(f(plotTop - 14))" x2="\##(f(mx))" y2="\##(f(plotBottom))" stroke="#c0392b" stroke-dasharray="4,3"><title>\##(title)</title></line>"##)
                s.append(##"<text x="\##(f(mx + 2))" y="\##(f(plotTop - 4))" font-size="10" fill="#c0392b">\##(escape(mark.what))</text>"##)
            }
            return s
        }
        let legend: (Double, Double) -> [String] = { y, left in
            var s: [String] = [], lx = left
            for node in 0..<report.nodes {
                s.append(##"<rect x="\##(f(lx))" y="\##(f(y - 10))" width="12" height="12" fill="\##(colour(node))"/>"##)
                s.append(##"<text x="\##(f(lx + 16))" y="\##(f(y))">node\##(node) leads</text>"##)
                lx += 100
            }
            s.append(##"<text x="\##(f(lx))" y="\##(f(y))">▼ takeover · ✕ fence · | release · dashed red line: node fault</text>"##)
            return s
        }
        return .init(names: (0..<report.shards).map { "shard \($0)" }, legend: legend, draw: draw)
    }
}
