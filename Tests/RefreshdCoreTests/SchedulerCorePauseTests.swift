import Testing
@testable import RefreshdCore

/// Pause and resume (issue 33) in the pure core: each order -> its exact effects; a paused job
/// keeps its pending request and launches nothing; on resume its missed slots follow its missed
/// policy as after downtime; the pause comes back from the saved records.
@Suite struct SchedulerCorePauseTests {
    static let hour = Duration.seconds(3600)
    /// Every hour on the hour, UTC.
    static let hourly = SchedulerCoreCalendarTests.hourly
    static let ten = SchedulerCoreCalendarTests.ten

    static func calendar(_ missed: MissedPolicy, catchUp: Duration = .hours(24)) -> TaskDefinition {
        TaskDefinition(identifier: "cal.job", kind: .processing, resubmit: .calendar(hourly), missed: missed, catchUp: catchUp)
    }

    func pause(_ d: inout VirtualDriver, _ id: String) throws(ControlRefusal) -> [SchedulerEffect] {
        var effects: [SchedulerEffect] = []
        try d.core.pause(id, at: d.now, into: &effects)
        d.record(effects)
        return effects
    }

    func resume(_ d: inout VirtualDriver, _ id: String) throws(ControlRefusal) -> [SchedulerEffect] {
        var effects: [SchedulerEffect] = []
        try d.core.resume(id, at: d.now, into: &effects)
        d.record(effects)
        return effects
    }

    static func record(_ id: String, since: Instant) -> MachineRecord {
        MachineRecord(table: "paused", key: id, value: "{\"since\":\(since.milliseconds)}")
    }

