import Testing
@testable import RefreshdCore

/// Updates: ordering by timestamp, the high-priority budget, holding and coalescing.
@Suite struct ActivityUpdateTests {
    let t0 = ActivityDriver.t0

    @Test func anOlderUpdateIsIgnoredAndLogged() {
        var d = ActivityDriver()
        d.send(ActivityDriver.request("a"))
        d.send(ActivityDriver.update("a", progress: 0.5, at: t0 + .seconds(20)), at: t0 + .seconds(20))
        d.send(ActivityDriver.update("a", progress: 0.3, at: t0 + .seconds(10)), at: t0 + .seconds(30))
        #expect(d.activity("a")?.content == #"{"progress":0.5}"#)
        #expect(d.activity("a")?.updatesIgnored == 1)
        #expect(d.logs.last == .updateIgnored(id: "a", timestamp: t0 + .seconds(10), reason: .outOfOrder(lastApplied: t0 + .seconds(20))))
        // An equal timestamp is not older: applied.
        d.send(ActivityDriver.update("a", progress: 0.6, at: t0 + .seconds(20)))
        #expect(d.activity("a")?.content == #"{"progress":0.6}"#)
    }

    @Test func anUpdateReturnsAStaleActivityToActive() {
        var d = ActivityDriver()
        d.send(ActivityDriver.request("a", staleDate: t0 + .seconds(60)))
        d.advance(to: t0 + .seconds(60))
        #expect(d.state("a") == .stale)
        d.send(ActivityDriver.update("a", progress: 0.7, at: t0 + .seconds(90), staleDate: t0 + .seconds(200)), at: t0 + .seconds(90))
        #expect(d.state("a") == .active)
        #expect(d.transitions(of: "a").last?.cause == .updated)
        #expect(d.machine.snapshot().activities.first?.progressPercent == 70)
    }

