import Foundation
import Testing
@testable import Refreshd
import RefreshdCore
import RefreshdRuntime

/// Issue 22: rules about the world that lived in the libuv host (resume detection at a
/// wake-up, the conditions re-read, the missing shared container), now runtime decisions that
/// both hosts carry out: the same rule and outcome on the real loop and in virtual time.
@Suite(.serialized) struct BothHostsWorldRulesTests {
    /// Observations, whatever thread reports them.
    final class Seen: @unchecked Sendable {
        private let lock = NSLock()
        private var observations: [RuntimeObservation] = []
        func add(_ o: RuntimeObservation) { lock.withLock { observations.append(o) } }
        func all(_ kind: RuntimeObservation.Kind) -> [RuntimeObservation] {
            lock.withLock { observations.filter { $0.kind == kind } }
        }
    }

    /// Moves the wall clock and not the monotonic one, with or without the kernel's notice (the
    /// libuv host's timerfd entry point; setting the real clock would need root).
    static func moveWallClock(_ h: any HostHarness, by delta: Duration, noticed: Bool) {
        if let h = h as? LibuvHarness {
            h.clock.step(by: delta.wholeMilliseconds)
            if noticed { h.scheduler!.injectClockSet() }
        } else if let h = h as? SimulatedHarness {
            h.host.stepClock(by: delta, noticed: noticed)
        }
    }

    /// A jump no notice announces (a resume on a kernel before 5.14, a step missed) is seen at
    /// the next wake-up when it is over 1 s; a drift up to 1 s is not a change.
    @Test(arguments: HostKind.allCases)
    func aJumpWithoutANoticeIsSeenAtTheNextWakeUpOverOneSecond(_ kind: HostKind) throws {
        let h = try HostKind.harness(kind)
        defer { h.finish() }
        // A run every 300 ms: a wake-up at least that often.
        h.job(TaskDefinition(identifier: "t.tick", kind: .processing, resubmit: .after(.milliseconds(300))), Work())
        try h.start()
        let seen = Seen()
        h.runtime.observe(includingRoutine: false) { seen.add($0) }
        try h.runtime.submit(TaskRequest(identifier: "t.tick", kind: .processing))
        #expect(h.wait(.seconds(5)) { h.runs().count >= 1 })
        // Half a second: NTP slewing or noise, never a change however many wake-ups see it.
        Self.moveWallClock(h, by: .milliseconds(500), noticed: false)
        let before = h.runs().count
        #expect(h.wait(.seconds(5)) { h.runs().count >= before + 2 })
        #expect(seen.all(.clockChanged).isEmpty)
        // An hour, unannounced: nothing until the next wake-up, then one change.
        Self.moveWallClock(h, by: .seconds(3600), noticed: false)
        #expect(h.wait(.seconds(5)) { !seen.all(.clockChanged).isEmpty })
        h.pass(.milliseconds(700))
        let changes = seen.all(.clockChanged)
        #expect(changes.count == 1, "\(changes.map(\.message))")
        // Measured from the offset before the change: the half second counts too.
        #expect(changes.first?.message.hasPrefix("wall clock changed by 1h00m") == true, "\(changes.map(\.message))")
    }

    /// The kernel's notice (the timerfd) is always a change, even under the tolerance.
    @Test(arguments: HostKind.allCases)
    func aNoticedStepIsAChangeAtOnceWhateverItsSize(_ kind: HostKind) throws {
        let h = try HostKind.harness(kind)
        defer { h.finish() }
        h.job(TaskDefinition(identifier: "t.later", kind: .processing), Work())
        try h.start()
        let seen = Seen()
        h.runtime.observe(includingRoutine: false) { seen.add($0) }
        try h.runtime.submit(TaskRequest(identifier: "t.later", kind: .processing, earliestBeginDate: h.now + .seconds(3600)))
        h.pass(.milliseconds(300))  // the loop runs and watches the timerfd
        Self.moveWallClock(h, by: .milliseconds(-400), noticed: true)
        #expect(h.wait(.seconds(5)) { !seen.all(.clockChanged).isEmpty })
        #expect(seen.all(.clockChanged).first?.message.hasPrefix("wall clock changed by -") == true)
    }

