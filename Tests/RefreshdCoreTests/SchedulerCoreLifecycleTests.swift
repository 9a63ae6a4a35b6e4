import Testing
import Foundation
@testable import RefreshdCore

@Suite struct SchedulerCoreLifecycleTests {
    @Test func shutdownExpiresRunsAndReportsStoppedAfterTheyEnd() throws {
        let def = TaskDefinition(identifier: "app.job", allowance: .minutes(5), grace: .seconds(5))
        var d = VirtualDriver([def])
        try d.submit("app.job")
        d.fireNext()
        d.send(.shutdown)
        #expect(d.expired == [1])
        #expect(!d.stopped)
        #expect(throws: SchedulerError.unavailable) { try d.submit("app.job") }
        d.advance(by: .seconds(5))
        #expect(d.killed == [1])
        d.finish(1, .signaled(9))
        #expect(d.outcomes == [.interrupted])
        #expect(d.stopped)
        // Interrupted work is requested again right away for the next start.
        #expect(d.core.pending("app.job")?.origin == .retry)
    }

    @Test func idleShutdownStopsAtOnce() {
        var d = VirtualDriver([])
        d.send(.shutdown)
        #expect(d.stopped)
    }

    @Test func restoreRunsMissedRequestOnceAndRecordsInterruptedRuns() throws {
        let retry = RetryPolicy(initial: .seconds(30), limit: 2)
        let defs = [TaskDefinition(identifier: "app.missed", resubmit: .after(.hours(1))),
                    TaskDefinition(identifier: "p.crashy", kind: .processing, retry: retry)]
        var d = VirtualDriver(defs)
        let downSince = d.now - .hours(30)
        let state = SchedulerCore.RestoredState(
            pending: [PendingRequest(identifier: "app.missed", namespace: "default", kind: .appRefresh,
                                     earliest: downSince + .hours(1), submitted: downSince, sequence: 41),
                      PendingRequest(identifier: "gone.job", namespace: "default", kind: .processing,
                                     earliest: downSince, submitted: downSince, sequence: 42)],
            unfinishedRuns: [RunRecord(runID: 17, identifier: "p.crashy", kind: .processing,
                                       submitted: downSince, earliest: downSince, started: downSince,
                                       deadline: downSince + .minutes(10))],
            failureStreaks: [:], nextRunID: 18)
        d.record(d.core.restore(state, at: d.now))
        #expect(d.outcomes == [.interrupted])
        #expect(d.logEvents.contains(.droppedUndeclared(identifier: "gone.job")))
        // Interrupted by refreshd's death: the same attempt again at once, no backoff (issue 36).
        #expect(d.core.pending("p.crashy")?.earliest == d.now)
        #expect(d.core.failureStreaks["p.crashy"] == nil)
        d.advance(by: .minutes(1))
        // 29 missed hourly slots, one run; then the next request is an hour after that launch.
        #expect(d.launched.filter { $0.identifier == "app.missed" }.count == 1)
        #expect(d.launched.first!.runID == 18)
        #expect(d.core.pending("app.missed")?.earliest == d.launched.first!.started + .hours(1))
        #expect(d.launched.first { $0.identifier == "p.crashy" }?.attempt == 1)
    }

    /// Issue 36: an interruption (Ctrl-C, a stop, refreshd's death) is not the job's fault: it
    /// neither adds to the failure streak (no backoff, no retry used up) nor ends it; the
    /// interrupted attempt is requested again at once, and runs as the same attempt.
    @Test func anInterruptedRunNeitherCountsInTheFailureStreakNorEndsIt() throws {
        let retry = RetryPolicy(initial: .minutes(10), limit: 5)
        let def = TaskDefinition(identifier: "app.job", kind: .processing, allowance: .minutes(5), grace: .seconds(5), retry: retry)
        var d = VirtualDriver([def])
        try d.submit("app.job")
        d.fireNext()
        d.finish(1, .exited(1))
        d.advance(by: .minutes(10))
        d.finish(2, .exited(1))
        #expect(d.core.failureStreaks["app.job"] == 2)
        d.advance(by: .minutes(20))
        #expect(d.launched.last?.attempt == 3)
        d.send(.shutdown)
        d.advance(by: .seconds(5))
        d.finish(3, .signaled(9))
        #expect(d.outcomes.last == .interrupted)
        #expect(d.core.failureStreaks["app.job"] == 2, "the interruption is not a third failure")
        let pending = try #require(d.core.pending("app.job"))
        #expect(pending.earliest == d.now, "no backoff after an interruption")
        #expect(d.logEvents.contains(.retryScheduled(identifier: "app.job", attempt: 3, at: d.now)))
    }

    @Test func sequencesContinueAfterRestore() throws {
        let defs = (0..<2).map { TaskDefinition(identifier: "p.\($0)", kind: .processing) }
        var d = VirtualDriver(defs)
        let at = d.now + .seconds(1)
        d.record(d.core.restore(.init(pending: [PendingRequest(identifier: "p.1", namespace: "default",
                                                                kind: .processing, earliest: at,
                                                                submitted: d.now, sequence: 900)]), at: d.now))
        d.record(try d.core.submit(TaskRequest(identifier: "p.0", kind: .processing, earliestBeginDate: at), at: d.now))
        #expect(d.core.pending("p.0")!.sequence > 900)
        d.advance(by: .seconds(1))
        #expect(d.launched.map(\.identifier) == ["p.1", "p.0"])
    }

    @Test func iso8601Formatting() {
        #expect(Instant(milliseconds: 0).iso8601 == "1970-01-01T00:00:00.000Z")
        #expect(Instant(milliseconds: 1_795_788_772_123).iso8601 == "2026-11-27T14:12:52.123Z")
        #expect(Instant(milliseconds: 951_782_400_000).iso8601 == "2000-02-29T00:00:00.000Z")
        #expect(ISO8601.days(year: 2000, month: 2, day: 29) == 11_016)
        #expect(Instant(milliseconds: -1).iso8601 == "1969-12-31T23:59:59.999Z")
    }

    /// The digit-by-digit formatter against the calendar arithmetic it encodes: every seeded
    /// instant from year 1 to 9999 reads back as itself, with each field where it belongs.
    @Test func iso8601FormattingRoundTrips() {
        var random = SplitMix64(seed: 8601)
        let (low, high) = (Instant.earliest.milliseconds, Instant.latest.milliseconds)
        for _ in 0..<20_000 {
            let ms = low + Int64(random.next() % UInt64(high - low + 1))
            let text = Instant(milliseconds: ms).iso8601
            #expect(text.utf8.count == 24)
            #expect(ISO8601.parse(text) == Instant(milliseconds: ms), "\(ms) -> \(text)")
            let days = ms >= 0 ? ms / 86_400_000 : (ms - 86_399_999) / 86_400_000
            let (y, m, d) = ISO8601.civil(fromDays: days)
            #expect(text.hasPrefix(String(format: "%04lld-%02lld-%02lldT", y, m, d)))
        }
    }
}
