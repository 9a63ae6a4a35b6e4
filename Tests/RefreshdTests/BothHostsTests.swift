import Foundation
import Testing
@testable import Refreshd
import RefreshdCore
import RefreshdRuntime
import RefreshdSimulation

/// The shell tests that matter, on both hosts: the libuv loop with real processes in real time,
/// and the simulated host with modelled processes in virtual time. Same runtime, same
/// assertions; the simulated runs take milliseconds.
@Suite(.serialized) struct BothHostsTests {
    @Test(arguments: HostKind.allCases)
    func expirationThenKillAfterGrace(_ kind: HostKind) throws {
        let h = try HostKind.harness(kind)
        defer { h.finish() }
        h.job(TaskDefinition(identifier: "t.stubborn", kind: .processing, allowance: .milliseconds(200),
                             grace: .milliseconds(100)),
              Work(duration: .seconds(30), ignoresTerminate: true))
        try h.start()
        try h.runtime.submit(TaskRequest(identifier: "t.stubborn", kind: .processing))
        #expect(h.wait(.seconds(5)) { h.outcomes("t.stubborn") == [.expired] })
        let run = try #require(h.runs().first)
        #expect(run.signal == 9)  // it ignored SIGTERM, so SIGKILL ended it
        let took = run.ended!.duration(since: run.started)
        #expect(took >= .milliseconds(300) && took < .milliseconds(1300), "\(took)")
    }

    @Test(arguments: HostKind.allCases)
    func submitReplacesThePendingRequest(_ kind: HostKind) throws {
        let h = try HostKind.harness(kind)
        defer { h.finish() }
        h.job(TaskDefinition(identifier: "t.refresh"), Work())
        try h.start()
        try h.runtime.submit(TaskRequest(identifier: "t.refresh", earliestBeginDate: h.now + .seconds(3600)))
        try h.runtime.submit(TaskRequest(identifier: "t.refresh", earliestBeginDate: h.now + .milliseconds(100)))
        #expect(h.runtime.pendingRequests().count == 1)
        #expect(h.wait(.seconds(5)) { h.outcomes("t.refresh") == [.success] })
        h.pass(.milliseconds(200))
        #expect(h.runs().count == 1)
        #expect(h.runtime.pendingRequests().isEmpty)
    }

    @Test(arguments: HostKind.allCases)
    func aMissedRunAfterARestartRunsOnce(_ kind: HostKind) throws {
        let h = try HostKind.harness(kind)
        defer { h.finish() }
        h.job(TaskDefinition(identifier: "t.periodic", kind: .processing, resubmit: .after(.seconds(10))), Work())
        try h.start()
        try h.runtime.submit(TaskRequest(identifier: "t.periodic", kind: .processing,
                                         earliestBeginDate: h.now + .milliseconds(300)))
        try h.restart(downtime: .milliseconds(1200))  // down before it was due, for four intervals of it
        #expect(h.wait(.seconds(3)) { h.runs().count == 1 })
        h.pass(.milliseconds(300))
        #expect(h.outcomes("t.periodic") == [.success])
        // The next request counts from that launch, not from the missed date.
        let next = try #require(h.runtime.pending("t.periodic"))
        #expect(next.earliest > h.now + .seconds(9))
    }

    @Test(arguments: HostKind.allCases)
    func aClockStepPastASlotRunsItOnce(_ kind: HostKind) throws {
        let h = try HostKind.harness(kind)
        defer { h.finish() }
        let tenMinutes = Schedule("every 10m") { t in Instant(milliseconds: (t.milliseconds / 600_000 + 1) * 600_000) }
        h.job(TaskDefinition(identifier: "cal.job", kind: .processing, resubmit: .calendar(tenMinutes), missed: .once), Work())
        try h.start()
        try h.runtime.submitFirstRequest("cal.job")
        let slot = try #require(h.runtime.pending("cal.job")).earliest
        h.pass(.milliseconds(50))
        #expect(h.runs().isEmpty)
        // The wall clock jumps an hour ahead: six slots were jumped over; missed: once runs one.
        h.stepClock(by: .seconds(3600))
        #expect(h.wait(.seconds(3)) { h.outcomes("cal.job") == [.success] })
        h.pass(.milliseconds(200))
        #expect(h.runs().count == 1)
        #expect(try #require(h.runtime.pending("cal.job")).earliest >= slot + .seconds(3600))
    }

