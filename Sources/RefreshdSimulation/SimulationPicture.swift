import Foundation
import RefreshdCore

/// The report as an SVG picture: one lane per job over the days, each run drawn at its real
/// time and coloured by outcome, faults and downtime shaded, missed slots marked; then a lane
/// per widget (entries shown, reloads, deferrals, stale spans) and per activity (by state). What a person
/// reads faster than the table: a gap, a red streak, a cluster after downtime.
package enum SimulationPicture {
    static let colours: [Outcome?: String] = [
        .success: "#2e9e44", .failure: "#d43c3c", .expired: "#f08c00", .crashed: "#8e44ad",
        .interrupted: "#7f8c8d", nil: "#3b7dd8",
    ]
    /// The narrowest a bar of an outcome other than success is drawn, in px.
    static let rareWidth = 4.0

    /// Lanes another picture adds under the jobs', widgets' and activities' lanes (a cluster's
    /// shards, `ClusterPicture`), drawn on the same time axis, under the same faults and grid.
    package struct ExtraLanes {
        /// Each lane's name (the label column fits the longest).
        package var names: [String]
        /// What the extra lanes' marks mean: SVG elements on a line at `y` from `left`, drawn
        /// above the verdict.
        package var legend: ((_ y: Double, _ left: Double) -> [String])?
        /// The lanes' SVG elements, given where they start, the plot's top, a lane's height,
        /// the plot's left edge and width, and the x of an instant.
        package var draw: (_ lanesTop: Double, _ plotTop: Double, _ plotBottom: Double, _ lane: Double, _ left: Double,
                           _ plotWidth: Double, _ x: (Instant) -> Double) -> [String]

        package init(names: [String], legend: ((Double, Double) -> [String])? = nil,
                     draw: @escaping (Double, Double, Double, Double, Double, Double, (Instant) -> Double) -> [String]) {
            self.names = names
            self.legend = legend
            self.draw = draw
        }
    }

    package static func svg(_ report: SimulationReport, extra: ExtraLanes? = nil) -> String {
        // The label column fits the longest lane name (12 px DejaVu Sans is under 7.5 px a
        // character), so a long identifier never runs into the plot.
        let names = report.jobs.map(\.identifier) + report.widgetLanes.map { "widget \($0.widget)" }
            + report.activityLanes.map { "activity \($0.id)" } + (extra?.names ?? [])
        let longest = names.map(\.count).max() ?? 0
        let left = max(300.0, 24 + 7.5 * Double(longest)), right = 30.0, top = 56.0, lane = 34.0, plotWidth = 1100.0
        let width = left + plotWidth + right
        let sideCount = report.widgetLanes.count + report.activityLanes.count
        let laneCount = max(1, report.jobs.count + sideCount + (extra?.names.count ?? 0))
        let height = top + lane * Double(laneCount) + 86 + (report.widgetLanes.isEmpty ? 0 : 22) + (extra?.legend == nil ? 0 : 22)
        let span = Double(max(1, report.end.milliseconds - report.start.milliseconds))
        func x(_ t: Instant) -> Double {
            left + plotWidth * Double(min(max(t.milliseconds, report.start.milliseconds), report.end.milliseconds)
                                      - report.start.milliseconds) / span
        }
        var s: [String] = []
        s.append(##"<svg xmlns="http://www.w3.org/2000/svg" width="\##(format(width))" height="\##(format(height))" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12">"##)
        s.append(##"<rect width="100%" height="100%" fill="#ffffff"/>"##)
        let title = "\(report.scenario): \(report.days.count) days from \(report.start.iso8601.prefix(16))Z, seed \(report.seed)"
        s.append(##"<text x="\##(format(left))" y="22" font-size="15" font-weight="bold">\##(escape(title))</text>"##)
        let plotBottom = top + lane * Double(laneCount)
        s += backdrop(report, top: top, plotBottom: plotBottom, plotWidth: plotWidth, width: width, x: x)
        s += jobLanes(report, top: top, lane: lane, left: left, plotWidth: plotWidth, x: x)
        s += sideLanes(report, top: top + lane * Double(report.jobs.count), lane: lane, left: left, plotWidth: plotWidth, x: x)
        if let extra {
            s += extra.draw(top + lane * Double(report.jobs.count + sideCount), top, plotBottom, lane, left, plotWidth, x)
        }
        s += legendAndVerdict(report, y: plotBottom + 44, left: left, extra: extra)
        s.append("</svg>")
        return s.joined(separator: "\n") + "\n"
    }

    /// Downtime and faults, shaded behind the lanes, and the day grid with its dates.
    static func backdrop(_ report: SimulationReport, top: Double, plotBottom: Double, plotWidth: Double, width: Double,
                         x: (Instant) -> Double) -> [String] {
        var s: [String] = []
        for d in report.downtime {
            guard let a = d.at, let b = d.until else { continue }
            s.append(##"<rect x="\##(format(x(a)))" y="\##(format(top))" width="\##(format(max(1.5, x(b) - x(a))))" height="\##(format(plotBottom - top))" fill="#bdc3c7" opacity="0.55"><title>refreshd not running \##(a.iso8601) to \##(b.iso8601)</title></rect>"##)
        }
        for f in report.faults {
            guard let a = f.at else { continue }
            let b = f.until ?? a
            s.append(##"<rect x="\##(format(x(a)))" y="\##(format(top - 14))" width="\##(format(max(2, x(b) - x(a))))" height="\##(format(plotBottom - top + 14))" fill="#e74c3c" opacity="0.16"><title>\##(escape(f.kind)): \##(escape(f.detail))</title></rect>"##)
            s.append(##"<text x="\##(format(x(a) + 2))" y="\##(format(top - 4))" font-size="10" fill="#c0392b">\##(escape(f.kind))</text>"##)
        }
        // Day grid: a line and a date every `step` days, so that dates stay about 80 px apart
        // (a date is about 65 px wide): every day for a week, every 7 for a month, every 28 for
        // a year, whose 365 labels would otherwise print over each other.
        let step = Self.dayStep(days: report.days.count, plotWidth: plotWidth)
        for (i, day) in report.days.enumerated() where i % step == 0 {
            let x0 = x(report.start + .seconds(Int64(i) * 86_400))
            s.append(##"<line x1="\##(format(x0))" y1="\##(format(top))" x2="\##(format(x0))" y2="\##(format(plotBottom))" stroke="#dfe4ea"/>"##)
            // A date that would run off the right edge (the last grid line of a long span) is left out.
            if x0 + 70 <= width {
                s.append(##"<text x="\##(format(x0 + 3))" y="\##(format(plotBottom + 16))" font-size="11" fill="#57606f">\##(day.date)</text>"##)
            }
        }
        return s
    }

    /// A lane per job: its name and figures, its runs as bars coloured by outcome, its missed slots.
    static func jobLanes(_ report: SimulationReport, top: Double, lane: Double, left: Double, plotWidth: Double,
                         x: (Instant) -> Double) -> [String] {
        var s: [String] = []
        for (i, job) in report.jobs.enumerated() {
            let y = top + lane * Double(i)
            if i % 2 == 1 {
                s.append(##"<rect x="\##(format(left))" y="\##(format(y))" width="\##(format(plotWidth))" height="\##(format(lane))" fill="#f5f6fa" opacity="0.6"/>"##)
            }
            let f = job.figures
            s.append(##"<text x="10" y="\##(format(y + 15))" font-size="12">\##(escape(job.identifier))</text>"##)
            let providers = report.jobs.filter { $0.identifier.hasPrefix(job.identifier + "#") }.count
            let summary = f.launched == 0 && providers > 0
                ? "timeline job · its provider runs are the \(providers) lane\(providers == 1 ? "" : "s") below"
                : (job.instances.map { "\($0) instance\($0 == 1 ? "" : "s") · " } ?? "")
                    + "\(f.launched) runs · \(f.failure + f.crashed) failed · \(f.expired) expired · \(f.missed) missed"
            s.append(##"<text x="10" y="\##(format(y + 28))" font-size="10" fill="#57606f">\##(escape(summary))</text>"##)
            // Successes (and runs in flight) first, then every other outcome on top of them, at
            // least `rareWidth` wide and marked with a triangle above the lane's bars: at 30
            // days a per-minute job's next successes covered a failure's 3 px all but a sliver,
            // and an expiry not at all.
            let bars = RunBar.bars(job.runs, x: x)
            for bar in bars where bar.isCommon {
                let label = bar.label(job.identifier, job.runs)
                s.append(##"<rect x="\##(format(bar.x0))" y="\##(format(y + 7))" width="\##(format(bar.x1 - bar.x0))" height="\##(format(lane - 14))" fill="\##(colours[bar.outcome] ?? "#3b7dd8")"><title>\##(escape(label))</title></rect>"##)
            }
            for bar in bars where !bar.isCommon {
                let colour = colours[bar.outcome] ?? "#3b7dd8"
                let label = escape(bar.label(job.identifier, job.runs))
                let w = max(bar.x1 - bar.x0, rareWidth), mid = bar.x0 + w / 2
                s.append(##"<rect x="\##(format(bar.x0))" y="\##(format(y + 7))" width="\##(format(w))" height="\##(format(lane - 14))" fill="\##(colour)"><title>\##(label)</title></rect>"##)
                s.append(##"<path d="M\##(format(mid - 3.5)) \##(format(y + 0.5)) L\##(format(mid + 3.5)) \##(format(y + 0.5)) L\##(format(mid)) \##(format(y + 6)) Z" fill="\##(colour)"><title>\##(label)</title></path>"##)
            }
            for m in report.missed where m.identifier == job.identifier {
                let mx = x(m.noticed), my = y + lane / 2
                s.append(##"<path d="M\##(format(mx - 5)) \##(format(my - 5)) L\##(format(mx + 5)) \##(format(my + 5)) M\##(format(mx - 5)) \##(format(my + 5)) L\##(format(mx + 5)) \##(format(my - 5))" stroke="#2f3542" stroke-width="2"><title>\##(m.count) missed slot\##(m.count == 1 ? "" : "s") noticed \##(m.noticed.iso8601)</title></path>"##)
            }
        }
        return s
    }

    /// Under the plot at `legendY`: the outcomes' colours and the marks, a widget lane's ticks,
    /// the extra lanes' legend, and the verdict on the invariants.
    static func legendAndVerdict(_ report: SimulationReport, y legendY: Double, left: Double, extra: ExtraLanes?) -> [String] {
        var s: [String] = []
        var lx = left
        let entries: [(String, String)] = [("success", colours[.success]!), ("failure", colours[.failure]!),
                                           ("expired", colours[.expired]!), ("crashed", colours[.crashed]!),
                                           ("interrupted", colours[.interrupted]!)]
        for (name, colour) in entries {
            s.append(##"<rect x="\##(format(lx))" y="\##(format(legendY - 10))" width="12" height="12" fill="\##(colour)"/>"##)
            s.append(##"<text x="\##(format(lx + 16))" y="\##(format(legendY))">\##(name)</text>"##)
            lx += 100
        }
        s.append(##"<path d="M\##(format(lx)) \##(format(legendY - 10)) L\##(format(lx + 10)) \##(format(legendY)) M\##(format(lx)) \##(format(legendY)) L\##(format(lx + 10)) \##(format(legendY - 10))" stroke="#2f3542" stroke-width="2"/>"##)
        s.append(##"<text x="\##(format(lx + 16))" y="\##(format(legendY))">missed slots</text>"##)
        lx += 110
        s.append(##"<rect x="\##(format(lx))" y="\##(format(legendY - 10))" width="12" height="12" fill="#bdc3c7"/>"##)
        s.append(##"<text x="\##(format(lx + 16))" y="\##(format(legendY))">refreshd down</text>"##)
        lx += 120
        s.append(##"<rect x="\##(format(lx))" y="\##(format(legendY - 10))" width="12" height="12" fill="#e74c3c" opacity="0.3"/>"##)
        s.append(##"<text x="\##(format(lx + 16))" y="\##(format(legendY))">fault</text>"##)
        var verdictY = legendY + 24
        if !report.widgetLanes.isEmpty {
            // What the ticks of a widget lane mean (their colours as `sideLanes` draws them).
            var wx = left
            let marks: [(String, String)] = [("entry shown", "#2f3542"), ("fallback shown", "#8854d0"),
                                             ("reload", "#2e9e44"), ("exempt reload", "#7bed9f"),
                                             ("deferred", "#f08c00"), ("reload failed", "#d43c3c")]
            for (name, colour) in marks {
                s.append(##"<line x1="\##(format(wx + 5))" y1="\##(format(verdictY - 11))" x2="\##(format(wx + 5))" y2="\##(format(verdictY + 1))" stroke="\##(colour)" stroke-width="2"/>"##)
                s.append(##"<text x="\##(format(wx + 14))" y="\##(format(verdictY))">\##(name)</text>"##)
                wx += 120
            }
            s.append(##"<rect x="\##(format(wx))" y="\##(format(verdictY - 10))" width="12" height="12" fill="#ff6b6b" opacity="0.25"/>"##)
            s.append(##"<text x="\##(format(wx + 16))" y="\##(format(verdictY))">stale</text>"##)
            verdictY += 22
        }
        if let legend = extra?.legend {
            s += legend(verdictY, left)
            verdictY += 22
        }
        let verdict = report.violations.isEmpty ? "invariants held over \(report.steps) steps"
            : "VIOLATION \(report.violations[0].invariant) at \(report.violations[0].time.iso8601)"
        s.append(##"<text x="\##(format(left))" y="\##(format(verdictY))" fill="\##(report.violations.isEmpty ? "#2e9e44" : "#d43c3c")">\##(escape(verdict))</text>"##)
        return s
    }

    /// A coordinate as the picture writes it, to a tenth of a pixel.
    static func format(_ v: Double) -> String { String(format: "%.1f", v) }

    /// Days between two labelled grid lines: 1, 2, 7, 14, 28, 56, 91, 182 or 364, the first
    /// that puts labels at least 80 px apart.
    static func dayStep(days: Int, plotWidth: Double) -> Int {
        let perDay = plotWidth / Double(max(1, days))
        return [1, 2, 7, 14, 28, 56, 91, 182, 364].first { Double($0) * perDay >= 80 } ?? 364
    }

    static func escape(_ text: String) -> String {
        var out = ""
        for c in text.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out += c.value < 0x20 ? " " : String(c)
            }
        }
        return out
    }
}
