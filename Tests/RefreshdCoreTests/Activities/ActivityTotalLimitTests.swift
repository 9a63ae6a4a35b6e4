import Testing
@testable import RefreshdCore

/// The bounds across namespaces: activities held in total (ended ones too) and namespaces with
/// live activities. A client that names a new namespace per request, or starts and ends
/// activities in a loop, cannot make the machine hold more.
@Suite struct ActivityTotalLimitTests {
    let t0 = ActivityDriver.t0

    @Test func namespacesWithLiveActivitiesAreBounded() {
        var d = ActivityDriver(settings: ActivitySettings(maxNamespaces: 3))
        for i in 0..<3 { #expect(d.send(ActivityDriver.request("a\(i)", ns: "ns\(i)")) == nil) }
        #expect(d.send(ActivityDriver.request("b", ns: "ns3")) == .tooManyNamespaces(id: "b", namespace: "ns3", limit: 3))
        // An existing namespace still takes more.
        #expect(d.send(ActivityDriver.request("c", ns: "ns0")) == nil)
        // A namespace whose activities all ended no longer counts.
        d.send(.end(id: "a1", content: nil, policy: .default, timestamp: t0))
        #expect(d.machine.liveNamespaces == 2)
        #expect(d.send(ActivityDriver.request("b", ns: "ns3")) == nil)
        #expect(d.machine.checkInvariants().isEmpty)
    }

    @Test func activitiesHeldInTotalAreBoundedEndedOnesIncluded() {
        var d = ActivityDriver(settings: ActivitySettings(maxConcurrentPerNamespace: 2, maxActivitiesTotal: 4, maxNamespaces: 10))
        #expect(d.send(ActivityDriver.request("a", ns: "x")) == nil)
        #expect(d.send(ActivityDriver.request("b", ns: "y")) == nil)
        #expect(d.send(ActivityDriver.request("c", ns: "z")) == nil)
        d.send(.end(id: "a", content: nil, policy: .default, timestamp: t0))
        #expect(d.send(ActivityDriver.request("d", ns: "w")) == nil)
        // Four held (one ended, still visible): the fifth is refused, whatever its namespace.
        #expect(d.send(ActivityDriver.request("e", ns: "v")) == .tooManyInTotal(id: "e", limit: 4))
        // Dismissed at once: room again.
        d.send(.end(id: "b", content: nil, policy: .immediate, timestamp: t0))
        #expect(d.send(ActivityDriver.request("e", ns: "v")) == nil)
        #expect(d.machine.activities.count == 4)
        #expect(d.machine.checkInvariants().isEmpty)
    }
}
