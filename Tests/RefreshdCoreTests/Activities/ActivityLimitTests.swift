import Testing
@testable import RefreshdCore

/// Refused starts: disabled, the payload limit, the concurrency limit, bad JSON; owner failure.
@Suite struct ActivityLimitTests {
    let t0 = ActivityDriver.t0

    @Test func startsAreRefusedWhenDisabled() {
        var d = ActivityDriver(settings: ActivitySettings(enabled: false))
        #expect(d.send(ActivityDriver.request("a")) == .disabled(id: "a"))
        #expect(d.machine.activities.isEmpty)
        d.send(.settingsChanged(ActivitySettings(enabled: true)))
        #expect(d.send(ActivityDriver.request("a")) == nil)
    }

    @Test func thePayloadLimitCountsAttributesAndContentTogether() {
        var d = ActivityDriver()
        let attributes = #"{"pack":"autumn"}"#   // 17 bytes
        let fits = #"{"x":""# + String(repeating: "a", count: 4096 - attributes.utf8.count - 8) + #""}"#
        #expect(attributes.utf8.count + fits.utf8.count == 4096)
        #expect(d.send(.request(ActivityRequest(id: "a", typeName: "T", namespace: "app", attributes: attributes, content: fits))) == nil)
        let over = fits.replacingOccurrences("a", "é", once: true)
        #expect(d.send(.request(ActivityRequest(id: "b", typeName: "T", namespace: "app", attributes: attributes, content: over)))
                == .payloadTooLarge(id: "b", bytes: 4097, limit: 4096))
        // Updates and final content are held to the same limit.
        #expect(d.send(.update(ActivityUpdate(id: "a", content: over, timestamp: t0))) == .payloadTooLarge(id: "a", bytes: 4097, limit: 4096))
        #expect(d.send(.end(id: "a", content: over, policy: .default, timestamp: t0)) == .payloadTooLarge(id: "a", bytes: 4097, limit: 4096))
        #expect(d.state("a") == .active)
    }

    @Test func theNamespaceConcurrencyLimitCountsPendingActiveAndStale() {
        var d = ActivityDriver(settings: ActivitySettings(maxConcurrentPerNamespace: 3))
        d.send(ActivityDriver.request("a"))
        d.send(ActivityDriver.request("b", staleDate: t0))
        d.send(ActivityDriver.request("c", startAt: t0 + .seconds(60)))
        #expect(d.send(ActivityDriver.request("d")) == .tooManyActivities(id: "d", namespace: "app", limit: 3))
        #expect(d.send(ActivityDriver.request("d", ns: "other")) == nil)
        // An ended activity no longer counts.
        d.send(.end(id: "a", content: nil, policy: .default, timestamp: t0))
        #expect(d.send(ActivityDriver.request("e")) == nil)
        #expect(d.machine.liveActivities(in: "app") == 3)
        // Lowering the limit keeps what is there and refuses new ones.
        d.send(.settingsChanged(ActivitySettings(maxConcurrentPerNamespace: 1)))
        #expect(d.machine.liveActivities(in: "app") == 3)
        #expect(d.send(ActivityDriver.request("f")) == .tooManyActivities(id: "f", namespace: "app", limit: 1))
    }

    @Test func contentAndAttributesMustBeJSONObjects() {
        var d = ActivityDriver()
        let error = d.send(.request(ActivityRequest(id: "a", typeName: "T", namespace: "app", attributes: "[1]")))
        #expect(error == .invalidField(id: "a", field: "attributes", expected: #"a JSON object (expected a JSON object, found "[" at byte 0)"#))
        #expect(d.send(.request(ActivityRequest(id: "a", typeName: "T", namespace: "app", content: #"{"a":1,}"#))) != nil)
        #expect(d.send(.request(ActivityRequest(id: "", typeName: "T", namespace: "app")))
                == .invalidField(id: "", field: "id", expected: "a non-empty activity id"))
        #expect(d.machine.activities.isEmpty)
    }

    @Test func anOwnersFailureEndsItsActivitiesWithTheFailureInTheirContent() {
        var d = ActivityDriver()
        d.send(ActivityDriver.request("a", owner: "job.download", content: #"{"progress":0.25,"failure":"old"}"#))
        d.send(ActivityDriver.request("b", owner: "job.download", staleDate: t0))
        d.send(ActivityDriver.request("c", owner: "job.other"))
        d.send(ActivityDriver.request("p", owner: "job.download", startAt: t0 + .hours(1)))
        d.send(ActivityDriver.request("e", owner: "job.download"))
        d.send(.end(id: "e", content: #"{"progress":1}"#, policy: .default, timestamp: t0))
        d.send(.ownerFinished(owner: "job.download", outcome: .expired, reason: "allowance used up"), at: t0 + .seconds(30))
        #expect(d.state("a") == .ended)
        #expect(d.state("b") == .ended)
        #expect(d.state("c") == .active)
        #expect(d.state("p") == .pending)
        #expect(d.activity("e")?.endCause == .endedByRequest)   // it ended itself: untouched
        #expect(d.activity("e")?.content == #"{"progress":1}"#)
        let a = d.activity("a")
        #expect(a?.endCause == .ownerFailed)
        #expect(a?.dismissalPolicy == .default)
        #expect(a?.content == #"{"progress":0.25,"failure":{"outcome":"expired","reason":"allowance used up"}}"#)
        #expect(d.machine.snapshot().activities.first { $0.id == "a" }?.progressPercent == 25)
        #expect(d.transitions.filter { $0.cause == .ownerFailed }.map(\.id) == ["a", "b"])
        // A success ends nothing.
        d.send(.ownerFinished(owner: "job.other", outcome: .success, reason: nil))
        #expect(d.state("c") == .active)
    }
}

extension String {
    fileprivate func replacingOccurrences(_ target: String, _ replacement: String, once: Bool) -> String {
        guard let range = firstRange(of: target) else { return self }
        var copy = self
        copy.replaceSubrange(range, with: replacement)
        return copy
    }
}
