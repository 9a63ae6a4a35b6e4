import Testing
@testable import RefreshdCore

/// Entries are shown at their dates without asking the provider; a new timeline shows its
/// current entry at once; early, late and spurious wake-ups and clock steps are handled.
@Suite struct TimelinePublicationTests {
    static let small = WidgetID(kind: "wallpaper", family: .systemSmall)
    static let definition = WidgetDefinition(kind: "wallpaper", families: [.systemSmall], job: "wallpaper.provider")

    /// Entries at 06:00, 12:00, 18:00 and 22:00 of the day, content naming the hour.
    static func day(_ day: Int64 = 0) -> Timeline {
        Timeline(entries: [6, 12, 18, 22].map { TimelineEntry(date: .at(day: day, $0), content: "{\"h\":\($0)}") },
                 policy: .atEnd)
    }

    static func received(_ d: TimelineDriver) -> [(Instant, String?)] {
        d.publications.map { ($0.2, $0.1?.content) }
    }

    @Test func entriesAreShownAtTheirDatesWithoutTheProvider() {
        var d = TimelineDriver([Self.definition], start: .at(5, 0))
        d.complete(Self.small, .timeline(Self.day(), upstreamFetch: true))
        #expect(d.publications.isEmpty)  // nothing dated before 05:00 yet
        #expect(d.machine.nextDeadline == .at(6, 0))
        d.advance(to: .at(21, 0))
        #expect(d.publications.map(\.2) == [.at(6, 0), .at(12, 0), .at(18, 0)])
        #expect(d.shown[Self.small]?.content == "{\"h\":18}")
        #expect(d.calls.count == 1)
        let status = d.machine.snapshot().widgets[0]
        #expect(status.shownSince == .at(18, 0) && status.nextEntrySwitch == .at(22, 0))
        #expect(status.nextReload == .at(22, 0) && status.nextReloadWhy == .policy)
    }

    @Test func aNewTimelinePublishesItsCurrentEntryAtOnce() {
        var d = TimelineDriver([Self.definition], start: .at(13, 0))
        d.complete(Self.small, .timeline(Self.day(), upstreamFetch: true))
        #expect(d.publications.count == 1)
        #expect(d.shown[Self.small]?.date == .at(12, 0))
        #expect(d.logs.contains(.published(Self.small, entryDate: .at(12, 0))))
    }

    @Test func theOldEntryStaysUntilTheNewTimelinesFirstDate() {
        var d = TimelineDriver([Self.definition], start: .at(13, 0))
        d.complete(Self.small, .timeline(Self.day(), upstreamFetch: true))
        d.advance(to: .at(22, 0))  // atEnd: reload at 22:00
        #expect(d.calls.count == 2)
        d.complete(Self.small, .timeline(Self.day(1), upstreamFetch: true))
        #expect(d.shown[Self.small]?.date == .at(22, 0))  // tomorrow's entries are all ahead
        #expect(d.machine.record(Self.small)?.shown?.index == nil)
        d.advance(to: .at(day: 1, 6, 0))
        #expect(d.shown[Self.small]?.date == .at(day: 1, 6, 0))
        #expect(d.machine.checkInvariants().isEmpty)
    }

    @Test func earlyLateAndSpuriousWakeUps() {
        var d = TimelineDriver([Self.definition], start: .at(5, 0))
        d.complete(Self.small, .timeline(Self.day(), upstreamFetch: true))
        d.now = .at(5, 59)
        d.send(.timerFired)  // early
        #expect(d.publications.isEmpty)
        #expect(d.machine.nextDeadline == .at(6, 0))
        d.now = .at(12, 30)
        d.send(.timerFired)  // late, past two entries: only the current one is shown
        #expect(d.publications.map(\.1?.date) == [.at(12, 0)])
        d.send(.timerFired)  // spurious
        #expect(d.publications.count == 1)
    }

    @Test func clockStepsForwardAndBack() {
        var d = TimelineDriver([Self.definition], start: .at(7, 0))
        d.complete(Self.small, .timeline(Self.day(), upstreamFetch: true))
        d.now = .at(23, 0)
        d.send(.clockChanged)  // forward past 12, 18, 22 and the atEnd reload
        #expect(d.shown[Self.small]?.date == .at(22, 0))
        #expect(d.calls.last?.1 == .policyAtEnd)
        d.complete(Self.small, .timeline(Self.day(), upstreamFetch: true))
        d.now = .at(13, 0)
        d.send(.clockChanged)  // back: the entry for 13:00 is the 12:00 one again
        #expect(d.shown[Self.small]?.date == .at(12, 0))
        #expect(d.machine.nextDeadline == .at(18, 0))
    }

    @Test func providerResultsWithoutACallAreIgnored() {
        var d = TimelineDriver([Self.definition], start: .at(7, 0))
        d.complete(Self.small, .timeline(Self.day(), upstreamFetch: true))
        d.send(.providerFinished(Self.small, .timeline(Self.day(1), upstreamFetch: true)))
        #expect(d.logs.last == .ignoredResult(Self.small))
        #expect(d.machine.record(Self.small)?.timeline == Self.day())
    }

    @Test func withdrawnFamiliesLeaveTheScreenAndTheStore() {
        let both = WidgetDefinition(kind: "wallpaper", families: [.systemSmall, .systemLarge], job: "wallpaper.provider")
        let large = WidgetID(kind: "wallpaper", family: .systemLarge)
        var d = TimelineDriver([both], start: .at(7, 0))
        d.complete(Self.small, .timeline(Self.day(), upstreamFetch: true))
        d.complete(large, .timeline(Self.day(), upstreamFetch: false))
        d.send(.declare(Self.definition))  // large leaves the screen, small keeps its state
        #expect(d.shown[large] == nil && d.publications.last?.1 == nil)
        #expect(d.records[large.description] == nil)
        #expect(d.machine.record(Self.small)?.timeline == Self.day())
        d.send(.undeclare(kind: "wallpaper"))
        #expect(d.records.isEmpty && d.machine.widgetIDs.isEmpty)
        #expect(d.machine.nextDeadline == nil)
    }
}