    @Test func aPausedJobKeepsItsRequestAndLaunchesNothing() throws {
        var d = VirtualDriver([TaskDefinition(identifier: "app.feed", resubmit: .after(Self.hour))])
        try d.submit("app.feed", in: .minutes(10))
        let since = d.now
        #expect(try pause(&d, "app.feed") == [
            .persist(.putRecord(Self.record("app.feed", since: since))),
            .log(.paused(identifier: "app.feed", template: false)),
        ])
        // Due at +10 min: parked, out of the heap, so nothing stays armed for it.
        d.advance(by: .hours(5))
        #expect(d.launched.isEmpty)
        #expect(d.armed == nil)
        let pending = d.core.snapshot().pending
        #expect(pending.map(\.identifier) == ["app.feed"])
        #expect(pending.first?.place == .paused)
        #expect(d.core.snapshot().paused == [SchedulerSnapshot.Paused(identifier: "app.feed", since: since)])
        #expect(d.core.checkInvariants() == [])
        // An operator's submit replaces the request, which stays paused; so does "run now".
        try d.submit("app.feed")
        d.advance(by: .minutes(1))
        #expect(d.launched.isEmpty)
        var effects: [SchedulerEffect] = []
        #expect(throws: ControlRefusal.paused(identifier: "app.feed", by: "app.feed", since: since)) {
            try d.core.launchNow("app.feed", at: d.now, into: &effects)
        }
        #expect(effects.isEmpty)
        #expect(d.core.checkInvariants() == [])
    }

    @Test func resumeLaunchesWhatIsDueAtOnce() throws {
        var d = VirtualDriver([TaskDefinition(identifier: "app.feed", resubmit: .after(Self.hour))])
        try d.submit("app.feed", in: .minutes(10))
        _ = try pause(&d, "app.feed")
        d.advance(by: .hours(2))
        let effects = try resume(&d, "app.feed")
        #expect(Array(effects.prefix(2)) == [
            .persist(.deleteRecord(table: "paused", key: "app.feed")),
            .log(.resumed(identifier: "app.feed", pausedFor: .hours(2))),
        ])
        #expect(d.launched.map(\.identifier) == ["app.feed"])
        #expect(d.launched.first?.started == d.now)
        #expect(d.core.snapshot().paused == nil)
        #expect(d.core.checkInvariants() == [])
    }

    @Test func refusals() throws {
        var d = VirtualDriver([TaskDefinition(identifier: "app.feed")])
        var effects: [SchedulerEffect] = []
        #expect(throws: ControlRefusal.notDeclared(identifier: "app.nope")) { try d.core.pause("app.nope", at: d.now, into: &effects) }
        #expect(throws: ControlRefusal.notPaused(identifier: "app.feed")) { try d.core.resume("app.feed", at: d.now, into: &effects) }
        let since = d.now
        _ = try pause(&d, "app.feed")
        d.advance(by: .minutes(1))
        #expect(throws: ControlRefusal.alreadyPaused(identifier: "app.feed", since: since)) {
            try d.core.pause("app.feed", at: d.now, into: &effects)
        }
        #expect(effects.isEmpty)
    }

    /// A run in flight at the pause runs to its end; its resubmission is kept, and parked.
    @Test func aRunInFlightRunsOnAndItsNextRequestWaits() throws {
        var d = VirtualDriver([TaskDefinition(identifier: "app.feed", resubmit: .after(.minutes(5)))])
        try d.submit("app.feed")
        d.fireNext()
        _ = try pause(&d, "app.feed")
        d.advance(by: .seconds(5))
        d.finish(1, .exited(0))
        #expect(d.outcomes == [.success])
        d.advance(by: .hours(1))
        #expect(d.launched.count == 1)
        #expect(d.core.snapshot().pending.first?.place == .paused)
        #expect(d.core.checkInvariants() == [])
    }

    @Test func resumeSkipsMissedSlotsWithMissedSkip() throws {
        var d = VirtualDriver([Self.calendar(.skip)], start: Self.ten + .minutes(30))
        var effects: [SchedulerEffect] = []
        try d.core.submitFirst("cal.job", at: d.now, into: &effects)
        d.record(effects)
        _ = try pause(&d, "cal.job")
        d.advance(by: .hours(5))  // 11:00 .. 15:00 pass, paused
        #expect(d.launched.isEmpty)
        #expect(!d.logEvents.contains { if case .missedSlots = $0 { true } else { false } })
        _ = try resume(&d, "cal.job")
        #expect(d.logEvents.contains(.missedSlots(identifier: "cal.job", count: 5, policy: .skip, next: Self.ten + .hours(6))))
        #expect(d.launched.isEmpty)
        #expect(d.core.pending("cal.job")?.earliest == Self.ten + .hours(6))
        d.advance(by: .minutes(30))
        #expect(d.launched.map(\.started) == [Self.ten + .hours(6)])
        #expect(d.core.checkInvariants() == [])
    }

    @Test func resumeRunsOnceWithMissedOnce() throws {
        var d = VirtualDriver([Self.calendar(.once)], start: Self.ten + .minutes(30))
        var effects: [SchedulerEffect] = []
        try d.core.submitFirst("cal.job", at: d.now, into: &effects)
        d.record(effects)
        _ = try pause(&d, "cal.job")
        d.advance(by: .hours(5))
        _ = try resume(&d, "cal.job")
        #expect(d.logEvents.contains(.missedSlots(identifier: "cal.job", count: 5, policy: .once, next: d.now)))
        #expect(d.launched.map(\.started) == [d.now])
        #expect(d.stored.contains(.counters(DailyCounter(day: ISO8601.day(d.now), identifier: "cal.job", launches: 1, missed: 5))))
    }

    @Test func resumeReplaysWithinTheCatchUpWindowWithMissedAll() throws {
        var d = VirtualDriver([Self.calendar(.all, catchUp: .hours(3))], start: Self.ten + .minutes(30))
        var effects: [SchedulerEffect] = []
        try d.core.submitFirst("cal.job", at: d.now, into: &effects)
        d.record(effects)
        _ = try pause(&d, "cal.job")
        d.advance(by: .hours(5))  // now 15:30; 11:00 .. 15:00 missed; the window reaches 12:30
        _ = try resume(&d, "cal.job")
        for _ in 0..<5 {
            d.advance(by: .milliseconds(1))
            if let run = d.launched.last { d.finish(run.runID, .exited(0)) }
        }
        #expect(d.stored.compactMap { if case let .runStarted(r) = $0 { r.earliest } else { nil } }
                == [Self.ten + .hours(3), Self.ten + .hours(4), Self.ten + .hours(5)])
        #expect(d.core.pending("cal.job")?.earliest == Self.ten + .hours(6))
    }

    /// Saved as a record, so a restart (or a kill -9) finds it paused; the slots missed while
    /// down are not counted at the restore but at the resume, once.
    @Test func thePauseComesBackFromItsRecord() throws {
        let since = Self.ten
        let request = PendingRequest(identifier: "cal.job", namespace: "default", kind: .processing, earliest: Self.ten + .hours(1),
                                     submitted: Self.ten, sequence: 1, origin: .resubmit)
        var d = VirtualDriver([Self.calendar(.skip)], start: Self.ten + .hours(3) + .minutes(30))
        d.record(d.core.restore(.init(pending: [request], records: [Self.record("cal.job", since: since)]), at: d.now))
        #expect(!d.logEvents.contains { if case .missedSlots = $0 { true } else { false } })
        #expect(d.core.snapshot().paused == [SchedulerSnapshot.Paused(identifier: "cal.job", since: since)])
        d.advance(by: .hours(1))
        #expect(d.launched.isEmpty)
        #expect(d.core.checkInvariants() == [])
        _ = try resume(&d, "cal.job")
        #expect(d.logEvents.contains(.missedSlots(identifier: "cal.job", count: 4, policy: .skip, next: Self.ten + .hours(5))))
        #expect(d.logEvents.contains(.resumed(identifier: "cal.job", pausedFor: .hours(4) + .minutes(30))))
    }

    /// A template's pause holds its instances; an instance paused on its own stays paused when
    /// the template resumes.
    @Test func aTemplatePausesItsInstances() throws {
        let t0 = InstanceMachineTests.t0
        var core = InstanceMachineTests.core()
        for key in ["alice", "bob"] {
            _ = core.handle(.addInstance(InstanceRecord(template: "app.feed.refresh", key: key, values: [:])), at: t0)
        }
        var d = VirtualDriver([])
        d.core = core
        d.now = t0
        d.armed = core.nextWakeUp
        #expect(try pause(&d, "app.feed.refresh").contains(.log(.paused(identifier: "app.feed.refresh", template: true))))
        _ = try pause(&d, "app.feed.refresh[bob]")
        d.advance(by: .minutes(1))
        #expect(d.launched.isEmpty)
        #expect(d.core.snapshot().pending.map(\.place) == [.paused, .paused])
        var effects: [SchedulerEffect] = []
        #expect(throws: ControlRefusal.paused(identifier: "app.feed.refresh[alice]", by: "app.feed.refresh", since: t0)) {
            try d.core.launchNow("app.feed.refresh[alice]", at: d.now, into: &effects)
        }
        #expect(d.core.checkInvariants() == [])
        _ = try resume(&d, "app.feed.refresh")
        #expect(d.launched.map(\.identifier) == ["app.feed.refresh[alice]"])
        #expect(d.core.snapshot().pending.first { $0.identifier == "app.feed.refresh[bob]" }?.place == .paused)
        #expect(d.core.checkInvariants() == [])
    }
}