    @Test(arguments: HostKind.allCases)
    func reloadAppliesTheDiff(_ kind: HostKind) throws {
        let h = try HostKind.harness(kind)
        defer { h.finish() }
        try h.start()
        func spec(_ id: String, allowance: Duration = .seconds(30), first: FirstRequest) -> JobSpec {
            JobSpec(definition: TaskDefinition(identifier: id, kind: .processing, allowance: allowance),
                    command: Work().command, firstRequest: first)
        }
        h.runtime.load([spec("a.keep", first: .after(.seconds(3600))), spec("b.change", first: .after(.seconds(3600))),
                        spec("c.remove", first: .after(.seconds(3600)))])
        let kept = try #require(h.runtime.pending("a.keep")).earliest
        h.pass(.milliseconds(20))
        let plan = h.runtime.reload([spec("a.keep", first: .after(.seconds(3600))),
                                     spec("b.change", allowance: .seconds(5), first: .after(.seconds(7200))),
                                     spec("d.add", first: .after(.milliseconds(50)))], reason: "test")
        #expect(plan.summary == "1 added, 1 changed, 1 removed, 1 unchanged")
        #expect(h.runtime.pending("a.keep")?.earliest == kept)       // unchanged: left alone
        #expect(h.runtime.pending("c.remove") == nil)                 // removed: cancelled
        #expect(try #require(h.runtime.pending("b.change")).earliest > kept + .seconds(3000))  // replaced
        #expect(h.wait(.seconds(3)) { h.outcomes("d.add") == [.success] })  // added: seeded and run
    }

    /// A reload that adds, changes and removes jobs is one event from outside: ONE transaction
    /// (SQLite under libuv, the in-memory store in simulation), whatever it takes inside.
    @Test(arguments: HostKind.allCases)
    func aReloadCommitsOnce(_ kind: HostKind) throws {
        let h = try HostKind.harness(kind)
        defer { h.finish() }
        try h.start()
        func spec(_ id: String, allowance: Duration = .seconds(30), first: FirstRequest) -> JobSpec {
            JobSpec(definition: TaskDefinition(identifier: id, kind: .processing, allowance: allowance),
                    command: Work().command, firstRequest: first)
        }
        h.runtime.load([spec("a.keep", first: .after(.seconds(3600))), spec("b.change", first: .after(.seconds(3600))),
                        spec("c.remove", first: .after(.seconds(3600)))])
        h.pass(.milliseconds(20))
        let before = h.runtime.committedTransactions
        let plan = h.runtime.reload([spec("a.keep", first: .after(.seconds(3600))),
                                     spec("b.change", allowance: .seconds(5), first: .after(.seconds(7200))),
                                     spec("d.add", first: .after(.seconds(3600))), spec("e.add", first: .after(.seconds(3600)))],
                                    reason: "test")
        #expect(plan.summary == "2 added, 1 changed, 1 removed, 1 unchanged")
        #expect(h.runtime.committedTransactions == before + 1)
        #expect(h.runtime.pendingRequests().map(\.identifier).sorted() == ["a.keep", "b.change", "d.add", "e.add"])
    }
}


extension HostKind {
    static func harness(_ kind: HostKind) throws -> any HostHarness {
        switch kind {
        case .libuv: try LibuvHarness()
        case .simulated: try SimulatedHarness()
        }
    }
}

/// Issue 22: rules that lived only in the libuv host, now runtime decisions run on both hosts.
@Suite(.serialized) struct BothHostsProcessRulesTests {
    /// The stop signal as each host receives it: the libuv host's signal handler entry point,
    /// the simulated host's modelled signal.
    static func stopSignal(_ h: any HostHarness) {
        if let h = h as? LibuvHarness {
            h.scheduler!.received(signal: SIGTERM)
        } else if let h = h as? SimulatedHarness {
            h.host.deliverStopSignal("SIGTERM")
        }
    }