    /// Conditions that change with no notice (no netlink event: a container where uevents do
    /// not arrive) are found by the runtime's periodic re-read, one of its deadlines.
    @Test(arguments: HostKind.allCases)
    func conditionsChangedWithoutANoticeAreFoundByTheReread(_ kind: HostKind) throws {
        let h = try HostKind.harness(kind)
        defer { h.finish() }
        let files = try FakeConditions()
        defer { files.remove() }
        if let h = h as? LibuvHarness {
            h.conditionsProbe = files.probe
            h.conditionsReread = .milliseconds(200)
        } else if let h = h as? SimulatedHarness {
            h.conditionsReread = .milliseconds(200)
            h.host.setConditions(Conditions(externalPower: true, network: false))
        }
        h.job(TaskDefinition(identifier: "t.net", kind: .processing, requiresNetworkConnectivity: true), Work())
        try h.start()
        let seen = Seen()
        h.runtime.observe(includingRoutine: false) { seen.add($0) }
        try h.runtime.submit(TaskRequest(identifier: "t.net", kind: .processing))
        #expect(h.wait(.seconds(5)) { !seen.all(.waiting).isEmpty })
        // Every re-read while it waits is a fresh reading: it says again what the run waits for.
        #expect(h.wait(.seconds(5)) { seen.all(.waiting).count >= 3 })
        #expect(h.runs().isEmpty)
        if let h = h as? SimulatedHarness {
            h.host.setConditions(Conditions(externalPower: true, network: true), noticed: false)
        } else {
            try files.routeUp()
        }
        #expect(h.wait(.seconds(5)) { h.outcomes("t.net") == [.success] })
    }

    /// Without a shared container every publication fails, decided by the runtime before it
    /// asks a host to write: the same warning on both hosts, and nothing written.
    @Test(arguments: HostKind.allCases)
    func withoutASharedContainerEveryPublicationFails(_ kind: HostKind) throws {
        let h = try HostKind.harness(kind)
        defer { h.finish() }
        if let h = h as? LibuvHarness { h.inMemory = true }
        if let h = h as? SimulatedHarness { h.sharedContainer = nil }
        try h.start()
        let seen = Seen()
        h.runtime.observe(includingRoutine: false) { seen.add($0) }
        try h.runtime.requestActivity(ActivityRequest(id: "pack", typeName: "Download", namespace: "default"))
        #expect(h.wait(.seconds(5)) { !seen.all(.publishFailed).isEmpty })
        #expect(seen.all(.publishFailed).map(\.message) == ["not published: activities/pack.json: no shared container is configured"])
        if let h = h as? SimulatedHarness { #expect(h.host.publicationCount == 0) }
    }
}

/// A /sys and /proc/net/route stand-in: a link that is up, no default route until `routeUp`.
struct FakeConditions {
    let directory = TempDirectory.make()
    static let header = "Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\tMTU\tWindow\tIRTT\n"

    init() throws {
        let fake = directory + "/sys"
        try FileManager.default.createDirectory(atPath: fake + "/net/eth0", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: fake + "/power", withIntermediateDirectories: true)
        try "0x1003\n".write(toFile: fake + "/net/eth0/flags", atomically: true, encoding: .utf8)
        try Self.header.write(toFile: fake + "/route", atomically: true, encoding: .utf8)
    }

    var probe: ConditionsProbe {
        ConditionsProbe(powerSupplyDirectory: directory + "/sys/power", netDirectory: directory + "/sys/net",
                        ipv4RouteFile: directory + "/sys/route", ipv6RouteFile: directory + "/sys/none")
    }

    func routeUp() throws {
        try (Self.header + "eth0\t00000000\t0101A8C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n")
            .write(toFile: directory + "/sys/route", atomically: true, encoding: .utf8)
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }
}
