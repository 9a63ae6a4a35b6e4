import Testing
@testable import RefreshdCore

/// A provider with nothing to show yet (`ProviderResult.waiting`: a fresh start before the first
/// staging run) is not a failure: no stale span, no failure counted, no retry, one info line; the
/// reload from whoever fills the source brings the first entries.
@Suite struct TimelineWaitingTests {
    static let small = WidgetID(kind: "wallpaper", family: .systemSmall)
    static func definition(retry: Duration? = .minutes(15)) -> WidgetDefinition {
        WidgetDefinition(kind: "wallpaper", families: [.systemSmall], job: "wallpaper.provider", failureRetry: retry)
    }

    /// The effects of one event, as the driver saw them.
    static func effects(_ d: inout TimelineDriver, _ body: (inout TimelineDriver) -> Void) -> [TimelineEffect] {
        let before = d.effects.count
        body(&d)
        return Array(d.effects[before...])
    }

    @Test func aFreshStartWaitsInsteadOfFailing() {
        var d = TimelineDriver([Self.definition()])
        #expect(d.calls.map(\.1) == [.added])
        let out = Self.effects(&d) { $0.complete(Self.small, .waiting(reason: "no playlist staged yet")) }
        // Exactly one info line: no stale span, no failure line, no publication, nothing persisted
        // beyond the record the driver commits.
        #expect(out.filter { if case .persist = $0 { false } else { true } }
            == [.log(.waiting(Self.small, reason: "no playlist staged yet"))])
        let record = d.machine.record(Self.small)
        #expect(record?.stale == nil)
        #expect(record?.lastFailure == nil)
        #expect(record?.policyDue == nil)  // no retry: the staging run's reload brings the entries
        #expect(record?.inFlight == nil)
        #expect(d.machine.nextDeadline == nil)
        d.advance(by: .hours(1))
        #expect(d.calls.count == 1)
        // The staging run's explicit reload brings the first entries; nothing was ever stale.
        d.send(.reload(kind: "wallpaper", reason: .explicitJob))
        d.complete(Self.small, .timeline(timeline([.at(0, 0)], .never, content: "{\"n\":1}"), upstreamFetch: false))
        #expect(d.shown[Self.small]?.content == "{\"n\":1}")
        #expect(d.machine.snapshot().widgets[0].staleSpans.isEmpty)
        let row = d.row("2026-11-22", Self.small)
        #expect(row?.failed == 0)
        #expect(row?.staleMinutes == 0)
        #expect(row?.providerCalls == 2)  // the waiting call was a provider run: it stays counted
        #expect(!d.logs.contains { if case .staleStarted = $0 { true } else { false } })
        #expect(!d.logs.contains { if case .failed = $0 { true } else { false } })
    }

    /// Waiting after a good timeline (the container was emptied) keeps what is shown and opens
    /// no span; a failure in the same place would.
    @Test func waitingKeepsTheLastGoodTimelineAndItsFreshness() {
        var d = TimelineDriver([Self.definition()])
        let good = timeline([.at(0, 0), .at(1, 0)], .atEnd, content: "{\"n\":1}")
        d.complete(Self.small, .timeline(good, upstreamFetch: true))
        d.advance(to: .at(1, 0))
        #expect(d.calls.last?.1 == .policyAtEnd)
        let out = Self.effects(&d) { $0.complete(Self.small, .waiting(reason: "nothing yet")) }
        #expect(out.filter { if case .persist = $0 { false } else { true } }
            == [.log(.waiting(Self.small, reason: "nothing yet"))])
        let record = d.machine.record(Self.small)
        #expect(record?.timeline == good)
        #expect(record?.stale == nil)
        #expect(d.shown[Self.small]?.content == "{\"n\":1}")
    }

    /// Regression: with the 5-minute minimum interval, the staging run's reload two seconds
    /// after a fresh start's waiting call was spaced, and the widget showed nothing for 5 minutes.
    @Test func aWaitingCallStartsNoMinimumInterval() {
        var definition = Self.definition()
        definition.minReloadInterval = .minutes(5)
        var d = TimelineDriver([definition])
        d.complete(Self.small, .waiting(reason: "no playlist staged yet"))
        d.advance(by: .seconds(2))
        let out = Self.effects(&d) { $0.send(.reload(kind: "wallpaper", reason: .explicitJob)) }
        #expect(!out.contains { if case .log(.spaced) = $0 { true } else { false } })
        #expect(d.calls.count == 2)
        d.complete(Self.small, .timeline(timeline([.at(0, 0)], .never, content: "{\"n\":1}"), upstreamFetch: false))
        #expect(d.shown[Self.small]?.content == "{\"n\":1}")
    }

    @Test func theLineSaysWaitingNotFailed() {
        #expect(TimelineLog.waiting(Self.small, reason: "no playlist staged yet in /s/wallpaper/playlists").description
            == "waiting wallpaper/systemSmall: no playlist staged yet in /s/wallpaper/playlists (not a failure, not stale)")
    }
}
