import Foundation
import Testing
@testable import Refreshd
@testable import RefreshdDaemon
import RefreshdCore
import RefreshdRuntime

/// Every command of the protocol against a live scheduler running real processes, and a
/// thousand clients at once while a job keeps launching on time.
@Suite(.serialized) struct ControlCommandTests {
    typealias Served = ControlServerTests.Served

    static func register(_ scheduler: RefreshScheduler) {
        scheduler.register(TaskDefinition(identifier: "test.sleepy", kind: .processing, allowance: .seconds(60), grace: .seconds(2)),
                           command: CommandJob(argv: ["/bin/sleep", "30"]))
        scheduler.register(TaskDefinition(identifier: "test.other", kind: .processing),
                           command: CommandJob(argv: ["/bin/true"]))
    }

    @Test func everyCommand() throws {
        let served = try Served(register: Self.register)
        defer { served.close() }
        let client = try served.client()
        let hour = Instant(secondsSinceEpoch: Date().timeIntervalSince1970 + 3600)

        let hello = try client.request(ControlRequest(.hello))
        #expect(hello.hello?.protocolVersion == 1)
        #expect(hello.hello?.commands.contains("simulate-launch") == true)
        #expect(hello.hello?.commands.contains("reload") == true)
        #expect(hello.hello?.commands.contains("activity") == true)

        let submit = try client.request(ControlRequest(.submit, identifier: "test.sleepy", earliest: hour))
        #expect(submit.ok, "\(submit.error?.description ?? "")")
        #expect(submit.pending?.first?.earliest == hour)
        #expect(try client.request(ControlRequest(.submit, identifier: "test.other", earliest: hour)).ok)
        let pending = try client.request(ControlRequest(.pending))
        #expect(pending.pending?.map(\.identifier).sorted() == ["test.other", "test.sleepy"])
        #expect(pending.pending?.allSatisfy { $0.place == .queued } == true)

        let cancel = try client.request(ControlRequest(.cancel, identifier: "test.other"))
        #expect(cancel.ok && cancel.message == "cancelled test.other")
        #expect(try client.request(ControlRequest(.pending)).pending?.map(\.identifier) == ["test.sleepy"])

        // simulate-launch: a real process starts now, an hour before its earliest begin date.
        let launch = try client.request(ControlRequest(.simulateLaunch, identifier: "test.sleepy"))
        #expect(launch.ok, "\(launch.error?.description ?? "")")
        let run = try #require(launch.snapshot?.runs.first { $0.identifier == "test.sleepy" })
        let started = served.harness.wait { served.harness.lines.all.contains { $0.contains("test.sleepy[\(run.runID)] started pid") } }
        #expect(started)
        let again = try client.request(ControlRequest(.simulateLaunch, identifier: "test.sleepy"))
        #expect(again.error?.code == "run-in-flight")

        let why = try client.request(ControlRequest(.why, identifier: "test.sleepy"))
        #expect(why.why?.reasons.contains(.running) == true)

        // simulate-expiration: SIGTERM to the real process; it ends expired, well before 30 s.
        let expire = try client.request(ControlRequest(.simulateExpiration, identifier: "test.sleepy"))
        #expect(expire.ok, "\(expire.error?.description ?? "")")
        #expect(served.harness.wait(timeout: 10) { served.harness.outcomes()["test.sleepy"] == [.expired] })
        #expect(try client.request(ControlRequest(.simulateExpiration, identifier: "test.sleepy")).error?.code == "not-running")

        let status = try client.request(ControlRequest(.status, runs: 5))
        #expect(status.status?.runs.first?.outcome == "expired")
        #expect(status.status?.runs.first?.signal == SIGTERM)

        #expect(try client.request(ControlRequest(.submit, identifier: "test.other", earliest: hour)).ok)
        let all = try client.request(ControlRequest(.cancelAll))
        #expect(all.message == "cancelled 1 pending request")
        #expect(try client.request(ControlRequest(.snapshot)).snapshot?.pending.isEmpty == true)
        let metrics = try client.request(ControlRequest(.metrics))
        #expect(metrics.ok && metrics.metrics != nil)
    }

    @Test func subscribersArePushedObservationsAndSnapshots() throws {
        let served = try Served(register: Self.register)
        defer { served.close() }
        let watcher = try served.client()
        let first = try watcher.request(ControlRequest(.subscribe))
        #expect(first.ok && first.snapshot != nil)
        #expect(try served.client().request(ControlRequest(.submit, identifier: "test.other")).ok)
        var kinds: [RuntimeObservation.Kind] = []
        var sawSnapshotWithRun = false
        let end = Date().addingTimeInterval(5)
        while Date() < end, !(kinds.contains(.finished) && sawSnapshotWithRun) {
            guard let push = try watcher.read() else { break }
            if let o = push.observation { kinds.append(o.kind) }
            if push.snapshot?.runs.contains(where: { $0.identifier == "test.other" }) == true { sawSnapshotWithRun = true }
        }
        #expect(kinds.contains(.submitted) && kinds.contains(.launched) && kinds.contains(.finished))
        #expect(sawSnapshotWithRun)
    }

    @Test func aThousandClientsWhileAJobKeepsLaunchingOnTime() throws {
        var limits = ControlServer.Limits()
        limits.maxClients = 1000  // the default is 64 (run --max-control-clients)
        let served = try Served(limits: limits, register: { scheduler in
            scheduler.register(TaskDefinition(identifier: "test.beat", kind: .processing, resubmit: .after(.milliseconds(100))),
                               command: CommandJob(argv: ["/bin/true"]))
        })
        defer { served.close() }
        try served.harness.scheduler.submit(TaskRequest(identifier: "test.beat", kind: .processing))
        #expect(served.harness.wait { served.harness.runs().count >= 2 })
        let before = served.harness.runs().count
        let began = Date()
        var clients: [ControlClient] = []
        for _ in 0..<1000 { clients.append(try served.client()) }
        for c in clients { try c.send(ControlRequest(.pending)) }
        var ok = 0
        for c in clients where (try? c.read())??.ok == true { ok += 1 }
        let took = Date().timeIntervalSince(began)
        clients.removeAll()
        usleep(300_000)
        #expect(ok == 1000)
        let runs = served.harness.runs().dropFirst(before)
        let lateness = runs.map { $0.started.duration(since: $0.earliest).wholeMilliseconds }.sorted()
        #expect(!lateness.isEmpty)
        let p50 = lateness.isEmpty ? 0 : lateness[lateness.count / 2]
        let worst = lateness.last ?? 0
        print("1000 clients answered in \(Int(took * 1000)) ms; meanwhile \(lateness.count) launches, lateness p50 \(p50) ms, max \(worst) ms")
        #expect(worst < 500, "launches stayed on time while 1000 clients were served")
    }
}
