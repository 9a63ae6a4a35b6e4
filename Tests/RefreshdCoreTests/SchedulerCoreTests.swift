import Testing
@testable import RefreshdCore

@Suite struct SchedulerCoreTests {
    let refresh = TaskDefinition(identifier: "app.refresh", kind: .appRefresh)

    @Test func neverLaunchesBeforeEarliestBegin() throws {
        var d = VirtualDriver([refresh])
        let start = d.now
        try d.submit("app.refresh", in: .seconds(10))
        #expect(d.armed == start + .seconds(10))
        d.advance(by: .milliseconds(9_999))
        #expect(d.launched.isEmpty)
        d.advance(by: .milliseconds(1))
        #expect(d.launched.map(\.identifier) == ["app.refresh"])
        #expect(d.launched[0].started == start + .seconds(10))
    }

    @Test func laterThanEarliestIsAllowed() throws {
        var d = VirtualDriver([refresh])
        try d.submit("app.refresh", in: .seconds(1))
        // The shell woke up late (a suspended machine): the run still launches, once.
        d.now = d.now + .hours(3)
        d.send(.timerFired)
        #expect(d.launched.count == 1)
        guard case let .launched(_, lateness) = d.logEvents.first(where: {
            if case .launched = $0 { true } else { false }
        }) else { Issue.record("no launch log"); return }
        #expect(lateness == .hours(3) - .seconds(1))
    }

    @Test func submitReplacesPendingRequest() throws {
        var d = VirtualDriver([refresh])
        try d.submit("app.refresh", in: .seconds(10))
        try d.submit("app.refresh", in: .seconds(60))
        #expect(d.core.pendingRequests().count == 1)
        #expect(d.core.pendingRequests()[0].earliestBeginDate == d.now + .seconds(60))
        #expect(d.armed == d.now + .seconds(60))
        d.advance(by: .seconds(30))
        #expect(d.launched.isEmpty)
        d.advance(by: .seconds(30))
        #expect(d.launched.count == 1)
    }

    @Test func pendingLimitsPerNamespace() throws {
        let defs = [
            TaskDefinition(identifier: "a.one"), TaskDefinition(identifier: "a.two"),
            TaskDefinition(identifier: "b.one", namespace: "b"),
        ] + (0..<11).map { TaskDefinition(identifier: "p.\($0)", kind: .processing) }
        var d = VirtualDriver(defs)
        try d.submit("a.one", in: .hours(1))
        #expect(throws: SchedulerError.tooManyPendingTaskRequests(
            identifier: "a.two", kind: .appRefresh, namespace: "default", limit: 1)) {
            try d.submit("a.two", in: .hours(1))
        }
        try d.submit("a.one", in: .hours(2))  // replacing is not a new slot
        try d.submit("b.one", in: .hours(1))  // another namespace has its own limit
        for i in 0..<10 { try d.submit("p.\(i)", in: .hours(1), kind: .processing) }
        #expect(throws: SchedulerError.self) { try d.submit("p.10", in: .hours(1), kind: .processing) }
        d.send(.cancel(identifier: "p.3"))
        try d.submit("p.10", in: .hours(1), kind: .processing)
    }

    @Test func undeclaredIdentifierIsNotPermitted() {
        var d = VirtualDriver([refresh])
        #expect(throws: SchedulerError.notPermitted(identifier: "nope")) { try d.submit("nope") }
    }

    @Test func cancelOneAndAllAndPendingAreCopies() throws {
        let defs = [refresh, TaskDefinition(identifier: "p.a", kind: .processing),
                    TaskDefinition(identifier: "p.b", kind: .processing)]
        var d = VirtualDriver(defs)
        try d.submit("app.refresh", in: .seconds(5))
        try d.submit("p.a", in: .seconds(6), kind: .processing)
        try d.submit("p.b", in: .seconds(7), kind: .processing)
        var copy = d.core.pendingRequests()
        #expect(copy.map(\.identifier) == ["app.refresh", "p.a", "p.b"])
        copy[0].earliestBeginDate = d.now  // changes nothing until submitted again
        #expect(d.core.pendingRequests()[0].earliestBeginDate == d.now + .seconds(5))
        d.send(.cancel(identifier: "p.a"))
        #expect(d.core.pendingRequests().map(\.identifier) == ["app.refresh", "p.b"])
        d.send(.cancelAll(namespace: nil))
        #expect(d.core.pendingRequests().isEmpty)
        #expect(d.armed == nil)
        d.advance(by: .minutes(1))
        #expect(d.launched.isEmpty)
    }

    @Test func equalInstantsKeepSubmissionOrder() throws {
        let defs = (0..<20).map { TaskDefinition(identifier: "p.\($0)", kind: .processing) }
        var d = VirtualDriver(defs, configuration: .init(maxConcurrentRuns: 100, maxPendingProcessing: 100))
        let at = d.now + .seconds(3)
        for i in [7, 3, 19, 0, 11] {
            d.record(try d.core.submit(TaskRequest(identifier: "p.\(i)", kind: .processing, earliestBeginDate: at), at: d.now))
        }
        d.advance(by: .seconds(3))
        #expect(d.launched.map(\.identifier) == ["p.7", "p.3", "p.19", "p.0", "p.11"])
    }

    @Test func resubmitsAtLaunchBeforeTheWork() throws {
        let def = TaskDefinition(identifier: "app.refresh", resubmit: .after(.hours(6)))
        var d = VirtualDriver([def])
        try d.submit("app.refresh")
        d.fireNext()
        let launchIndex = d.log.firstIndex { if case .launch = $0 { true } else { false } }!
        let resubmitIndex = d.log.firstIndex {
            if case let .persist(.savePending(p)) = $0 { p.origin == .resubmit } else { false }
        }!
        #expect(resubmitIndex < launchIndex)
        #expect(d.core.pending("app.refresh")?.earliest == d.now + .hours(6))
        // Even if the run crashes, the next request stays.
        d.finish(1, .signaled(11))
        #expect(d.outcomes == [.crashed])
        #expect(d.core.pending("app.refresh")?.earliest == d.launched[0].started + .hours(6))
    }
}
