import Foundation
import RefreshdCore

/// The overview's picture of the last 24 hours: one lane per job, a template's instances in one
/// lane (`TEMPLATE[*]`) and a timeline job's provider runs in its own; each bin drawn in the
/// colour of its worst outcome with the number of runs in it, under hour ticks. The last hours
/// are drawn wider than the first (`Axis`): what just happened is what an operator under
/// pressure reads, and a failure of ten minutes ago should not be a sliver beside yesterday.
/// Bounded whatever the history: at most `maxLanes` lanes (the rest counted in a last line), so
/// 571 runs of one job or 300 instances stay a picture of a few hundred pixels.
///
/// Not the simulator's renderer (`SimulationPicture`): that one draws simulated days, one mark a
/// run, in the simulator's words (seed, invariants, downtime); real history wants counts.
package enum OverviewPicture {
    static let maxLanes = 40
    static let labelWidth = 230.0, plotWidth = 860.0, laneHeight = 18.0, top = 46.0

    /// The time axis in two scales: the first 18 hours in half-hour bins on 40% of the plot, the
    /// last 6 in 10-minute bins on the other 60% (about 19 px an hour, then 86).
    enum Axis {
        static let recentHours: Int64 = 6
        static let coarse: Int64 = 1_800_000, fine: Int64 = 600_000
        static let earlyShare = 0.4
        static let split: Int64 = (24 - recentHours) * 3_600_000
        static let coarseBins = Int(split / coarse), fineBins = Int(recentHours * 3_600_000 / fine)
        static var bins: Int { coarseBins + fineBins }

        /// The bin of a time `offset` milliseconds into the 24 h.
        static func bin(_ offset: Int64) -> Int {
            offset < split ? Int(offset / coarse) : min(bins - 1, coarseBins + Int((offset - split) / fine))
        }

        /// Where `offset` milliseconds into the 24 h is, from the plot's left edge.
        static func x(_ offset: Int64) -> Double {
            let early = plotWidth * earlyShare
            if offset <= split { return early * Double(offset) / Double(split) }
            return early + (plotWidth - early) * Double(offset - split) / Double(86_400_000 - split)
        }

        /// A bin's left edge and width.
        static func span(_ bin: Int) -> (x: Double, width: Double) {
            let start = bin < coarseBins ? Int64(bin) * coarse : split + Int64(bin - coarseBins) * fine
            let end = bin < coarseBins ? start + coarse : start + fine
            return (x(start), x(end) - x(start))
        }
    }

    /// The lane a run is drawn in: `T[*]` for an instance of `T`, `JOB` for `JOB#FAMILY`.
    static func lane(_ identifier: String) -> String {
        if let split = InstanceName.split(identifier) { return split.template + "[*]" }
        return identifier.split(separator: "#", maxSplits: 1).first.map(String.init) ?? identifier
    }

    /// Worse first: the colour a bin takes.
    static let severity: [String] = ["failure", "crashed", "expired", "interrupted", "running", "success"]
    static let colours = ["success": "#2e9e44", "failure": "#d43c3c", "expired": "#f08c00", "crashed": "#8e44ad",
                          "interrupted": "#7f8c8d", "running": "#3b7dd8"]

    /// The SVG of `runs` (any order) over the 24 h before `now`; `jobs` (the jobs in force) get a
    /// lane even without runs, templates as `T[*]`.
    package static func svg(runs: [RunRecord], jobs: [String], templates: Set<String>, now: Instant, violations: [InvariantViolation]) -> String {
        let start = now.milliseconds - 86_400_000
        // lane -> bin -> outcome -> count
        var counts: [String: [Int: [String: Int]]] = [:]
        for id in jobs { counts[templates.contains(id) ? id + "[*]" : id] = [:] }
        for run in runs where run.started.milliseconds >= start {
            let bin = Axis.bin(run.started.milliseconds - start)
            counts[lane(run.identifier), default: [:]][bin, default: [:]][run.outcome?.rawValue ?? "running", default: 0] += 1
        }
        let failing = Outcome.allCases.filter(\.isTheJobsFailure).map(\.rawValue)
        func failures(_ lane: [Int: [String: Int]]) -> Int { lane.values.reduce(0) { total, bin in failing.reduce(total) { $0 + (bin[$1] ?? 0) } } }
        // Lanes with failures first, then by name.
        let ordered = counts.keys.sorted { a, b in
            let fa = failures(counts[a]!) > 0, fb = failures(counts[b]!) > 0
            return fa != fb ? fa : a < b
        }
        let shown = ordered.prefix(maxLanes)
        let hidden = ordered.dropFirst(maxLanes)
        let lanes = Double(shown.count + (hidden.isEmpty ? 0 : 1))
        let height = top + max(1, lanes) * laneHeight + 30
        let width = labelWidth + plotWidth + 10
        var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"11\">"
        svg += "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>"
        let total = runs.count(where: { $0.started.milliseconds >= start })
        svg += "<text x=\"4\" y=\"16\" font-size=\"13\" font-weight=\"bold\">\(total) run\(total == 1 ? "" : "s") in the 24 hours to \(esc(Words.time(now))), in the colour of each bin's worst outcome: half hours, then 10 minutes for the last \(Axis.recentHours) hours</text>"
        // Legend.
        var x = 4.0
        for name in severity.reversed() {
            svg += "<rect x=\"\(Int(x))\" y=\"24\" width=\"10\" height=\"10\" fill=\"\(colours[name]!)\"/><text x=\"\(Int(x) + 13)\" y=\"33\">\(name)</text>"
            x += 20 + Double(name.count) * 6.5
        }
        if !violations.isEmpty {
            svg += "<text x=\"\(Int(x) + 10)\" y=\"33\" fill=\"#d43c3c\">scheduler check failed: \(esc(violations.map(\.description).joined(separator: "; ")))</text>"
        }
        // Hour ticks: a line each hour, a label every second one in the early part and every one
        // in the last hours (UTC); a stronger line where the scale changes.
        let plotBottom = top + max(1, lanes) * laneHeight
        let firstHour = (start / 3_600_000 + 1) * 3_600_000
        var hour = firstHour
        while hour <= now.milliseconds {
            let hx = labelWidth + Axis.x(hour - start)
            svg += "<line x1=\"\(fmt(hx))\" y1=\"\(Int(top) - 4)\" x2=\"\(fmt(hx))\" y2=\"\(fmt(plotBottom))\" stroke=\"#e3e6ea\"/>"
            let h = Int((hour / 3_600_000) % 24)
            if h % 2 == 0 || hour - start > Axis.split {
                svg += "<text x=\"\(fmt(hx))\" y=\"\(fmt(plotBottom + 14))\" text-anchor=\"middle\" fill=\"#57606f\">\(Words.two(h)):00</text>"
            }
            hour += 3_600_000
        }
        let sx = labelWidth + Axis.x(Axis.split)
        svg += "<line x1=\"\(fmt(sx))\" y1=\"\(Int(top) - 4)\" x2=\"\(fmt(sx))\" y2=\"\(fmt(plotBottom))\" stroke=\"#9aa3ad\" stroke-dasharray=\"3 2\"/>"
        svg += "<text x=\"\(fmt(sx + 3))\" y=\"\(Int(top) - 6)\" fill=\"#57606f\" font-size=\"9\">last \(Axis.recentHours) h, wider</text>"
        svg += "<text x=\"\(fmt(labelWidth + plotWidth))\" y=\"\(fmt(plotBottom + 26))\" text-anchor=\"end\" fill=\"#57606f\">now (UTC)</text>"
        for (i, name) in shown.enumerated() {
            let y = top + Double(i) * laneHeight
            let label = name.count > 34 ? String(name.prefix(33)) + "…" : name
            svg += "<text x=\"4\" y=\"\(fmt(y + 13))\">\(esc(label))</text>"
            svg += "<line x1=\"\(Int(labelWidth))\" y1=\"\(fmt(y + laneHeight))\" x2=\"\(Int(labelWidth + plotWidth))\" y2=\"\(fmt(y + laneHeight))\" stroke=\"#f0f1f3\"/>"
            for (bin, outcomes) in counts[name]!.sorted(by: { $0.key < $1.key }) {
                let worst = severity.first { outcomes[$0] != nil } ?? "success"
                let n = outcomes.values.reduce(0, +)
                let (bx0, binWidth) = Axis.span(bin)
                let bx = labelWidth + bx0
                svg += "<rect x=\"\(fmt(bx + 0.5))\" y=\"\(fmt(y + 2))\" width=\"\(fmt(binWidth - 1))\" height=\"\(fmt(laneHeight - 4))\" fill=\"\(colours[worst]!)\"><title>\(n) run\(n == 1 ? "" : "s"): \(outcomes.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", "))</title></rect>"
                let count = n > 999 ? "1k+" : String(n)
                // The count where it fits (a half hour of the early part is about 10 px wide);
                // the bin's title says it anyway.
                if n > 1, Double(count.count) * 5.5 <= binWidth - 2 {
                    svg += "<text x=\"\(fmt(bx + binWidth / 2))\" y=\"\(fmt(y + 13))\" text-anchor=\"middle\" font-size=\"9\" fill=\"#fff\">\(count)</text>"
                }
            }
        }
        if !hidden.isEmpty {
            let y = top + Double(shown.count) * laneHeight
            let more = hidden.reduce(0) { sum, name in sum + counts[name]!.values.reduce(0) { $0 + $1.values.reduce(0, +) } }
            svg += "<text x=\"4\" y=\"\(fmt(y + 13))\" fill=\"#57606f\">and \(hidden.count) more jobs, \(more) runs (see the Jobs page)</text>"
        }
        return svg + "</svg>"
    }

    static func esc(_ text: String) -> String { HTML.escape(text) }
    static func fmt(_ value: Double) -> String { String(format: "%.1f", value) }
}
