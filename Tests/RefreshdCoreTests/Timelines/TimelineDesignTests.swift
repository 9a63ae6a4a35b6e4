import Testing
@testable import RefreshdCore

/// The designs the developers measured, as machine-level runs over days of virtual
/// time: the ones that burn the budget go stale by late morning, the full-day timeline never does.
@Suite struct TimelineDesignTests {
    static let small = WidgetID(kind: "wallpaper", family: .systemSmall)
    static let definition = WidgetDefinition(kind: "wallpaper", families: [.systemSmall], job: "wallpaper.provider")

    static func startOfHour(after now: Instant) -> Instant {
        let hour: Int64 = 3_600_000
        return Instant(milliseconds: (now.milliseconds / hour + 1) * hour)
    }

    static func startOfDay(after now: Instant) -> Instant {
        Instant(milliseconds: (now.milliseconds / 86_400_000 + 1) * 86_400_000)
    }

    /// Runs `days` days from midnight: the app asks for explicit reloads every `explicitEvery`
    /// (if any) and comes to the foreground at 08:00, 13:00 and 19:00 (exempt reloads).
    static func run(days: Int64, explicitEvery: Duration?,
                    provider: @escaping (WidgetID, Instant) -> ProviderResult) -> TimelineDriver {
        var d = TimelineDriver([definition], provider: provider)
        var events: [(Instant, ReloadReason)] = []
        for day in 0..<days {
            for hour: Int64 in [8, 13, 19] { events.append((.at(day: day, hour, 0), .appForeground)) }
            if let every = explicitEvery {
                var t = Instant.at(day: day, 0, 6)
                while t < .at(day: day + 1, 0, 0) {
                    events.append((t, .explicitJob))
                    t = t + every
                }
            }
        }
        for (instant, reason) in events.sorted(by: { $0.0 < $1.0 }) {
            d.advance(to: instant)
            d.send(.reload(kind: "wallpaper", reason: reason))
        }
        d.advance(to: .at(day: days, 0, 0) - .milliseconds(1))
        return d
    }

    @Test func hourlyOneEntryTimelinesPlusExplicitReloadsGoStaleByLateMorning() {
        let d = Self.run(days: 3, explicitEvery: .minutes(12)) { _, now in
            .timeline(timeline([Self.startOfHour(after: now)], .atEnd), upstreamFetch: true)
        }
        for (index, day) in ["2026-11-22", "2026-11-23", "2026-11-24"].enumerated() {
            let row = d.row(day, Self.small)
            #expect(row?.requested ?? 0 >= 120)
            #expect(row?.performed ?? 99 <= 50)
            #expect(row?.deferred ?? 0 > 0)
            #expect(row?.budgetLow == 0)
            #expect(row?.staleReason == .budgetSpent)
            // Stale before noon, for hours of the day.
            #expect(row?.firstStale.map { $0 < .at(day: Int64(index), 12, 0) } == true, "\(day)")
            #expect(row?.staleMinutes ?? 0 > 6 * 60)
        }
        #expect(d.machine.checkInvariants().isEmpty)
    }

    @Test func oneFullDayTimelineReloadsAHandfulOfTimesAndNeverGoesStale() {
        let d = Self.run(days: 7, explicitEvery: nil) { _, now in
            let today = Instant(milliseconds: now.milliseconds / 86_400_000 * 86_400_000)
            // After 22:00 the provider returns tomorrow's day.
            let day = now >= today + .hours(22) ? today + .hours(24) : today
            return .timeline(Timeline(entries: [6, 12, 18, 22].map { TimelineEntry(date: day + .hours($0), content: "{\"h\":\($0)}") },
                                      policy: .atEnd), upstreamFetch: true)
        }
        for day in 0..<7 {
            let name = ISO8601.day(.at(day: Int64(day), 12, 0))
            let row = d.row(name, Self.small)
            #expect(row?.performed ?? 99 <= 2, "\(name)")
            #expect(row?.exempt == 3)
            #expect(row?.staleMilliseconds == 0 && row?.firstStale == nil, "\(name)")
            #expect(row?.budgetLow ?? 0 >= 48)
        }
        // Four entries shown a day, each at its date.
        let shownAt = d.publications.filter { $0.2 == $0.1?.date }.map(\.2)
        #expect(shownAt.count >= 7 * 4 - 1)
        #expect(d.machine.record(Self.small)?.recentSpans.isEmpty == true)
    }

    @Test func aSingleEntryWithAtEndBurnsTheBudgetWhereAfterTomorrowDoesNot() {
        let atEnd = Self.run(days: 2, explicitEvery: nil) { _, now in
            .timeline(timeline([now], .atEnd), upstreamFetch: true)
        }
        let first = atEnd.row("2026-11-22", Self.small)
        #expect(first?.performed == 50)
        #expect(first?.staleReason == .budgetSpent)
        #expect(first?.firstStale.map { $0 < .at(0, 10) } == true)  // minutes after the start

        let tomorrow = Self.run(days: 7, explicitEvery: nil) { _, now in
            .timeline(timeline([now], .after(Self.startOfDay(after: now))), upstreamFetch: true)
        }
        for day in 0..<7 {
            let row = tomorrow.row(ISO8601.day(.at(day: Int64(day), 12, 0)), Self.small)
            #expect(row?.performed == 1)
            #expect(row?.staleMilliseconds == 0)
        }
    }
}
