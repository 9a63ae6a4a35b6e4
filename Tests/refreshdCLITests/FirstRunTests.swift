import Foundation
import Testing

/// A fresh start of the shipped examples: the wallpaper widget asks its playlist provider before
/// the first staging run has staged anything. That is waiting, not a provider failure: no
/// WARNING, no stale span, in the daemon and in the simulator alike.
@Suite struct FirstRunTests {
    /// A real daemon on a copy of the shipped Jobs/ and a one-image library (as
    /// `RunCommandTests.exampleJobsLaunchWithinSeconds`): the widget waits, the staging run's
    /// reload shows both families, and nothing is logged as a WARNING.
    @Test func aFreshStartOfTheShippedJobsWaitsForTheFirstPlaylistWithoutAWarning() throws {
        let box = try Repository.sandboxWithShippedJobs()
        defer { box.remove() }
        let files = FileManager.default
        try files.createDirectory(atPath: box.root + "/.refreshd/library", withIntermediateDirectories: true)
        let dot = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
        #expect(files.createFile(atPath: box.root + "/.refreshd/library/dot.png", contents: Data(base64Encoded: dot)))
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { daemon.cleanUp() }
        let shown = ["systemSmall", "systemMedium"].map { "published wallpaper/\($0): entry of " }
        #expect(waitFor(timeout: 20) { shown.allSatisfy(daemon.errors().contains) }, "\(daemon.errors())")
        daemon.signal(SIGINT)
        #expect(daemon.wait() == 0)
        let log = daemon.errors()
        for family in ["systemSmall", "systemMedium"] {
            #expect(log.contains("waiting wallpaper/\(family): no playlist staged yet in "), "\(log)")
            #expect(!log.contains("stale wallpaper/\(family)"), "\(log)")
            #expect(!log.contains("reload failed wallpaper/\(family)"), "\(log)")
        }
        let warnings = log.split(separator: "\n").filter { $0.contains(" WARNING ") }
        #expect(warnings.isEmpty, "\(warnings)")
    }

    /// `simulate` of the shipped Jobs/ runs the same rule: day 1 has no stale minute and no
    /// failed reload of the widget.
    @Test func simulatingTheShippedJobsShowsNoStaleMinuteOnDayOne() throws {
        let box = try Repository.sandboxWithShippedJobs()
        defer { box.remove() }
        let r = try CLI.run(["simulate", "--jobs", box.jobs, "--days", "1", "--start", "2026-11-23T00:00:00Z",
                             "--seed", "1", "--json"], timeout: 120)
        #expect(r.status == 0, "\(r.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let days = try #require(report["days"] as? [[String: Any]])
        let rows = try #require(days.first?["widgets"] as? [[String: Any]])
        #expect(rows.count == 2)
        for row in rows {
            #expect(row["stale_minutes"] as? Int == 0, "\(row)")
            #expect(row["first_stale"] is NSNull, "\(row)")
        }
        let lanes = try #require(report["widgetLanes"] as? [[String: Any]])
        let kinds = lanes.flatMap { ($0["marks"] as? [[String: Any]] ?? []).compactMap { $0["kind"] as? String } }
        #expect(!kinds.isEmpty)
        #expect(!kinds.contains("stale") && !kinds.contains("failed"), "\(kinds)")
    }
}