    @Test func finalContentOlderThanTheLastUpdateIsDroppedButTheEndHappens() {
        var d = ActivityDriver()
        d.send(ActivityDriver.request("a"))
        d.send(ActivityDriver.update("a", progress: 0.9, at: t0 + .seconds(20)), at: t0 + .seconds(20))
        d.send(.end(id: "a", content: #"{"progress":0.1}"#, policy: .default, timestamp: t0 + .seconds(5)))
        #expect(d.state("a") == .ended)
        #expect(d.activity("a")?.content == #"{"progress":0.9}"#)
        #expect(d.logs.contains(.endContentDropped(id: "a", timestamp: t0 + .seconds(5), lastApplied: t0 + .seconds(20))))
    }

    @Test func highPriorityUpdatesOverTheBudgetAreHeldAndCoalesced() {
        var d = ActivityDriver(settings: ActivitySettings(highPriorityBudgetPerHour: 3))
        d.send(ActivityDriver.request("a"))
        for i in 0..<3 {
            let at = t0 + .seconds(60 * i)
            d.send(ActivityDriver.update("a", progress: Double(i) / 10, at: at, priority: .high), at: at)
        }
        #expect(d.activity("a")?.updatesApplied == 3)
        // Fourth and fifth: held, the latest wins; the budget returns 1 h after the first use.
        d.send(ActivityDriver.update("a", progress: 0.4, at: t0 + .seconds(600), priority: .high), at: t0 + .seconds(600))
        d.send(ActivityDriver.update("a", progress: 0.5, at: t0 + .seconds(700), priority: .high), at: t0 + .seconds(700))
        #expect(d.activity("a")?.content == #"{"progress":0.2}"#)
        let held = d.activity("a")?.held
        #expect(held?.content == #"{"progress":0.5}"#)
        #expect(held?.coalesced == 2)
        #expect(held?.heldSince == t0 + .seconds(600))
        #expect(held?.release == t0 + .seconds(3600))
        #expect(d.machine.nextDeadline == t0 + .seconds(3600))
        let status = d.machine.snapshot().activities.first
        #expect(status?.held?.coalesced == 2)
        #expect(status?.budgetUsed == 3)
        // Low priority does not count and is not held.
        d.send(ActivityDriver.update("a", progress: 0.45, at: t0 + .seconds(650)), at: t0 + .seconds(800))
        #expect(d.activity("a")?.content == #"{"progress":0.45}"#)
        #expect(d.activity("a")?.held != nil)   // older than the held one: the held one still comes
        d.advance(to: t0 + .seconds(3600))
        #expect(d.activity("a")?.content == #"{"progress":0.5}"#)
        #expect(d.activity("a")?.held == nil)
        #expect(d.activity("a")?.highPriorityUses == [t0 + .seconds(60), t0 + .seconds(120), t0 + .seconds(3600)])
    }

    @Test func aNewerLowPriorityUpdateSupersedesTheHeldOne() {
        var d = ActivityDriver(settings: ActivitySettings(highPriorityBudgetPerHour: 1))
        d.send(ActivityDriver.request("a"))
        d.send(ActivityDriver.update("a", progress: 0.1, at: t0, priority: .high))
        d.send(ActivityDriver.update("a", progress: 0.2, at: t0 + .seconds(10), priority: .high), at: t0 + .seconds(10))
        #expect(d.activity("a")?.held != nil)
        d.send(ActivityDriver.update("a", progress: 0.3, at: t0 + .seconds(20)), at: t0 + .seconds(20))
        #expect(d.activity("a")?.held == nil)
        #expect(d.logs.contains(.updateIgnored(id: "a", timestamp: t0 + .seconds(10), reason: .superseded(by: t0 + .seconds(20)))))
        d.advance(to: t0 + .seconds(7200))
        #expect(d.activity("a")?.content == #"{"progress":0.3}"#)
    }

    @Test func frequentUpdatesGetTheLargerBudget() {
        var d = ActivityDriver(settings: ActivitySettings(highPriorityBudgetPerHour: 2, frequentUpdatesBudgetPerHour: 5))
        d.send(ActivityDriver.request("a", frequent: true))
        d.send(ActivityDriver.request("b", frequent: false))
        for i in 0..<5 {
            let at = t0 + .seconds(i)
            d.send(ActivityDriver.update("a", progress: 0.1, at: at, priority: .high), at: at)
            d.send(ActivityDriver.update("b", progress: 0.1, at: at, priority: .high), at: at)
        }
        #expect(d.activity("a")?.held == nil)
        #expect(d.activity("a")?.updatesApplied == 5)
        #expect(d.activity("b")?.updatesApplied == 2)
        #expect(d.activity("b")?.held?.coalesced == 3)
    }

    @Test func theBudgetIsARollingHour() {
        var d = ActivityDriver(settings: ActivitySettings(highPriorityBudgetPerHour: 2))
        d.send(ActivityDriver.request("a"))
        d.send(ActivityDriver.update("a", progress: 0.1, at: t0, priority: .high))
        d.send(ActivityDriver.update("a", progress: 0.2, at: t0 + .seconds(1800), priority: .high), at: t0 + .seconds(1800))
        // At 1 h exactly the first use has left the window.
        d.send(ActivityDriver.update("a", progress: 0.3, at: t0 + .seconds(3600), priority: .high), at: t0 + .seconds(3600))
        #expect(d.activity("a")?.held == nil)
        d.send(ActivityDriver.update("a", progress: 0.4, at: t0 + .seconds(3601), priority: .high), at: t0 + .seconds(3601))
        #expect(d.activity("a")?.held?.release == t0 + .seconds(1800 + 3600))
    }

    @Test func endingDropsAHeldUpdate() {
        var d = ActivityDriver(settings: ActivitySettings(highPriorityBudgetPerHour: 1))
        d.send(ActivityDriver.request("a"))
        d.send(ActivityDriver.update("a", progress: 0.1, at: t0, priority: .high))
        d.send(ActivityDriver.update("a", progress: 0.2, at: t0 + .seconds(1), priority: .high), at: t0 + .seconds(1))
        d.send(.end(id: "a", content: nil, policy: .default, timestamp: t0 + .seconds(2)), at: t0 + .seconds(2))
        #expect(d.activity("a")?.held == nil)
        #expect(d.logs.contains(.updateIgnored(id: "a", timestamp: t0 + .seconds(1), reason: .endedWhileHeld)))
        #expect(d.machine.nextDeadline == t0 + .seconds(2) + .hours(4))
    }

    @Test func updatesToEndedAndDismissedActivitiesAreIgnoredAndLogged() {
        var d = ActivityDriver()
        d.send(ActivityDriver.request("a"))
        d.send(ActivityDriver.request("b"))
        d.send(.end(id: "a", content: nil, policy: .default, timestamp: t0))
        d.send(.end(id: "b", content: nil, policy: .immediate, timestamp: t0))
        #expect(d.send(ActivityDriver.update("a", progress: 1, at: t0 + .seconds(1))) == nil)
        #expect(d.send(ActivityDriver.update("b", progress: 1, at: t0 + .seconds(1))) == nil)
        #expect(d.logs.suffix(2) == [.updateIgnored(id: "a", timestamp: t0 + .seconds(1), reason: .notUpdatable(.ended)),
                                     .updateIgnored(id: "b", timestamp: t0 + .seconds(1), reason: .notUpdatable(.dismissed))])
        #expect(d.send(ActivityDriver.update("never", progress: 1, at: t0)) == .unknownActivity(id: "never", event: .update))
    }
}
