import Foundation
import Testing

/// Restarts keep every pending request, retry streak and missed-slot catch-up, for every job.
///
/// Regression: the daemon used to seed first requests before restoring the saved state, so the
/// first job in file-name order looked new at every start and had its saved request replaced.
@Suite(.serialized) struct RestartTests {
    /// earliest (ms) of each pending request, by identifier.
    func pendingEarliest(_ box: Sandbox) -> [String: String] {
        guard let pending = box.status()?["pending"] as? [[String: Any]] else { return [:] }
        var result: [String: String] = [:]
        for p in pending {
            if let id = p["identifier"] as? String, let earliest = p["earliest"] as? String { result[id] = earliest }
        }
        return result
    }

    func startAndStop(_ box: Sandbox, until condition: () -> Bool) throws -> String {
        let daemon = try CLI.start(["run", "--jobs", box.jobs, "--state", box.state])
        defer { daemon.cleanUp() }
        #expect(waitFor { daemon.errors().contains("refreshd started") && condition() })
        daemon.signal(SIGTERM)
        #expect(daemon.wait() == 0)
        return daemon.errors()
    }

    @Test func everyJobKeepsItsPendingRequestAcrossRestarts() throws {
        let box = Sandbox()
        defer { box.remove() }
        for name in ["a", "b"] {
            try box.write("\(name).yaml", """
                identifier: test.\(name)
                kind: processing
                command: ["/bin/true"]
                earliest: +60s
                resubmit: {after: 1h}
                """)
        }
        _ = try startAndStop(box) { true }
        let before = pendingEarliest(box)
        #expect(before.count == 2)
        usleep(1_200_000)
        let log = try startAndStop(box) { true }
        #expect(pendingEarliest(box) == before)
        #expect(!log.contains("replaced"))
        #expect(box.runs().isEmpty)
    }

    @Test func aRetryBackoffSurvivesARestart() throws {
        let box = Sandbox()
        defer { box.remove() }
        try box.write("a-failing.yaml", """
            identifier: test.failing
            kind: processing
            command: ["/bin/false"]
            retry: {initial: 1h}
            """)
        _ = try startAndStop(box) { box.runs().map(\.1) == ["failure"] }
        let before = pendingEarliest(box)
        #expect(before["test.failing"] != nil)
        usleep(1_200_000)
        _ = try startAndStop(box) { true }
        #expect(pendingEarliest(box) == before)
        #expect(box.runs().map(\.1) == ["failure"])
    }

    @Test func everyCalendarJobCatchesUpAfterDowntime() throws {
        let box = Sandbox()
        defer { box.remove() }
        for name in ["a", "b"] {
            try box.write("cal-\(name).yaml", """
                identifier: cal.\(name)
                kind: processing
                command: ["/bin/true"]
                resubmit: {calendar: "*:*:00/2"}
                missed: once
                """)
        }
        // Each job runs at its first 2-second slot, then waits for the next one.
        _ = try startAndStop(box) { box.runs().count >= 2 && !box.runs().contains { $0.1 == "running" } }
        let runsBefore = box.runs().count
        usleep(3_000_000)  // at least one slot passes while refreshd is down
        // Stopped once both runs have ended: a stop while one is in flight interrupts it, and its
        // retry replaces the pending request (a run's end is recorded after its leftovers are
        // swept, so a run whose command has exited can still be in flight for a moment).
        let log = try startAndStop(box) {
            box.runs().count >= runsBefore + 2 && !box.runs().contains { $0.1 == "running" }
        }
        #expect(!log.contains("replaced"))  // the catch-up request was kept, not replaced by the next slot
        #expect(log.contains("missed 1 slot of cal.a") || log.contains("slots of cal.a"))
        #expect(log.contains("missed 1 slot of cal.b") || log.contains("slots of cal.b"))
        let after = box.runs().dropFirst(runsBefore).map(\.0)
        #expect(after.contains("cal.a"))
        #expect(after.contains("cal.b"))
    }
}
