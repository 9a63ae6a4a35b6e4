import Foundation  // JSON round trips of the records, as the runtime stores them
import Testing
@testable import RefreshdCore

/// Restarts on the saved records: entries that passed while down, a policy reload that fell due
/// while down ("refreshd down"), a provider interrupted by the stop, the budget ledger kept.
@Suite struct TimelineRestoreTests {
    static let small = WidgetID(kind: "wallpaper", family: .systemSmall)
    static let definition = WidgetDefinition(kind: "wallpaper", families: [.systemSmall],
                                             job: "wallpaper.provider", budget: .limited(3))

    static func day(_ day: Int64 = 0) -> Timeline {
        Timeline(entries: [6, 12, 18, 22].map { TimelineEntry(date: .at(day: day, $0), content: "{\"h\":\($0)}") },
                 policy: .atEnd)
    }

    /// The store's records through JSON and back, as the runtime keeps them.
    static func throughJSON(_ d: inout TimelineDriver) throws {
        let encoder = JSONEncoder(), decoder = JSONDecoder()
        for (key, record) in d.records {
            d.records[key] = try decoder.decode(WidgetRecord.self, from: encoder.encode(record))
        }
        for (key, row) in d.counterRows {
            d.counterRows[key] = try decoder.decode(WidgetDayCounter.self, from: encoder.encode(row))
        }
    }

    @Test func entriesThatPassedWhileDownAreSkippedToTheCurrentOne() throws {
        var d = TimelineDriver([Self.definition], start: .at(5, 0))
        d.complete(Self.small, .timeline(Self.day(), upstreamFetch: true))
        d.advance(to: .at(7, 0))
        try Self.throughJSON(&d)
        d.restart(at: .at(19, 0))
        #expect(d.shown[Self.small]?.date == .at(18, 0))
        #expect(d.publications.suffix(1).map(\.2) == [.at(19, 0)])
        #expect(d.machine.nextDeadline == .at(22, 0))
        #expect(d.machine.record(Self.small)?.stale == nil)
        #expect(d.calls.count == 1)  // nothing due: no reload
    }

    @Test func aPolicyReloadDueWhileDownIsStaleFromItsDueInstant() throws {
        var d = TimelineDriver([Self.definition], start: .at(5, 0))
        d.complete(Self.small, .timeline(Self.day(), upstreamFetch: true))
        d.advance(to: .at(21, 0))
        try Self.throughJSON(&d)
        d.restart(at: .at(day: 1, 8, 30))
        let record = d.machine.record(Self.small)
        #expect(record?.stale?.start == .at(22, 0) && record?.stale?.reason == .refreshdDown)
        #expect(d.calls.last?.1 == .policyAtEnd && d.calls.last?.2 == .at(day: 1, 8, 30))
        #expect(d.shown[Self.small]?.date == .at(22, 0))
        d.complete(Self.small, .timeline(Self.day(1), upstreamFetch: true))
        #expect(d.shown[Self.small]?.date == .at(day: 1, 6, 0))
        // Stale 22:00 to 08:30 the next day: 2 h on the first day, 8 h 30 on the second.
        #expect(d.row("2026-11-22", Self.small)?.staleMinutes == 120)
        #expect(d.row("2026-11-22", Self.small)?.firstStale == .at(22, 0))
        #expect(d.row("2026-11-22", Self.small)?.staleReason == .refreshdDown)
        #expect(d.row("2026-11-22", Self.small)?.performed == 1)  // the day's row was added to, not replaced
        #expect(d.row("2026-11-23", Self.small)?.staleMinutes == 510)
        #expect(d.row("2026-11-23", Self.small)?.firstStale == .at(day: 1, 0, 0))
    }

    @Test func aProviderInFlightAtTheStopFailedAsInterrupted() throws {
        var d = TimelineDriver([Self.definition], start: .at(5, 0))
        d.complete(Self.small, .timeline(Self.day(), upstreamFetch: true))
        d.advance(to: .at(22, 0))  // the atEnd reload is in flight when refreshd dies
        try Self.throughJSON(&d)
        d.restart(at: .at(22, 5))
        let record = d.machine.record(Self.small)
        #expect(record?.stale == StaleSpan(start: .at(22, 0), reason: .providerInterrupted))
        #expect(d.logs.contains(.interrupted(Self.small, since: .at(22, 0))))
        #expect(d.calls.last?.1 == .policyAtEnd && d.calls.last?.2 == .at(22, 5))
        #expect(record?.ledger == [.at(5, 0), .at(22, 0), .at(22, 5)])  // the interrupted call counted
        #expect(d.row("2026-11-22", Self.small)?.failed == 1)
    }