    static func stopped(_ h: any HostHarness) -> Bool {
        if let h = h as? SimulatedHarness { return h.host.stopped }
        return h.runtime.snapshot().stopped
    }

    @Test(arguments: HostKind.allCases)
    func aSecondStopSignalKillsEveryRunAtOnce(_ kind: HostKind) throws {
        let h = try HostKind.harness(kind)
        defer { h.finish() }
        // Ignores the expiration and has a long grace: only the second signal ends it soon.
        h.job(TaskDefinition(identifier: "t.stubborn", kind: .processing, allowance: .seconds(60), grace: .seconds(60)),
              Work(duration: .seconds(60), ignoresTerminate: true))
        try h.start()
        // Whatever the outcome, the stubborn command does not outlive the test.
        defer { h.runtime.stop(immediate: true) }
        try h.runtime.submit(TaskRequest(identifier: "t.stubborn", kind: .processing))
        #expect(h.wait(.seconds(5)) { h.runtime.snapshot().runs.count == 1 })
        h.pass(.milliseconds(300))  // the shell has installed its trap
        Self.stopSignal(h)
        h.pass(.milliseconds(300))
        #expect(h.runtime.isStopping)
        #expect(h.runtime.snapshot().runs.count == 1)  // the first signal only asked it to stop
        let second = h.now
        Self.stopSignal(h)
        #expect(h.wait(.seconds(5)) { Self.stopped(h) })
        let run = try #require(h.runs().first)
        #expect(run.outcome == .interrupted)
        #expect(run.signal == 9)
        let took = try #require(run.ended).duration(since: second)
        #expect(took < .seconds(3), "\(took)")
    }
}

extension BothHostsProcessRulesTests {
    /// Observations of one kind, counted, whatever thread reports them.
    final class Seen: @unchecked Sendable {
        private let lock = NSLock()
        private var all: [RuntimeObservation] = []
        func add(_ o: RuntimeObservation) { lock.withLock { all.append(o) } }
        func of(_ kind: RuntimeObservation.Kind, _ id: String) -> [RuntimeObservation] {
            lock.withLock { all.filter { $0.kind == kind && $0.identifier == id } }
        }
    }

    /// A flood of output in one instant: the runtime logs 200 lines (its limit a second) and
    /// reports the other 800 as dropped, on both hosts (the libuv host reads `seq`'s real
    /// output, the simulated host reports modelled lines).
    @Test(arguments: HostKind.allCases)
    func anOutputFloodIsLimitedByTheRuntime(_ kind: HostKind) throws {
        let h = try HostKind.harness(kind)
        defer { h.finish() }
        let lines = (1...1000).map(String.init)
        if let sim = h as? SimulatedHarness {
            let modelled = sim.host.behaviour
            sim.host.behaviour = { order, job in
                order.identifier == "t.flood" ? SimulatedHost.Behaviour(output: lines) : modelled(order, job)
            }
        }
        try h.start()
        let seen = Seen()
        h.runtime.observe { seen.add($0) }
        h.runtime.register(TaskDefinition(identifier: "t.flood"),
                           handler: .command(CommandJob(argv: ["/bin/sh", "-c", "seq 1 1000"])))
        try h.runtime.submit(TaskRequest(identifier: "t.flood"))
        #expect(h.wait(.seconds(5)) { h.outcomes("t.flood") == [.success] })
        let logged = seen.of(.output, "t.flood")
        #expect(logged.count == 200)
        #expect(logged.first?.message == "t.flood[1] stdout: 1")
        let dropped = seen.of(.outputDropped, "t.flood")
        #expect(dropped.map(\.count) == [800])
        #expect(dropped.first?.message.hasSuffix("800 lines (2401 bytes) of output not logged: over 200 lines or 256 KiB a second") == true,
                "\(dropped.map(\.message))")
    }
}
