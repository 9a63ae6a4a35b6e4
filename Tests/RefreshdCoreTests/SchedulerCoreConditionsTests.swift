import Testing
@testable import RefreshdCore

@Suite struct SchedulerCoreConditionsTests {
    let maintenance = TaskDefinition(identifier: "p.maint", kind: .processing,
                                     requiresExternalPower: true, requiresNetworkConnectivity: true)

    @Test func dueRequestAsksForFreshConditionsAndWaits() throws {
        var d = VirtualDriver([maintenance])
        try d.submit("p.maint", in: .seconds(5), kind: .processing)
        #expect(!d.watching)
        d.advance(by: .seconds(5))
        #expect(d.launched.isEmpty)
        #expect(d.watching)  // the shell reads conditions now and reports them
        d.send(.conditionsChanged(Conditions(externalPower: false, network: true)))
        #expect(d.launched.isEmpty)
        #expect(d.watching)
        #expect(d.armed == nil)  // nothing to wake for: it waits on an event, not a poll
        d.now = d.now + .hours(1)
        d.send(.conditionsChanged(Conditions(externalPower: true, network: true)))
        #expect(d.launched.map(\.identifier) == ["p.maint"])
        #expect(!d.watching)
    }

    @Test func appRefreshIgnoresConditions() throws {
        let def = TaskDefinition(identifier: "a.r", requiresExternalPower: true)
        var d = VirtualDriver([def])
        try d.submit("a.r")
        d.fireNext()
        #expect(d.launched.count == 1)
    }

    @Test func waitingRequestKeepsDueOrderWhenReleased() throws {
        let defs = (0..<3).map { TaskDefinition(identifier: "p.\($0)", kind: .processing, requiresNetworkConnectivity: true) }
        var d = VirtualDriver(defs)
        for i in [2, 0, 1] { try d.submit("p.\(i)", in: .seconds(Int64(i)), kind: .processing) }
        d.advance(by: .seconds(3))
        d.send(.conditionsChanged(Conditions(externalPower: true, network: false)))
        #expect(d.launched.isEmpty)
        d.send(.conditionsChanged(Conditions(externalPower: true, network: true)))
        #expect(d.launched.map(\.identifier) == ["p.0", "p.1", "p.2"])
    }
}
