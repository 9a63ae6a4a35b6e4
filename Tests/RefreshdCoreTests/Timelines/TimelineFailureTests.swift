import Testing
@testable import RefreshdCore

/// A failed or expired provider call is a failed reload: the last good timeline stays, the
/// widget goes stale if the reload was demanded, and the policy asks again after a while.
@Suite struct TimelineFailureTests {
    static let small = WidgetID(kind: "news", family: .systemSmall)
    static func definition(retry: Duration? = .minutes(15)) -> WidgetDefinition {
        WidgetDefinition(kind: "news", families: [.systemSmall], job: "news.provider", failureRetry: retry)
    }

    static let good = timeline([.at(0, 0), .at(1, 0)], .atEnd, content: "{\"n\":1}")

    @Test func failureKeepsTheLastGoodTimelineAndStartsAStaleSpan() {
        var d = TimelineDriver([Self.definition()])
        d.complete(Self.small, .timeline(Self.good, upstreamFetch: true))
        d.advance(to: .at(1, 0))
        #expect(d.calls.last?.1 == .policyAtEnd)
        d.complete(Self.small, .failed(reason: "exit 3", expired: false))
        let record = d.machine.record(Self.small)
        #expect(record?.timeline == Self.good)
        #expect(d.shown[Self.small]?.content == "{\"n\":1}")
        #expect(record?.stale == StaleSpan(start: .at(1, 0), reason: .providerFailed, detail: "exit 3"))
        #expect(record?.lastFailure == "exit 3")
        #expect(d.logs.contains(.failed(Self.small, reason: "exit 3", expired: false, keptEntries: 2)))
        // Retried 15 minutes later; a success ends the span.
        #expect(record?.policyDue == .at(1, 15) && record?.policyReason == .retry)
        d.advance(to: .at(1, 15))
        #expect(d.calls.last?.1 == .retry)
        d.complete(Self.small, .timeline(timeline([.at(2, 0)], .atEnd), upstreamFetch: true))
        #expect(d.machine.record(Self.small)?.stale == nil)
        #expect(d.machine.snapshot().widgets[0].staleSpans
            == [StaleSpan(start: .at(1, 0), end: .at(1, 15), reason: .providerFailed, detail: "exit 3")])
        #expect(d.row("2026-11-22", Self.small)?.staleMinutes == 15)
        #expect(d.row("2026-11-22", Self.small)?.failed == 1)
    }

    @Test func expiryIsAFailedReloadToo() {
        var d = TimelineDriver([Self.definition(retry: nil)])
        d.complete(Self.small, .timeline(Self.good, upstreamFetch: true))
        d.advance(to: .at(1, 0))
        d.complete(Self.small, .failed(reason: "allowance used up", expired: true))
        #expect(d.machine.record(Self.small)?.stale?.reason == .providerExpired)
        #expect(d.machine.nextDeadline == .at(day: 1, 0, 0))  // only the midnight split of stale time
        d.advance(by: .hours(30))
        #expect(d.calls.count == 2)  // no retry configured
        #expect(d.machine.record(Self.small)?.stale != nil)
    }

    @Test func anExemptReloadThatFailsDoesNotMakeStale() {
        var d = TimelineDriver([Self.definition()])
        d.complete(Self.small, .timeline(timeline([.at(0, 0)], .never), upstreamFetch: true))
        d.send(.reload(kind: "news", reason: .appForeground))
        d.complete(Self.small, .failed(reason: "exit 1", expired: false))
        #expect(d.machine.record(Self.small)?.stale == nil)
        #expect(d.machine.record(Self.small)?.policyDue == nil)
    }

    @Test func aFailedFirstTimelineShowsNothingAndIsRetried() {
        var d = TimelineDriver([Self.definition()])
        d.complete(Self.small, .failed(reason: "malformed JSON", expired: false))
        #expect(d.publications.isEmpty)
        #expect(d.machine.record(Self.small)?.stale?.reason == .providerFailed)
        d.advance(to: .at(0, 15))
        #expect(d.calls.map(\.1) == [.added, .retry])
    }
}
