import Testing
@testable import RefreshdCore

/// Issue 33, item 6: the dashboard's snapshot leaves out the pending requests of instances that
/// are neither failing nor paused (a million of them took the loop seconds to copy and sort);
/// the full snapshot keeps them all.
@Suite struct SnapshotQuietInstancesTests {
    static let t0 = InstanceMachineTests.t0
    static let keys = ["alice", "bob", "carol", "dave", "erin"]

    static func core() -> SchedulerCore {
        let id = { (key: String) in "app.feed.refresh[\(key)]" }
        let restored = SchedulerCore.RestoredState(
            pending: keys.enumerated().map { InstanceMachineTests.pending(id($1), earliest: t0 + .seconds(60 + $0), sequence: UInt64($0 + 1)) }
                + [PendingRequest(identifier: "app.plain", namespace: "app.plain", kind: .appRefresh, earliest: t0 + .seconds(120),
                                  submitted: t0, sequence: 9, requiresExternalPower: false, requiresNetworkConnectivity: false,
                                  origin: .submitted)],
            failureStreaks: [id("bob"): 2],
            records: [MachineRecord(table: SchedulerCore.pausedTable, key: id("carol"), value: "{\"since\":0}")],
            instances: keys.map { InstanceRecord(template: "app.feed.refresh", key: $0, values: [:]) })
        var core = SchedulerCore(configuration: SchedulerConfiguration())
        _ = core.handle(.declareTemplate(InstanceMachineTests.template, InstanceMachineTests.spec), at: t0)
        _ = core.handle(.declare(TaskDefinition(identifier: "app.plain", namespace: "app.plain", allowance: .seconds(30))), at: t0)
        _ = core.handle(.restore(restored), at: t0)
        return core
    }

    @Test func failingPausedAndAskedForInstancesStayTheOthersGo() {
        let core = Self.core()
        let all = core.snapshot()
        #expect(all.pending.map(\.identifier) == Self.keys.map { "app.feed.refresh[\($0)]" } + ["app.plain"])
        let light = core.snapshot(quietInstances: false)
        #expect(light.pending.map(\.identifier) == ["app.feed.refresh[bob]", "app.feed.refresh[carol]", "app.plain"])
        // Each kept request as the full snapshot shows it (where it waits, its wake-up).
        #expect(light.pending.allSatisfy { p in all.pending.contains(p) })
        #expect(light.failureStreaks == all.failureStreaks && light.paused == all.paused)
        let asked = core.snapshot(quietInstances: false, also: ["app.feed.refresh[erin]", "app.unknown"])
        #expect(asked.pending.map(\.identifier) == ["app.feed.refresh[bob]", "app.feed.refresh[carol]", "app.feed.refresh[erin]", "app.plain"])
        #expect(core.snapshot(quietInstances: true) == all)
    }
}
