import Foundation
import RefreshdCore

extension SimulationPicture {
    static let activityColours: [String: String] = [
        "pending": "#b2bec3", "active": "#2e9e44", "stale": "#f08c00", "ended": "#3b7dd8", "dismissed": "#dfe4ea",
    ]

    /// Lanes for widgets (stale spans shaded, entries shown as ticks, reloads, deferrals and
    /// failures as marks) and activities (a bar per state, coloured by it), from `top` down.
    static func sideLanes(_ report: SimulationReport, top: Double, lane: Double, left: Double, plotWidth: Double,
                          x: (Instant) -> Double) -> [String] {
        var s: [String] = []
        var y = top
        for w in report.widgetLanes {
            s.append(##"<text x="10" y="\##(format(y + 15))" font-size="12">widget \##(escape(w.widget + (w.instances.map { " (\($0) instances)" } ?? "")))</text>"##)
            let counts = Dictionary(grouping: w.marks, by: \.kind).mapValues(\.count)
            s.append(##"<text x="10" y="\##(format(y + 28))" font-size="10" fill="#57606f">\##(counts["reload", default: 0]) reloads · \##(counts["reload-exempt", default: 0]) exempt · \##(counts["deferred", default: 0]) deferred · \##(counts["failed", default: 0]) failed</text>"##)
            // By instance in a lane of a template's instances' widgets (each stale on its own).
            var staleFrom: [String: (Instant, String)] = [:]
            for span in SimulationReport.fallbackSpans([w], playlists: [w.widget], end: report.end)[w.widget] ?? [] {
                // Entries shown from an earlier staged day: another shade under the ticks.
                let x0 = x(span.0), width = max(1.5, x(span.1) - x0)
                s.append(##"<rect x="\##(format(x0))" y="\##(format(y + 3))" width="\##(format(width))" height="\##(format(lane - 6))" fill="#a55eea" opacity="0.2"><title>\##(escape("fallback to \(span.2)'s playlist from \(span.0.iso8601) to \(span.1.iso8601)"))</title></rect>"##)
            }
            for m in w.marks {
                switch m.kind {
                case "stale":
                    staleFrom[m.instance ?? ""] = (m.at, m.detail)
                case "fresh":
                    if let (from, why) = staleFrom[m.instance ?? ""] {
                        let whose = m.instance.map { "\($0) " } ?? ""
                        s.append(staleRect(x(from), x(m.at), y, lane, "\(whose)stale from \(from.iso8601) to \(m.at.iso8601) (\(why))"))
                    }
                    staleFrom[m.instance ?? ""] = nil
                default:
                    let mx = x(m.at)
                    let (colour, y0, y1): (String, Double, Double) = switch m.kind {
                    case "shown": ("#2f3542", y + 4, y + 10)
                    case "shown-fallback": ("#8854d0", y + 4, y + 10)
                    case "reload": ("#2e9e44", y + 12, y + lane - 12)
                    case "reload-exempt": ("#7bed9f", y + 12, y + lane - 12)
                    case "deferred": ("#f08c00", y + 10, y + lane - 6)
                    case "spaced": ("#c8a2c8", y + 14, y + lane - 14)
                    default: ("#d43c3c", y + 8, y + lane - 4)
                    }
                    s.append(##"<line x1="\##(format(mx))" y1="\##(format(y0))" x2="\##(format(mx))" y2="\##(format(y1))" stroke="\##(colour)" stroke-width="1.2"><title>\##(escape("\(m.kind) \(m.at.iso8601) \(m.detail)"))</title></line>"##)
                }
            }
            for (whose, (from, why)) in staleFrom.sorted(by: { $0.key < $1.key }) {
                s.append(staleRect(x(from), x(report.end), y, lane, "\(whose.isEmpty ? "" : whose + " ")stale from \(from.iso8601) to the end (\(why))"))
            }
            y += lane
        }
        for a in report.activityLanes {
            s.append(##"<text x="10" y="\##(format(y + 15))" font-size="12">activity \##(escape(a.id))</text>"##)
            s.append(##"<text x="10" y="\##(format(y + 28))" font-size="10" fill="#57606f">\##(escape(a.type)) · \##(a.steps.count) transitions · \##(escape(a.steps.last?.to ?? ""))</text>"##)
            for (i, step) in a.steps.enumerated() where step.to != "dismissed" {
                let until = i + 1 < a.steps.count ? a.steps[i + 1].at : report.end
                let x0 = x(step.at), x1 = max(x0 + 2, x(until))
                let colour = activityColours[step.to] ?? "#3b7dd8"
                s.append(##"<rect x="\##(format(x0))" y="\##(format(y + 9))" width="\##(format(x1 - x0))" height="\##(format(lane - 18))" fill="\##(colour)"><title>\##(escape("\(a.id) \(step.to) from \(step.at.iso8601) (\(step.cause))"))</title></rect>"##)
            }
            y += lane
        }
        return s
    }

    static func staleRect(_ x0: Double, _ x1: Double, _ y: Double, _ lane: Double, _ title: String) -> String {
        let w = String(format: "%.1f", max(1.5, x1 - x0))
        return ##"<rect x="\##(String(format: "%.1f", x0))" y="\##(String(format: "%.1f", y + 3))" width="\##(w)" height="\##(String(format: "%.1f", lane - 6))" fill="#ff6b6b" opacity="0.25"><title>\##(escape(title))</title></rect>"##
    }
}
