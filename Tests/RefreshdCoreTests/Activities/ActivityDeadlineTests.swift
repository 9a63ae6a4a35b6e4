import Testing
@testable import RefreshdCore

/// Every deadline on virtual time: start date, stale date, 8 h, 12 h, each dismissal policy and
/// the 4 h cap on `after`.
@Suite struct ActivityDeadlineTests {
    let t0 = ActivityDriver.t0
    let hour = Duration.seconds(3600)

    @Test func aStaleDateWithNoUpdateMakesItStaleExactlyThen() {
        var d = ActivityDriver()
        d.send(ActivityDriver.request("a", staleDate: t0 + .seconds(600)))
        #expect(d.machine.nextDeadline == t0 + .seconds(600))
        d.advance(to: t0 + .seconds(599))
        #expect(d.state("a") == .active)
        d.advance(to: t0 + .seconds(600))
        #expect(d.state("a") == .stale)
        #expect(d.transitions(of: "a").last == ActivityTransition(id: "a", from: .active, to: .stale, due: t0 + .seconds(600),
                                                                   applied: t0 + .seconds(600), cause: .staleDatePassed))
        let line = d.logs.map(\.description).first { $0.contains(" stale:") }
        #expect(line == "activity a (WallpaperPack) stale: no update since \(t0), stale date \(t0 + .seconds(600)) passed")
    }

    @Test func anUpdateBeforeTheStaleDateMovesIt() {
        var d = ActivityDriver()
        d.send(ActivityDriver.request("a", staleDate: t0 + .seconds(600)))
        d.send(ActivityDriver.update("a", progress: 0.5, at: t0 + .seconds(500), staleDate: t0 + .seconds(1200)), at: t0 + .seconds(500))
        d.advance(to: t0 + .seconds(1199))
        #expect(d.state("a") == .active)
        d.advance(to: t0 + .seconds(1200))
        #expect(d.state("a") == .stale)
    }

    @Test func aStaleDateAlreadyPastAtStartMakesItStaleAtOnce() {
        var d = ActivityDriver()
        d.send(ActivityDriver.request("a", staleDate: t0 - .seconds(1)))
        #expect(d.state("a") == .stale)
        #expect(d.transitions(of: "a") == [ActivityTransition(id: "a", from: nil, to: .stale, due: t0, applied: t0, cause: .requested)])
    }

    @Test func aStartDateKeepsItPendingUntilThen() {
        var d = ActivityDriver()
        d.send(ActivityDriver.request("a", staleDate: t0 + hour, startAt: t0 + hour))
        #expect(d.state("a") == .pending)
        #expect(d.machine.nextDeadline == t0 + hour)
        d.advance(to: t0 + hour - .milliseconds(1))
        #expect(d.state("a") == .pending)
        d.advance(to: t0 + hour)
        // The stale date is the start date: stale at once when it starts.
        #expect(d.state("a") == .stale)
        #expect(d.activity("a")?.start == t0 + hour)
    }

    @Test func theActiveLimitEndsItAfterEightHoursWithItsLastContent() {
        var d = ActivityDriver()
        d.send(ActivityDriver.request("a"))
        d.send(ActivityDriver.update("a", progress: 0.4, at: t0 + hour), at: t0 + hour)
        d.advance(to: t0 + .hours(8) - .milliseconds(1))
        #expect(d.state("a") == .active)
        d.advance(to: t0 + .hours(8))
        #expect(d.state("a") == .ended)
        let a = d.activity("a")
        #expect(a?.endCause == .activeLimit)
        #expect(a?.dismissalPolicy == .default)
        #expect(a?.content == #"{"progress":0.4}"#)
        // Default policy: 4 h after the end, which is also the 12 h limit.
        d.advance(to: t0 + .hours(12) - .milliseconds(1))
        #expect(d.state("a") == .ended)
        d.advance(to: t0 + .hours(12))
        #expect(d.state("a") == .dismissed)
        #expect(d.machine.activities.isEmpty)
        #expect(d.changes.last == .delete(id: "a"))
    }

    @Test func defaultPolicyDismissesFourHoursAfterTheEnd() {
        var d = ActivityDriver()
        d.send(ActivityDriver.request("a"))
        d.send(.end(id: "a", content: #"{"progress":1}"#, policy: .default, timestamp: t0 + hour), at: t0 + hour)
        #expect(d.machine.nextDeadline == t0 + .hours(5))
        d.advance(to: t0 + .hours(5) - .milliseconds(1))
        #expect(d.state("a") == .ended)
        d.advance(to: t0 + .hours(5))
        #expect(d.state("a") == .dismissed)
        #expect(d.transitions(of: "a").last?.cause == .dismissalPolicy)
    }

    @Test func immediatePolicyDismissesAtTheEnd() {
        var d = ActivityDriver()
        d.send(ActivityDriver.request("a"))
        d.send(.end(id: "a", content: nil, policy: .immediate, timestamp: t0 + hour), at: t0 + hour)
        #expect(d.transitions(of: "a").map(\.to) == [.active, .ended, .dismissed])
        #expect(d.transitions(of: "a").last?.due == t0 + hour)
        #expect(d.machine.nextDeadline == nil)
    }

    @Test func afterPolicyDismissesAtItsDate() {
        var d = ActivityDriver()
        d.send(ActivityDriver.request("a"))
        d.send(.end(id: "a", content: nil, policy: .after(t0 + .hours(2)), timestamp: t0 + hour), at: t0 + hour)
        d.advance(to: t0 + .hours(2) - .milliseconds(1))
        #expect(d.state("a") == .ended)
        d.advance(to: t0 + .hours(2))
        #expect(d.state("a") == .dismissed)
    }

    @Test func afterPolicyIsCappedAtFourHoursAfterTheEnd() {
        var d = ActivityDriver()
        d.send(ActivityDriver.request("a"))
        d.send(.end(id: "a", content: nil, policy: .after(t0 + .hours(10)), timestamp: t0 + hour), at: t0 + hour)
        #expect(d.machine.nextDeadline == t0 + .hours(5))
        d.advance(to: t0 + .hours(5))
        #expect(d.state("a") == .dismissed)
    }

    @Test func afterPolicyWithAPastDateDismissesAtOnce() {
        var d = ActivityDriver()
        d.send(ActivityDriver.request("a"))
        d.send(.end(id: "a", content: nil, policy: .after(t0), timestamp: t0 + hour), at: t0 + hour)
        #expect(d.state("a") == .dismissed)
    }

    @Test func theVisibleLimitCapsEveryPolicyAtTwelveHours() {
        // With the default 8 h limit the system's end plus 4 h is exactly 12 h; a longer active
        // limit lets an end at 10 h ask for 14 h, and the 12 h limit comes first.
        var d = ActivityDriver(settings: ActivitySettings(activeLimit: .hours(11)))
        d.send(ActivityDriver.request("a"))
        d.send(.end(id: "a", content: nil, policy: .default, timestamp: t0), at: t0 + .hours(10))
        #expect(d.machine.snapshot().activities.first?.dismissal == t0 + .hours(12))
        d.advance(to: t0 + .hours(12) - .milliseconds(1))
        #expect(d.state("a") == .ended)
        d.advance(to: t0 + .hours(12))
        #expect(d.state("a") == .dismissed)
        #expect(d.transitions(of: "a").last?.cause == .visibleLimit)
        // The system's own end at 8 h: dismissed at 12 h, by policy and limit at once.
        var e = ActivityDriver()
        e.send(ActivityDriver.request("a"))
        e.advance(to: t0 + .hours(12))
        #expect(e.transitions(of: "a").map(\.due) == [t0, t0 + .hours(8), t0 + .hours(12)])
    }

    @Test func theVisibleLimitEndsAndDismissesWhenLimitsAreConfiguredThatWay() {
        // With an active limit longer than the visible one, 12 h ends and dismisses in one go.
        var d = ActivityDriver(settings: ActivitySettings(activeLimit: .hours(20)))
        d.send(ActivityDriver.request("a"))
        d.advance(to: t0 + .hours(12))
        #expect(d.transitions(of: "a").suffix(2).map(\.to) == [.ended, .dismissed])
        #expect(d.transitions(of: "a").suffix(2).allSatisfy { $0.cause == .visibleLimit && $0.due == t0 + .hours(12) })
    }

    @Test func aLateTimerAppliesEachDeadlineStampedInOrder() {
        var d = ActivityDriver()
        d.send(ActivityDriver.request("a", staleDate: t0 + hour))
        d.send(ActivityDriver.request("b", startAt: t0 + .seconds(60)))
        // The timer fires 13 h late: start, stale, 8 h end, 12 h dismissal, in instant order.
        d.send(.timerFired, at: t0 + .hours(13))
        let applied = d.transitions.filter { $0.applied == t0 + .hours(13) }
        #expect(applied.map(\.due) == applied.map(\.due).sorted())
        #expect(d.transitions(of: "a").map(\.to) == [.active, .stale, .ended, .dismissed])
        #expect(d.transitions(of: "a").map(\.due) == [t0, t0 + hour, t0 + .hours(8), t0 + .hours(12)])
        #expect(d.transitions(of: "b").map(\.due) == [t0, t0 + .seconds(60), t0 + .seconds(60) + .hours(8), t0 + .seconds(60) + .hours(12)])
        #expect(d.logs.map(\.description).contains { $0.contains("applied 12h00m late") })
    }

    @Test func anEarlyOrSpuriousTimerChangesNothing() {
        var d = ActivityDriver()
        d.send(ActivityDriver.request("a", staleDate: t0 + hour))
        let count = d.effects.count
        d.send(.timerFired, at: t0 + hour - .seconds(1))
        #expect(d.effects.count == count)
        #expect(d.state("a") == .active)
        #expect(d.machine.nextDeadline == t0 + hour)
    }
}
