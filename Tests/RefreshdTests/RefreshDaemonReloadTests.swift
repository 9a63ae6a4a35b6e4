import Foundation
import Logging
import Testing
@testable import Refreshd
@testable import RefreshdDaemon
import RefreshdConfig
import RefreshdCore
import RefreshdStore

/// Reloads read the job directory off the loop thread: a slow or hung read never holds up
/// scheduling, and one that takes too long is abandoned with the running config kept.
@Suite(.serialized) struct RefreshDaemonReloadTests {
    final class SlowLoader: @unchecked Sendable {
        let lock = NSLock()
        var delay: Double = 0
        var calls = 0
        func load(_ directory: String) -> Result<[JobConfig], ConfigErrors> {
            let delay = lock.withLock { calls += 1; return self.delay }
            if delay > 0 { usleep(UInt32(delay * 1_000_000)) }
            return JobDirectory.load(directory)
        }
    }

    func launches(_ state: String, _ identifier: String) -> Int {
        guard let store = try? StateStore.open(directory: state, readOnly: true),
              let runs = try? store.recentRuns(limit: 10_000) else { return 0 }
        return runs.filter { $0.identifier == identifier }.count
    }

    @Test func aSlowReloadIsAbandonedWhileJobsKeepRunning() throws {
        let root = TempDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let jobs = root + "/Jobs", state = root + "/state"
        try FileManager.default.createDirectory(atPath: jobs, withIntermediateDirectories: true)
        try """
            identifier: t.tick
            kind: processing
            command: ["/bin/true"]
            resubmit: {after: 50ms}
            """.write(toFile: jobs + "/tick.yaml", atomically: true, encoding: .utf8)
        let lines = LineSink()
        let daemon = RefreshDaemon(jobsDirectory: jobs, stateDirectory: state,
                                   logger: Logger(label: "test") { _ in CapturingLogHandler(sink: lines) })
        daemon.handleSignals = false
        daemon.reloadTimeout = .milliseconds(300)
        let loader = SlowLoader()
        daemon.loadJobs = { loader.load($0) }
        let finished = DispatchSemaphore(value: 0)
        let thread = Thread { try? daemon.run(); finished.signal() }
        thread.start()
        defer {
            daemon.scheduler?.stop()
            _ = finished.wait(timeout: .now() + 10)
        }
        #expect(waitUntil { lines.contains("refreshd started") && launches(state, "t.tick") >= 2 })

        // An added job, seen by the directory watch, and a read that takes 1.5 s: abandoned
        // after 300 ms, never applied.
        loader.lock.withLock { loader.delay = 1.5 }
        let before = launches(state, "t.tick")
        try """
            identifier: t.added
            kind: processing
            command: ["/bin/true"]
            """.write(toFile: jobs + "/added.yaml", atomically: true, encoding: .utf8)
        #expect(waitUntil(timeout: 1.5) { lines.contains("reload abandoned (\(jobs) changed)") })
        // Scheduling went on while the read was stuck: several 50 ms ticks ran meanwhile.
        #expect(launches(state, "t.tick") >= before + 3)
        #expect(waitUntil(timeout: 3) { loader.lock.withLock { loader.calls } == 2 })
        usleep(300_000)
        #expect(launches(state, "t.added") == 0)
        #expect(!lines.contains("reloaded"))

        // A read within the time limit is applied.
        loader.lock.withLock { loader.delay = 0 }
        let scheduler = try #require(daemon.scheduler)
        scheduler.performOnLoop { daemon.reload(reason: "again") }
        #expect(waitUntil { lines.contains("reloaded (again): 1 added") })
        #expect(waitUntil { launches(state, "t.added") == 1 })
    }

    func waitUntil(timeout: Double = 5, _ condition: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(timeout)
        while Date() < end {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }
}
