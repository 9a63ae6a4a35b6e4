import Foundation
import Testing
@testable import Refreshd
import RefreshdCore

/// In-process Swift handlers: the BGTask-shaped API.
@Suite(.serialized) struct RefreshSchedulerInProcessTests {
    @Test func handlerCompletesAndExpirationHandlerRuns() throws {
        let events = LineSink()
        let h = try LoopHarness { s in
            s.register(TaskDefinition(identifier: "t.quick")) { task in
                events.append("quick \(task.runID)")
                task.setTaskCompleted(success: true)
                task.setTaskCompleted(success: false)  // ignored: the first call counts
            }
            s.register(TaskDefinition(identifier: "t.slow", kind: .processing, allowance: .milliseconds(80))) { task in
                task.expirationHandler = {
                    events.append("expired \(task.runID)")
                    task.setTaskCompleted(success: false)
                }
            }
        }
        defer { h.removeDirectory() }
        try h.scheduler.submit(TaskRequest(identifier: "t.quick"))
        try h.scheduler.submit(TaskRequest(identifier: "t.slow", kind: .processing))
        h.start()
        #expect(h.wait { h.outcomes()["t.quick"] == [.success] && h.outcomes()["t.slow"] == [.expired] })
        #expect(h.stop())
        #expect(events.contains("quick"))
        #expect(events.contains("expired"))
    }

    @Test func completionFromAnotherThread() throws {
        let h = try LoopHarness { s in
            s.register(TaskDefinition(identifier: "t.async")) { task in
                DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) { task.setTaskCompleted(success: true) }
            }
        }
        defer { h.removeDirectory() }
        h.start()
        try h.scheduler.submit(TaskRequest(identifier: "t.async"))  // from the test thread, loop running
        #expect(h.wait { h.outcomes()["t.async"] == [.success] })
        #expect(h.stop())
    }

    @Test func missedRunAfterRestartRunsOnce() throws {
        let dir = TempDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let def = TaskDefinition(identifier: "t.periodic", resubmit: .after(.milliseconds(100)))
        let count = LineSink()
        let first = try LoopHarness(directory: dir) { s in
            s.register(def) { task in count.append("run"); task.setTaskCompleted(success: true) }
        }
        let now = Instant(secondsSinceEpoch: Date().timeIntervalSince1970)
        try first.scheduler.submit(TaskRequest(identifier: "t.periodic", earliestBeginDate: now + .milliseconds(100)))
        first.start()
        #expect(first.stop())  // down before it was due
        usleep(1_200_000)  // twelve 100 ms intervals pass while down
        let second = try LoopHarness(directory: dir) { s in
            s.register(def) { task in count.append("run"); task.setTaskCompleted(success: true) }
        }
        second.start()
        #expect(second.wait { count.all.count >= 1 })
        usleep(50_000)
        // One run for the missed slots, then the next one a full interval after that launch.
        #expect(count.all.count == 1)
        #expect(second.stop())
    }

    @Test func pendingRequestsSurviveARestart() throws {
        let dir = TempDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let def = TaskDefinition(identifier: "t.later", kind: .processing)
        let at = Instant(secondsSinceEpoch: Date().timeIntervalSince1970) + .seconds(3600)
        do {
            let s = try RefreshScheduler(options: .init(stateDirectory: dir))
            s.register(def) { $0.setTaskCompleted(success: true) }
            try s.submit(TaskRequest(identifier: "t.later", kind: .processing, earliestBeginDate: at))
        }
        let s = try RefreshScheduler(options: .init(stateDirectory: dir))
        s.register(def) { $0.setTaskCompleted(success: true) }
        #expect(s.pendingTaskRequests().map(\.earliestBeginDate) == [at])
    }

    @Test func secondSchedulerOnTheSameStateIsRefused() throws {
        let dir = TempDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = try RefreshScheduler(options: .init(stateDirectory: dir))
        #expect(throws: (any Error).self) { _ = try RefreshScheduler(options: .init(stateDirectory: dir)) }
        _ = first
    }

    @Test func waitsForConditionsWithoutPollingThenRuns() throws {
        let dir = TempDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let fake = dir + "/sys"
        try FileManager.default.createDirectory(atPath: fake + "/net/eth0", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: fake + "/power", withIntermediateDirectories: true)
        try "0x1003\n".write(toFile: fake + "/net/eth0/flags", atomically: true, encoding: .utf8)
        let header = "Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\tMTU\tWindow\tIRTT\n"
        try header.write(toFile: fake + "/route", atomically: true, encoding: .utf8)
        let probe = ConditionsProbe(powerSupplyDirectory: fake + "/power", netDirectory: fake + "/net",
                                    ipv4RouteFile: fake + "/route", ipv6RouteFile: fake + "/none")
        let h = try LoopHarness(directory: dir, probe: probe, fallback: .milliseconds(50)) { s in
            s.register(TaskDefinition(identifier: "t.net", kind: .processing, requiresNetworkConnectivity: true)) {
                $0.setTaskCompleted(success: true)
            }
        }
        try h.scheduler.submit(TaskRequest(identifier: "t.net", kind: .processing))
        h.start()
        #expect(h.wait { h.lines.contains("waiting t.net: needs network") })
        usleep(150_000)
        #expect(h.outcomes()["t.net"] == nil)
        try (header + "eth0\t00000000\t0101A8C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n")
            .write(toFile: fake + "/route", atomically: true, encoding: .utf8)
        #expect(h.wait { h.outcomes()["t.net"] == [.success] })
        #expect(h.stop())
    }
}
