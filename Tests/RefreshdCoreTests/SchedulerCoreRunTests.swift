import Testing
@testable import RefreshdCore

@Suite struct SchedulerCoreRunTests {
    @Test func outcomesFromExits() throws {
        let def = TaskDefinition(identifier: "app.job", allowance: .seconds(30))
        var d = VirtualDriver([def])
        for exit in [RunExit.exited(0), .exited(3), .signaled(9), .completed(success: true),
                     .completed(success: false)] {
            try d.submit("app.job")
            d.fireNext()
            d.finish(d.launched.last!.runID, exit)
        }
        #expect(d.outcomes == [.success, .failure, .crashed, .success, .failure])
    }

    @Test func expirationThenKillAfterGrace() throws {
        let def = TaskDefinition(identifier: "app.slow", allowance: .milliseconds(50), grace: .milliseconds(20))
        var d = VirtualDriver([def])
        try d.submit("app.slow")
        d.fireNext()
        let run = d.launched[0]
        #expect(d.armed == run.started + .milliseconds(50))
        d.advance(by: .milliseconds(49))
        #expect(d.expired.isEmpty)
        d.advance(by: .milliseconds(1))
        #expect(d.expired == [run.runID])
        #expect(d.armed == run.started + .milliseconds(70))
        d.advance(by: .milliseconds(20))
        #expect(d.killed == [run.runID])
        #expect(d.armed == nil)
        d.finish(run.runID, .signaled(9))  // our SIGKILL: expired, not crashed
        #expect(d.outcomes == [.expired])
    }

    @Test func runEndingWithinGraceIsExpired() throws {
        let def = TaskDefinition(identifier: "app.slow", allowance: .seconds(1), grace: .seconds(5))
        var d = VirtualDriver([def])
        try d.submit("app.slow")
        d.fireNext()
        d.advance(by: .seconds(1))
        d.finish(d.launched[0].runID, .exited(0))
        #expect(d.outcomes == [.expired])
        #expect(d.killed.isEmpty)
        #expect(d.armed == nil)
    }

    @Test func oneRunPerIdentifier() throws {
        let def = TaskDefinition(identifier: "app.job", allowance: .minutes(10))
        var d = VirtualDriver([def])
        try d.submit("app.job")
        d.fireNext()
        try d.submit("app.job", in: .seconds(1))
        d.advance(by: .seconds(5))
        #expect(d.launched.count == 1)  // due, but its identifier is still running
        d.finish(d.launched[0].runID, .exited(0))
        #expect(d.launched.count == 2)
        #expect(d.launched[1].started == d.now)
    }

    @Test func concurrencyCapLaunchesInDueOrderAsRunsFinish() throws {
        let defs = (0..<6).map { TaskDefinition(identifier: "p.\($0)", kind: .processing) }
        var d = VirtualDriver(defs, configuration: .init(maxConcurrentRuns: 2))
        for i in [5, 4, 3, 2, 1, 0] { try d.submit("p.\(i)", in: .seconds(Int64(i)), kind: .processing) }
        d.advance(by: .seconds(10))
        #expect(d.launched.map(\.identifier) == ["p.0", "p.1"])
        d.finish(d.launched[1].runID, .exited(0))
        #expect(d.launched.map(\.identifier) == ["p.0", "p.1", "p.2"])
        d.finish(d.launched[0].runID, .exited(0))
        d.finish(d.launched[2].runID, .exited(0))
        #expect(d.launched.map(\.identifier) == ["p.0", "p.1", "p.2", "p.3", "p.4"])
    }

