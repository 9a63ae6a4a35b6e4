import Testing
@testable import RefreshdCore

/// Calendar resubmits, missed-slot policies, clock steps, jitter and accuracy, on virtual time.
@Suite struct SchedulerCoreCalendarTests {
    /// Every hour on the hour, UTC: simple enough to check by hand.
    static let hourly = Schedule("hourly [UTC]") { t in
        Instant(milliseconds: (t.milliseconds / 3_600_000 + 1) * 3_600_000)
    }
    /// 2027-01-15T10:00:00Z, on the hour.
    static let ten = Instant(milliseconds: 1_800_000_000_000 - 1_800_000_000_000 % 3_600_000)

    func definition(missed: MissedPolicy = .once, catchUp: Duration = .hours(24), jitter: Duration = .zero,
                    fixedJitter: Bool = false) -> TaskDefinition {
        TaskDefinition(identifier: "cal.job", kind: .processing, resubmit: .calendar(Self.hourly),
                       missed: missed, catchUp: catchUp, jitter: jitter, fixedJitter: fixedJitter)
    }

    func pending(at slot: Instant) -> PendingRequest {
        PendingRequest(identifier: "cal.job", namespace: "default", kind: .processing, earliest: slot,
                       submitted: slot - .hours(1), sequence: 1, origin: .resubmit)
    }

    @Test func resubmitsToTheNextSlotAfterTheLaunch() throws {
        var d = VirtualDriver([definition()], start: Self.ten + .minutes(10))
        try d.submit("cal.job", kind: .processing)
        d.fireNext()
        #expect(d.core.pending("cal.job")?.earliest == Self.ten + .hours(1))
        d.finish(1, .exited(0))
        d.advance(by: .minutes(50))
        #expect(d.launched.map(\.started) == [Self.ten + .minutes(10), Self.ten + .hours(1)])
    }

