import Foundation
import RefreshdCalendar
import RefreshdCore
import Testing
@testable import RefreshdConfig

/// Calendar expressions turned into core schedules; the instants below are what
/// `TZ=ZONE systemd-analyze calendar EXPR --iterations=3 --base-time=BASE` prints.
@Suite struct CalendarScheduleBuilderTests {
    func elapses(_ expression: String, _ zone: String, after base: String) throws -> [String] {
        let schedule = try CalendarScheduleBuilder.schedule(expression, zone: TestSupport.zone(zone))
        return CalendarScheduleBuilder.elapses(of: schedule, after: TestSupport.instant(base), count: 3).map(\.iso8601)
    }

    @Test func parisInWinterAndSummer() throws {
        #expect(try elapses("*-*-* 04:00", "Europe/Paris", after: "2026-11-21T12:00:00Z")
            == ["2026-11-22T03:00:00.000Z", "2026-11-23T03:00:00.000Z", "2026-11-24T03:00:00.000Z"])
        #expect(try elapses("*-*-* 04:00", "Europe/Paris", after: "2026-07-01T12:00:00Z")
            == ["2026-07-02T02:00:00.000Z", "2026-07-03T02:00:00.000Z", "2026-07-04T02:00:00.000Z"])
    }

    @Test func newYorkWeekdaysAndDaylightSaving() throws {
        // Saturday: the next weekday 06:00 EST is Monday.
        #expect(try elapses("Mon..Fri 06:00", "America/New_York", after: "2026-11-21T12:00:00Z")
            == ["2026-11-23T11:00:00.000Z", "2026-11-24T11:00:00.000Z", "2026-11-25T11:00:00.000Z"])
        // 02:30 does not exist on 2026-03-08 (spring forward): skipped.
        #expect(try elapses("*-*-* 02:30", "America/New_York", after: "2026-03-07T12:00:00Z")
            == ["2026-03-09T06:30:00.000Z", "2026-03-10T06:30:00.000Z", "2026-03-11T06:30:00.000Z"])
        // 01:30 happens twice on 2026-11-01 (fall back): once, in EDT.
        #expect(try elapses("*-*-* 01:30", "America/New_York", after: "2026-10-31T12:00:00Z")
            == ["2026-11-01T05:30:00.000Z", "2026-11-02T06:30:00.000Z", "2026-11-03T06:30:00.000Z"])
    }

    @Test func textNamesExpressionAndZone() throws {
        let paris = try CalendarScheduleBuilder.schedule("*-*-* 04:00", zone: TestSupport.zone("Europe/Paris"))
        let newYork = try CalendarScheduleBuilder.schedule("*-*-* 04:00", zone: TestSupport.zone("America/New_York"))
        #expect(paris.text == "*-*-* 04:00 [Europe/Paris]")
        #expect(paris != newYork)
        #expect(CalendarScheduleBuilder.zone(of: paris)?.identifier == "Europe/Paris")
        #expect(CalendarScheduleBuilder.zone(of: Schedule("hand-made") { _ in nil }) == nil)
    }

    @Test func theExpressionsOwnZoneWins() throws {
        let schedule = try CalendarScheduleBuilder.schedule("*-*-* 04:00 America/New_York",
                                                            zone: TestSupport.zone("Europe/Paris"))
        #expect(schedule.text == "*-*-* 04:00 America/New_York [America/New_York]")
        #expect(schedule.next(after: TestSupport.now) == TestSupport.instant("2026-11-22T09:00:00Z"))
    }

    @Test func nextIsStrictlyAfter() throws {
        let schedule = try CalendarScheduleBuilder.schedule("*-*-* 04:00", zone: TestSupport.zone("Europe/Paris"))
        let slot = TestSupport.instant("2026-11-22T03:00:00Z")
        #expect(schedule.next(after: slot) == TestSupport.instant("2026-11-23T03:00:00Z"))
        #expect(schedule.next(after: slot - .milliseconds(1)) == slot)
    }

    @Test func scheduleThatEnds() throws {
        let schedule = try CalendarScheduleBuilder.schedule("2026-11-22 04:00", zone: TestSupport.zone("UTC"))
        #expect(CalendarScheduleBuilder.elapses(of: schedule, after: TestSupport.now, count: 3)
            == [TestSupport.instant("2026-11-22T04:00:00Z")])
    }

    @Test func badExpressionThrowsWithItsColumn() {
        #expect(throws: CalendarParseError(column: 7, expected: "an hour 0-23", found: "25")) {
            try CalendarScheduleBuilder.schedule("*-*-* 25:00", zone: TestSupport.zone("UTC"))
        }
    }
}
