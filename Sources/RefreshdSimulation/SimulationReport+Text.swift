import Foundation
import RefreshdConfig
import RefreshdCore
import RefreshdRuntime

/// The report for people (`refreshd simulate` without `--json`).
extension SimulationReport {
    /// A readable table: per day, per job totals, faults, expectations, violations.
    package var text: String {
        var out: [String] = []
        // The simulated length, not the day rows: a start that is not at midnight spreads N days
        // over N + 1 rows.
        let length = end.duration(since: start).wholeMilliseconds
        let span = length % 86_400_000 == 0
            ? "\(length / 86_400_000) day\(length == 86_400_000 ? "" : "s")" : formatDuration(.milliseconds(length))
        out.append("simulation \(scenario): \(span) from \(start) to \(end) (\(timeZone)), seed \(seed)")
        out.append("")
        let header = ["day", "launched", "success", "failure", "expired", "crashed", "interrupted", "missed", "late p50", "late max"]
        var rows: [[String]] = []
        for d in days {
            rows.append([d.date] + Self.cells(d.total))
        }
        rows.append(["total"] + Self.cells(total))
        out += Self.table(header, rows)
        out.append("")
        var jobRows: [[String]] = []
        for j in jobs {
            jobRows.append([j.identifier + (j.instances.map { " (\($0) instance\($0 == 1 ? "" : "s"))" } ?? "")]
                           + Self.cells(j.figures))
        }
        out += Self.table(["job"] + header.dropFirst(), jobRows)
        for j in jobs {
            guard let failing = j.failingInstances, !failing.isEmpty else { continue }
            out.append("")
            out.append("most failing instances of \(j.identifier):")
            for f in failing { out.append("  \(f.identifier): \(f.failures) failed") }
        }
        out += sideText
        out += notificationText
        if !faults.isEmpty {
            out.append("")
            out.append("faults:")
            for f in faults {
                let when = f.at.map { "\($0)" + (f.until.map { " to \($0)" } ?? "") } ?? "on a run"
                out.append("  \(f.kind) \(when): \(f.detail)")
            }
        }
        if !expectations.isEmpty {
            out.append("")
            out.append("expectations:")
            for e in expectations { out.append("  \(e.passed ? "ok  " : "FAIL") \(e.expectation) (found \(e.found))") }
        }
        out.append("")
        if violations.isEmpty {
            out.append("invariants: all held over \(steps) steps")
        } else {
            for v in violations {
                out.append("VIOLATION \(v.invariant) at \(v.time): \(v.message)")
                out.append("  recent events:")
                for line in v.recent { out.append("    \(line)") }
            }
        }
        return out.joined(separator: "\n")
    }

    static func cells(_ f: Figures) -> [String] {
        [f.launched, f.success, f.failure, f.expired, f.crashed, f.interrupted, f.missed].map(String.init)
            + [formatDuration(.milliseconds(f.latenessP50)), formatDuration(.milliseconds(f.latenessMax))]
    }

    static func table(_ header: [String], _ rows: [[String]]) -> [String] {
        let all = [Array(header)] + rows
        let widths = (0..<header.count).map { i in all.map { $0.indices.contains(i) ? $0[i].count : 0 }.max() ?? 0 }
        return all.map { row in
            row.enumerated().map { i, cell in
                i == 0 ? cell.padding(toLength: widths[i], withPad: " ", startingAt: 0)
                       : String(repeating: " ", count: widths[i] - cell.count) + cell
            }.joined(separator: "  ")
        }
    }
}