    /// Issue 32: a shard handed over while its provider request was held (or refreshd stopped
    /// before the launch): the call never started, its request is restored pending and will
    /// run. It is not interrupted: no failure, no stale span, no second call, and the result of
    /// the run that does launch is taken (before, it was "ignored: no provider call in flight"
    /// and the widget waited out the reload spacing).
    @Test func aProviderCallWhoseRunNeverStartedIsStillInFlightAfterARestore() throws {
        var d = TimelineDriver([Self.definition], start: .at(5, 0))
        d.complete(Self.small, .timeline(Self.day(), upstreamFetch: true))
        d.advance(to: .at(22, 0))  // the atEnd reload asked; its run held, never launched
        try Self.throughJSON(&d)
        let callsBefore = d.calls(of: Self.small).count
        d.restart(at: .at(22, 5), providersWaiting: [Self.small])
        let record = d.machine.record(Self.small)
        #expect(record?.stale == nil)
        #expect(!d.logs.contains(.interrupted(Self.small, since: .at(22, 0))))
        #expect(d.calls(of: Self.small).count == callsBefore, "asked again while its call is still in flight")
        #expect(record?.ledger == [.at(5, 0), .at(22, 0)])  // counted once
        d.complete(Self.small, .timeline(Self.day(1), upstreamFetch: true))
        #expect(d.machine.record(Self.small)?.timelineReceived == .at(22, 5), "the restored call's result was not taken")
        #expect(d.machine.record(Self.small)?.inFlight == nil)
        #expect(d.row("2026-11-22", Self.small)?.failed == 0)
    }

    @Test func theBudgetLedgerAndADeferredReloadSurviveARestart() throws {
        var d = TimelineDriver([Self.definition], start: .at(5, 0)) { _, now in
            .timeline(timeline([now], .never), upstreamFetch: false)
        }
        for hour: Int64 in [6, 7, 8] {
            d.advance(to: .at(hour, 0))
            d.send(.reload(kind: "wallpaper", reason: .explicitJob))
        }
        d.advance(by: .minutes(1))
        #expect(d.machine.record(Self.small)?.release == .at(day: 1, 5, 0))
        try Self.throughJSON(&d)
        d.restart(at: .at(10, 0))
        #expect(d.machine.record(Self.small)?.release == .at(day: 1, 5, 0))
        #expect(d.machine.record(Self.small)?.stale?.reason == .budgetSpent)
        d.advance(to: .at(day: 1, 5, 0))
        #expect(d.calls(of: Self.small).last == .at(day: 1, 5, 0))
    }

    @Test func recordsOfWidgetsNoLongerDeclaredAreDropped() {
        var d = TimelineDriver([Self.definition], start: .at(5, 0))
        d.definitions = [WidgetDefinition(kind: "other", families: [.accessoryInline], job: "other.provider")]
        d.restart(at: .at(6, 0))
        #expect(d.records[Self.small.description] == nil)
        #expect(d.logs.contains(.droppedRecord(Self.small)))
    }

    @Test func recordsAndChangesEncodeAsPlainJSON() throws {
        var record = WidgetRecord(widget: Self.small)
        record.timeline = Timeline(entries: [TimelineEntry(date: .at(6, 0), content: "{\"asset\":\"a1\"}",
                                                           relevance: 0.5, duration: .minutes(30))],
                                   policy: .after(.at(day: 1, 0, 0)))
        let json = String(decoding: try JSONEncoder().encode(record.timeline), as: UTF8.self)
        #expect(json.contains("\"policy\":{\"after\":\"2026-11-23T00:00:00.000Z\"}"))
        #expect(json.contains("\"durationMilliseconds\":1800000"))
        #expect(try JSONDecoder().decode(WidgetRecord.self, from: JSONEncoder().encode(record)) == record)
        for policy in [TimelinePolicy.atEnd, .never, .after(.at(3, 0))] {
            #expect(try JSONDecoder().decode(TimelinePolicy.self, from: JSONEncoder().encode(policy)) == policy)
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(TimelinePolicy.self, from: Data("\"soon\"".utf8))
        }
        let change = TimelineChange.putCounters(WidgetDayCounter(day: "2026-11-22", widget: Self.small))
        #expect(change.table == "widget-day" && change.key == "2026-11-22 wallpaper/systemSmall")
        #expect(TimelineChange.deleteWidget(Self.small).key == "wallpaper/systemSmall")
    }
}
