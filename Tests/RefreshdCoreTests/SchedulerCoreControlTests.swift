import Testing
@testable import RefreshdCore

/// `launchNow` and `expireNow`: an operator's simulate-launch and simulate-expiration, on
/// virtual time.
@Suite struct SchedulerCoreControlTests {
    let hour = Duration.seconds(3600)

    @Test func launchNowIgnoresEarliestBeginDate() throws {
        let def = TaskDefinition(identifier: "app.feed", allowance: .seconds(30), resubmit: .after(.seconds(3600)))
        var d = VirtualDriver([def])
        try d.submit("app.feed", in: hour)
        var effects: [SchedulerEffect] = []
        try d.core.launchNow("app.feed", at: d.now, into: &effects)
        d.record(effects)
        #expect(d.launched.count == 1)
        #expect(d.launched[0].started == d.now)
        #expect(d.launched[0].deadline == d.now + .seconds(30))
        // Resubmitted from the launch like any launch; the timer now waits for the deadline.
        #expect(d.core.pending("app.feed")?.earliest == d.now + hour)
        #expect(d.armed == d.now + .seconds(30))
        #expect(d.core.checkInvariants().isEmpty)
    }

    @Test func launchNowIgnoresConditionsAndHolds() throws {
        let def = TaskDefinition(identifier: "app.sync", kind: .processing, requiresExternalPower: true)
        var d = VirtualDriver([def])
        d.send(.conditionsChanged(Conditions(externalPower: false, network: true)))
        d.record(try d.core.submit(TaskRequest(identifier: "app.sync", kind: .processing,
                                               requiresExternalPower: true), at: d.now))
        d.fireNext()
        #expect(d.launched.isEmpty)
        #expect(d.core.snapshot().pending.first?.place == .waitingOnConditions)
        var effects: [SchedulerEffect] = []
        try d.core.launchNow("app.sync", at: d.now, into: &effects)
        d.record(effects)
        #expect(d.launched.map(\.identifier) == ["app.sync"])
        #expect(d.watching == false)
        #expect(d.core.checkInvariants().isEmpty)
    }

    @Test func launchNowRefusals() throws {
        let defs = [TaskDefinition(identifier: "app.a"), TaskDefinition(identifier: "app.b", namespace: "b")]
        var d = VirtualDriver(defs, configuration: SchedulerConfiguration(maxConcurrentRuns: 1))
        var effects: [SchedulerEffect] = []
        #expect(throws: ControlRefusal.notDeclared(identifier: "app.zzz")) {
            try d.core.launchNow("app.zzz", at: d.now, into: &effects)
        }
        #expect(throws: ControlRefusal.notPending(identifier: "app.a")) {
            try d.core.launchNow("app.a", at: d.now, into: &effects)
        }
        try d.submit("app.a")
        d.fireNext()
        let run = d.launched[0].runID
        try d.submit("app.a", in: hour)
        #expect(throws: ControlRefusal.runInFlight(identifier: "app.a", runID: run)) {
            try d.core.launchNow("app.a", at: d.now, into: &effects)
        }
        try d.submit("app.b", in: hour)
        #expect(throws: ControlRefusal.atCapacity(running: 1, limit: 1)) {
            try d.core.launchNow("app.b", at: d.now, into: &effects)
        }
        #expect(effects.isEmpty)
        d.send(.shutdown)
        #expect(throws: ControlRefusal.stopping) { try d.core.launchNow("app.b", at: d.now, into: &effects) }
    }

    @Test func expireNowDeliversTheExpirationThenKillsAfterGrace() throws {
        let def = TaskDefinition(identifier: "app.slow", allowance: .seconds(600), grace: .seconds(5))
        var d = VirtualDriver([def])
        try d.submit("app.slow")
        d.fireNext()
        let run = d.launched[0]
        d.advance(by: .seconds(10))
        var effects: [SchedulerEffect] = []
        try d.core.expireNow("app.slow", at: d.now, into: &effects)
        d.record(effects)
        #expect(d.expired == [run.runID])
        #expect(d.armed == d.now + .seconds(5))
        #expect(d.core.checkInvariants().isEmpty)
        #expect(throws: ControlRefusal.alreadyExpiring(identifier: "app.slow", runID: run.runID)) {
            try d.core.expireNow("app.slow", at: d.now, into: &effects)
        }
        d.advance(by: .seconds(5))
        #expect(d.killed == [run.runID])
        d.finish(run.runID, .signaled(9))
        #expect(d.outcomes == [.expired])
    }

    @Test func expireNowEndsExpiredWhenTheJobStopsWithinGrace() throws {
        let def = TaskDefinition(identifier: "app.slow", allowance: .seconds(600))
        var d = VirtualDriver([def])
        try d.submit("app.slow")
        d.fireNext()
        var effects: [SchedulerEffect] = []
        try d.core.expireNow("app.slow", at: d.now, into: &effects)
        d.record(effects)
        d.finish(d.launched[0].runID, .exited(0))
        #expect(d.outcomes == [.expired])
        #expect(throws: ControlRefusal.notRunning(identifier: "app.slow")) {
            try d.core.expireNow("app.slow", at: d.now, into: &effects)
        }
    }
}
