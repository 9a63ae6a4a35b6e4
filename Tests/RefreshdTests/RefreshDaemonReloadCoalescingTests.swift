import Foundation
import Logging
import Testing
@testable import Refreshd
@testable import RefreshdDaemon
import RefreshdConfig
import RefreshdCore

/// The daemon carries out `ReloadMachine`'s effects: a burst of reload requests during a read
/// costs one more read, not one each, and each read that finishes in time is applied once.
@Suite(.serialized) struct RefreshDaemonReloadCoalescingTests {
    typealias SlowLoader = RefreshDaemonReloadTests.SlowLoader

    @Test func aBurstOfRequestsDuringAReadCostsOneMoreRead() throws {
        let root = TempDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let jobs = root + "/Jobs", state = root + "/state"
        try FileManager.default.createDirectory(atPath: jobs, withIntermediateDirectories: true)
        try """
            identifier: t.one
            kind: processing
            command: ["/bin/true"]
            earliest: +1h
            """.write(toFile: jobs + "/one.yaml", atomically: true, encoding: .utf8)
        let lines = LineSink()
        let daemon = RefreshDaemon(jobsDirectory: jobs, stateDirectory: state,
                                   logger: Logger(label: "test") { _ in CapturingLogHandler(sink: lines) })
        daemon.handleSignals = false
        daemon.reloadTimeout = .seconds(5)
        let loader = SlowLoader()
        daemon.loadJobs = { loader.load($0) }
        let finished = DispatchSemaphore(value: 0)
        let thread = Thread { try? daemon.run(); finished.signal() }
        thread.start()
        defer {
            daemon.scheduler?.stop()
            _ = finished.wait(timeout: .now() + 10)
        }
        #expect(waitUntil { lines.contains("refreshd started") })
        let scheduler = try #require(daemon.scheduler)
        let before = loader.lock.withLock { loader.calls }
        loader.lock.withLock { loader.delay = 0.3 }
        // Five requests in one loop turn: the first starts a read, the others wait for it.
        scheduler.performOnLoop {
            for n in 1...5 { daemon.reload(reason: "burst \(n)") }
        }
        #expect(waitUntil { lines.contains("reloaded (burst 5)") })
        usleep(500_000)
        #expect(loader.lock.withLock { loader.calls } == before + 2)
        #expect(lines.contains("reloaded (burst 1)"))
        for n in 2...4 { #expect(!lines.contains("reloaded (burst \(n))")) }
        #expect(!lines.contains("reload abandoned"))
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
