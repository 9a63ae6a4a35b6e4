import Testing
@testable import RefreshdCore

/// The admission hook: a due request may be held back (a budget, the system's discretion), and
/// declare/restore/submit arrive as events like the rest.
@Suite struct SchedulerCoreAdmissionTests {
    /// Holds every request until the next multiple of `step` after its earliest begin date.
    struct Quantized: AdmissionPolicy {
        let step: Int64
        func admission(for request: PendingRequest, at now: Instant) -> Admission {
            let next = (request.earliest.milliseconds / step + 1) * step
            return now.milliseconds >= next ? .admit : .hold(until: Instant(milliseconds: next))
        }
    }

    @Test func aHeldRequestLaunchesWhenThePolicyAdmitsIt() throws {
        var d = VirtualDriver([TaskDefinition(identifier: "a.job", kind: .processing)])
        d.core.admissionPolicy = Quantized(step: 60_000)
        let start = d.now
        try d.submit("a.job", in: .seconds(5), kind: .processing)
        d.advance(by: .seconds(5))
        #expect(d.launched.isEmpty)
        #expect(d.logEvents.contains { if case .held(identifier: "a.job", _) = $0 { true } else { false } })
        let release = Instant(milliseconds: ((start + .seconds(5)).milliseconds / 60_000 + 1) * 60_000)
        #expect(d.armed == release)
        d.advance(by: release.duration(since: d.now))
        #expect(d.launched.map(\.started) == [release])
    }

    @Test func cancellingAHeldRequestForgetsIt() throws {
        var d = VirtualDriver([TaskDefinition(identifier: "a.job", kind: .processing)])
        d.core.admissionPolicy = Quantized(step: 3_600_000)
        try d.submit("a.job", kind: .processing)
        d.fireNext()
        #expect(d.armed != nil)
        d.send(.cancel(identifier: "a.job"))
        #expect(d.armed == nil)
        d.advance(by: .hours(2))
        #expect(d.launched.isEmpty)
    }

    @Test func declareRestoreAndSubmitAreEvents() {
        var d = VirtualDriver([])
        d.send(.declare(TaskDefinition(identifier: "a.job", kind: .processing)))
        let saved = PendingRequest(identifier: "a.job", namespace: "default", kind: .processing,
                                   earliest: d.now + .seconds(30), submitted: d.now, sequence: 7, origin: .submitted)
        d.send(.restore(.init(pending: [saved], nextRunID: 12)))
        #expect(d.core.pending("a.job")?.earliest == d.now + .seconds(30))
        d.send(.submit(TaskRequest(identifier: "nope")))
        #expect(d.logEvents.contains(.rejected(identifier: "nope", .notPermitted(identifier: "nope"))))
        d.send(.submitFirst(identifier: "a.job"))
        #expect(d.core.pending("a.job")?.earliest == d.now)
        d.fireNext()
        #expect(d.launched.map(\.runID) == [12])
        d.send(.undeclare(identifier: "a.job"))
        #expect(d.core.definitions["a.job"] == nil)
    }

    @Test func spawnFailureAndMissingHandlerAreFailuresWithTheirOwnReason() throws {
        var d = VirtualDriver([TaskDefinition(identifier: "a.job", kind: .processing),
                               TaskDefinition(identifier: "b.job", kind: .processing)])
        try d.submit("a.job", kind: .processing)
        try d.submit("b.job", kind: .processing)
        d.fireNext()
        d.finish(1, .spawnFailed("no such file or directory"))
        d.finish(2, .noHandler)
        #expect(d.outcomes == [.failure, .failure])
        #expect(d.logEvents.contains { $0.description.contains("could not start: no such file or directory") })
        #expect(d.logEvents.contains { $0.description.contains("no handler registered") })
    }
}
