import Foundation
import Testing

/// `refreshd simulate --svg` at a month's scale, where a per-minute job's runs are far narrower
/// than a pixel.
@Suite struct SimulationPictureCLITests {
    /// Regression: at 30 days the failures were slivers and the expiries invisible, because the
    /// next successes (drawn after them, 3 px wide each) covered them. Now every outcome other
    /// than success is drawn over the successes, at least 4 px wide, with a marker.
    @Test func rareOutcomesStayVisibleAtThirtyDays() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("minute.yaml", """
            identifier: test.minute
            kind: processing
            command: ["/bin/true"]
            allowance: 10s
            grace: 1s
            resubmit: {after: 1m}
            retry: {initial: 1m, max: 1m, limit: 1}
            simulate:
              duration: {median: 1s, p99: 5s}
              outcomes: {success: 0.997, failure: 0.003}
            """)
        let svgPath = box.root + "/month.svg"
        let r = try CLI.run(["simulate", "--jobs", box.jobs, "--days", "30", "--start", "2026-11-02T00:00:00Z",
                             "--seed", "3", "--svg", svgPath], timeout: 120)
        #expect(r.status == 0, "\(r.stderr)")
        let lines = try String(contentsOfFile: svgPath, encoding: .utf8).split(separator: "\n").map(String.init)
        let bars = lines.indices.filter { lines[$0].hasPrefix("<rect") && lines[$0].contains("<title>test.minute run") }
        let rare = bars.filter { !lines[$0].contains("success") }
        let common = bars.filter { lines[$0].contains("success") }
        #expect(rare.contains { lines[$0].contains("failure") }, "the month has failures")
        #expect(rare.contains { lines[$0].contains("expired") }, "the month has expiries")
        #expect(rare.allSatisfy { $0 > (common.max() ?? 0) }, "every rare outcome is drawn over the successes")
        for i in rare {
            let width = try #require(Self.attribute("width", in: lines[i]))
            #expect(width >= 4, "\(lines[i])")
        }
        let markers = lines.filter { $0.hasPrefix("<path") && $0.contains("<title>test.minute run") }
        #expect(markers.count == rare.count)
    }

    static func attribute(_ name: String, in line: String) -> Double? {
        guard let range = line.range(of: " \(name)=\"") else { return nil }
        return Double(line[range.upperBound...].prefix { $0 != "\"" })
    }
}