    @Test func exponentialBackoffUpToLimit() throws {
        let retry = RetryPolicy(backoff: .exponential, initial: .seconds(30), maximum: .seconds(100), limit: 3)
        let def = TaskDefinition(identifier: "app.flaky", retry: retry)
        var d = VirtualDriver([def])
        try d.submit("app.flaky")
        var delays: [Duration] = []
        for _ in 0..<4 {
            d.fireNext()
            let run = d.launched.last!
            d.finish(run.runID, .exited(1))
            if let next = d.core.pending("app.flaky") { delays.append(next.earliest.duration(since: d.now)) }
        }
        #expect(delays == [.seconds(30), .seconds(60), .seconds(100)])
        #expect(d.launched.map(\.attempt) == [1, 2, 3, 4])
        #expect(d.logEvents.contains(.retriesExhausted(identifier: "app.flaky", attempts: 4)))
        #expect(d.core.pendingRequests().isEmpty)
    }

    @Test func linearBackoffAndSuccessResetsStreak() {
        let linear = RetryPolicy(backoff: .linear, initial: .seconds(10), maximum: .seconds(25), limit: 5)
        #expect((1...5).map { linear.delay(forAttempt: $0) } == [.seconds(10), .seconds(20), .seconds(25), .seconds(25), .seconds(25)])
        #expect(linear.delay(forAttempt: 6) == nil)
        let huge = RetryPolicy(backoff: .exponential, initial: .seconds(30), maximum: .seconds(18_000), limit: 100)
        #expect(huge.delay(forAttempt: 90) == .seconds(18_000))
    }

    @Test func retryNeverPostponesRegularRequest() throws {
        let retry = RetryPolicy(initial: .hours(2), maximum: .hours(5), limit: 5)
        let def = TaskDefinition(identifier: "app.job", resubmit: .after(.hours(1)), retry: retry)
        var d = VirtualDriver([def])
        try d.submit("app.job")
        d.fireNext()
        d.finish(1, .exited(1))
        #expect(d.core.pending("app.job")?.earliest == d.now + .hours(1))
        #expect(d.core.pending("app.job")?.origin == .resubmit)
    }

    @Test func retryReplacesLaterRegularRequest() throws {
        let def = TaskDefinition(identifier: "app.job", resubmit: .after(.hours(6)), retry: RetryPolicy())
        var d = VirtualDriver([def])
        try d.submit("app.job")
        d.fireNext()
        d.finish(1, .exited(1))
        #expect(d.core.pending("app.job")?.earliest == d.now + .seconds(30))
        d.advance(by: .seconds(30))
        #expect(d.launched.count == 2)
        d.finish(2, .exited(0))
        // The retry's launch re-scheduled the regular request six hours out.
        #expect(d.core.pending("app.job")?.earliest == d.launched[1].started + .hours(6))
    }

    @Test func idleSchedulerArmsOnlyTheEarliestDeadline() throws {
        let defs = (0..<1000).map { TaskDefinition(identifier: "p.\($0)", kind: .processing) }
        var d = VirtualDriver(defs, configuration: .init(maxPendingProcessing: 1000))
        for i in 0..<1000 { try d.submit("p.\(i)", in: .hours(24) + .seconds(Int64(i)), kind: .processing) }
        let arms = d.log.filter { if case .armTimer = $0 { true } else { false } }
        #expect(arms.count == 1)
        #expect(d.armed == d.now + .hours(24))
    }
}

@Suite struct SchedulerCoreQuietTests {
    @Test func withoutConsumersNoRecordsOrRoutineLogsAreBuilt() throws {
        var configuration = SchedulerConfiguration()
        configuration.emitsStateChanges = false
        configuration.emitsRoutineLogs = false
        let def = TaskDefinition(identifier: "app.job", resubmit: .after(.seconds(60)), retry: RetryPolicy())
        var d = VirtualDriver([def], configuration: configuration)
        try d.submit("app.job")
        d.fireNext()
        d.finish(1, .exited(1))
        #expect(d.stored.isEmpty)
        #expect(d.launched.count == 1)
        // Decisions still happen, and warnings-level messages still come through.
        #expect(d.core.pending("app.job")?.origin == .retry)
        #expect(d.logEvents.contains { if case .retryScheduled = $0 { true } else { false } })
        #expect(!d.logEvents.contains { if case .launched = $0 { true } else { false } })
    }
}