    @Test func firstRequestIsTheNextSlotOrNow() throws {
        let plain = TaskDefinition(identifier: "p.plain", kind: .processing)
        var d = VirtualDriver([definition(), plain], start: Self.ten + .minutes(10))
        var effects: [SchedulerEffect] = []
        try d.core.submitFirst("cal.job", at: d.now, into: &effects)
        try d.core.submitFirst("p.plain", at: d.now, into: &effects)
        d.record(effects)
        #expect(d.core.pending("cal.job")?.earliest == Self.ten + .hours(1))
        #expect(d.core.pending("p.plain")?.earliest == d.now)
        #expect(throws: SchedulerError.notPermitted(identifier: "nope")) {
            try d.core.submitFirst("nope", at: d.now, into: &effects)
        }
    }

    /// Regression: the first request of a calendar job was not jittered, so a fleet started
    /// together hit its first slot together (systemd's RandomizedDelaySec delays it too).
    @Test func firstRequestIsJitteredLikeEveryLaterSlot() throws {
        let jittered = definition(jitter: .minutes(10))
        var d = VirtualDriver([jittered], start: Self.ten + .minutes(10))
        var effects: [SchedulerEffect] = []
        try d.core.submitFirst("cal.job", at: d.now, into: &effects)
        let slot = Self.ten + .hours(1)
        let delay = d.core.jitter(jittered, slot: slot)
        #expect(delay > .zero && delay < .minutes(10))
        #expect(d.core.pending("cal.job")?.earliest == slot + delay)
        // The jittered request still stands for its slot: a missed-slot count finds it.
        #expect(d.core.slot(of: d.core.pending("cal.job")!, jittered) == slot)
    }

    @Test func missedOnceAfterDowntimeRunsOnce() {
        var d = VirtualDriver([definition(missed: .once)], start: Self.ten + .hours(5) + .minutes(30))
        d.record(d.core.restore(.init(pending: [pending(at: Self.ten)]), at: d.now))
        #expect(d.logEvents.contains(.missedSlots(identifier: "cal.job", count: 6, policy: .once, next: d.now)))
        #expect(d.stored.contains(.counters(DailyCounter(day: ISO8601.day(d.now), identifier: "cal.job", missed: 6))))
        d.advance(by: .seconds(1))
        d.finish(1, .exited(0))
        d.advance(by: .minutes(29))
        #expect(d.launched.count == 1)
        #expect(d.core.pending("cal.job")?.earliest == Self.ten + .hours(6))
    }

    @Test func missedSkipWaitsForTheNextSlot() {
        var d = VirtualDriver([definition(missed: .skip)], start: Self.ten + .hours(5) + .minutes(30))
        d.record(d.core.restore(.init(pending: [pending(at: Self.ten)]), at: d.now))
        d.advance(by: .minutes(29))
        #expect(d.launched.isEmpty)
        #expect(d.logEvents.contains(.missedSlots(identifier: "cal.job", count: 6, policy: .skip, next: Self.ten + .hours(6))))
        d.advance(by: .minutes(1))
        #expect(d.launched.map(\.started) == [Self.ten + .hours(6)])
    }

    @Test func missedAllReplaysEachSlotWithinTheCatchUpWindow() {
        var d = VirtualDriver([definition(missed: .all, catchUp: .hours(3))], start: Self.ten + .hours(5) + .minutes(30))
        d.record(d.core.restore(.init(pending: [pending(at: Self.ten)]), at: d.now))
        // Slots 10:00..15:00 were missed; the window reaches back to 12:30, so 13:00, 14:00, 15:00 replay.
        for _ in 0..<5 {
            d.advance(by: .milliseconds(1))
            if let run = d.launched.last { d.finish(run.runID, .exited(0)) }
        }
        #expect(d.launched.count == 3)
        #expect(d.stored.compactMap { if case let .runStarted(r) = $0 { r.earliest } else { nil } }
                == [Self.ten + .hours(3), Self.ten + .hours(4), Self.ten + .hours(5)])
        #expect(d.core.pending("cal.job")?.earliest == Self.ten + .hours(6))
    }

    @Test func clockStepForwardAppliesThePolicyAndStepBackNeverRepeatsASlot() throws {
        var d = VirtualDriver([definition(missed: .skip)], start: Self.ten + .minutes(30))
        d.record(d.core.restore(.init(pending: [pending(at: Self.ten + .hours(1))]), at: d.now))
        // The wall clock is stepped forward 3 hours: slots 11:00..13:00 were jumped over.
        d.now = d.now + .hours(3)
        d.send(.clockChanged(expected: d.now - .hours(3)))
        #expect(d.launched.isEmpty)
        #expect(d.core.pending("cal.job")?.earliest == Self.ten + .hours(4))
        #expect(d.armed == Self.ten + .hours(4))  // re-armed against the new clock
        d.advance(by: .minutes(30))
        #expect(d.launched.count == 1)
        d.finish(1, .exited(0))
        // Now stepped back an hour, to before the slot that just ran: it does not run again.
        d.now = d.now - .hours(1)
        d.send(.clockChanged(expected: d.now + .hours(1)))
        d.advance(by: .minutes(90))
        #expect(d.launched.count == 1)
        d.advance(by: .minutes(30))
        #expect(d.launched.map(\.started).last == Self.ten + .hours(5))
    }

    @Test func aRequestAlreadyDueIsNotMissedByAClockStep() throws {
        // Due before the step but waiting for capacity: the step does not make it "missed".
        let blocker = TaskDefinition(identifier: "p.blocker", kind: .processing, allowance: .hours(2))
        var d = VirtualDriver([definition(missed: .skip), blocker], configuration: .init(maxConcurrentRuns: 1),
                              start: Self.ten + .minutes(30))
        try d.submit("p.blocker", kind: .processing)
        d.fireNext()
        d.record(d.core.restore(.init(pending: [pending(at: Self.ten + .minutes(40))]), at: d.now))
        d.advance(by: .minutes(12))  // due at 10:40, held back by the cap
        d.now = d.now + .minutes(5)
        d.send(.clockChanged(expected: d.now - .minutes(5)))
        #expect(!d.logEvents.contains { if case .missedSlots = $0 { true } else { false } })
        d.finish(1, .exited(0))
        #expect(d.launched.map(\.identifier) == ["p.blocker", "cal.job"])
    }

    @Test func jitterIsSeededBoundedAndFixedWhenAsked() {
        let core = SchedulerCore(configuration: .init(seed: 42))
        let random = definition(jitter: .minutes(10))
        let fixed = definition(jitter: .minutes(10), fixedJitter: true)
        let slots = (0..<50).map { Self.ten + .hours(Int64($0)) }
        let delays = slots.map { core.jitter(random, slot: $0) }
        #expect(delays.allSatisfy { $0 >= .zero && $0 < .minutes(10) })
        #expect(Set(delays).count > 40)
        #expect(Set(slots.map { core.jitter(fixed, slot: $0) }).count == 1)
        let again = SchedulerCore(configuration: .init(seed: 42))
        #expect(slots.map { again.jitter(random, slot: $0) } == delays)
        let other = SchedulerCore(configuration: .init(seed: 7))
        #expect(slots.map { other.jitter(random, slot: $0) } != delays)
    }

    @Test func jitteredCalendarRequestsKeepTheirSlot() throws {
        var d = VirtualDriver([definition(missed: .all, jitter: .minutes(10))], start: Self.ten + .minutes(30))
        try d.submit("cal.job", kind: .processing)
        d.fireNext()
        let next = try #require(d.core.pending("cal.job"))
        #expect(next.earliest >= Self.ten + .hours(1) && next.earliest < Self.ten + .hours(1) + .minutes(10))
        #expect(d.core.slot(of: next, definition(missed: .all, jitter: .minutes(10))) == Self.ten + .hours(1))
    }

    @Test func accuracyCoalescesAThousandWakeUpsIntoOne() throws {
        let defs = (0..<1000).map {
            TaskDefinition(identifier: "p.\($0)", kind: .processing, accuracy: .minutes(1))
        }
        var d = VirtualDriver(defs, configuration: .init(maxConcurrentRuns: 1000, maxPendingProcessing: 1000),
                              start: Self.ten)
        var rng = SplitMix(seed: 9)
        for i in 0..<1000 {
            let offset = Duration.milliseconds(Int64(rng.next() % 59_000) + 500)
            d.record(try d.core.submit(TaskRequest(identifier: "p.\(i)", kind: .processing,
                                                   earliestBeginDate: Self.ten + .minutes(5) + offset), at: d.now))
        }
        var wakeUps = 0
        while d.armed != nil, d.launched.count < 1000 {
            d.fireNext()
            wakeUps += 1
        }
        #expect(wakeUps == 1)
        #expect(d.launched.count == 1000)
        // Never before its earliest begin date, never after the end of its accuracy window.
        for order in d.launched {
            let earliest = d.stored.compactMap { if case let .runStarted(r) = $0, r.runID == order.runID { r.earliest } else { nil } }.first!
            #expect(order.started >= earliest && order.started <= earliest + .minutes(1))
        }
    }
}

struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        return SchedulerCore.mix(state &- 0x9e37_79b9_7f4a_7c15)
    }
}
