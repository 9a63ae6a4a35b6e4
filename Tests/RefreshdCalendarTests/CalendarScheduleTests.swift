import Foundation
import Testing
import RefreshdCalendar

/// Next-elapse behaviour at DST gaps and overlaps, leap days and month ends. Expected values
/// are what systemd-analyze 252 prints for the same expression, zone and base.
@Suite struct CalendarScheduleTests {
    static func utc(_ text: String) -> Date {
        ISO8601DateFormatter().date(from: text)!
    }

    func elapses(_ expression: String, _ zone: String, after base: String, count: Int = 3) throws -> [String] {
        let schedule = try CalendarSchedule(parsing: expression)
        let tz = try #require(TimeZone(identifier: zone))
        let formatter = ISO8601DateFormatter()
        return schedule.elapses(after: Self.utc(base), in: tz, count: count).map { formatter.string(from: $0) }
    }

    @Test func newYorkSpringForwardSkipsTheMissingTime() throws {
        // 02:30 does not exist on 2026-03-08; systemd fires on the next day instead.
        #expect(try elapses("*-*-* 02:30", "America/New_York", after: "2026-03-07T17:00:00Z")
                == ["2026-03-09T06:30:00Z", "2026-03-10T06:30:00Z", "2026-03-11T06:30:00Z"])
        // A repeating minute pattern continues after the gap.
        #expect(try elapses("*:0/20", "America/New_York", after: "2026-03-08T06:00:00Z")
                == ["2026-03-08T06:20:00Z", "2026-03-08T06:40:00Z", "2026-03-08T07:00:00Z"])
    }

    @Test func newYorkFallBackFiresOnce() throws {
        #expect(try elapses("*-*-* 01:30", "America/New_York", after: "2026-10-31T16:00:00Z")
                == ["2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z", "2026-11-03T06:30:00Z"])
        #expect(try elapses("hourly", "America/New_York", after: "2026-11-01T04:30:00Z")
                == ["2026-11-01T05:00:00Z", "2026-11-01T07:00:00Z", "2026-11-01T08:00:00Z"])
        // From inside the repeated hour, the second copy's times still come.
        #expect(try elapses("*:45", "America/New_York", after: "2026-11-01T06:30:00Z", count: 1)
                == ["2026-11-01T06:45:00Z"])
    }

    @Test func londonOverlap() throws {
        #expect(try elapses("*-*-* 01:30", "Europe/London", after: "2026-10-24T12:00:00Z", count: 2)
                == ["2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"])
        #expect(try elapses("hourly", "Europe/London", after: "2026-10-24T23:30:00Z")
                == ["2026-10-25T00:00:00Z", "2026-10-25T02:00:00Z", "2026-10-25T03:00:00Z"])
    }

    @Test func lordHoweHalfHourShift() throws {
        // 2026-04-05 02:00 +11 → 01:30 +1030: 01:45 happens twice, fires once.
        #expect(try elapses("*-*-* 01:45", "Australia/Lord_Howe", after: "2026-04-04T00:00:00Z", count: 2)
                == ["2026-04-04T14:45:00Z", "2026-04-05T15:15:00Z"])
        // 2026-10-04 02:00 +1030 → 02:30 +11: 02:15 does not exist that day.
        #expect(try elapses("*-*-* 02:15", "Australia/Lord_Howe", after: "2026-10-03T00:00:00Z", count: 2)
                == ["2026-10-04T15:15:00Z", "2026-10-05T15:15:00Z"])
    }

    @Test func tokyoHasNoTransitions() throws {
        #expect(try elapses("*-*-* 02:30", "Asia/Tokyo", after: "2026-03-07T00:00:00Z", count: 2)
                == ["2026-03-07T17:30:00Z", "2026-03-08T17:30:00Z"])
    }

    @Test func leapDaysAndMonthEnds() throws {
        #expect(try elapses("*-02-29", "UTC", after: "2026-01-01T00:00:00Z", count: 2)
                == ["2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z"])
        #expect(try elapses("*-*~01", "UTC", after: "2026-01-15T00:00:00Z", count: 3)
                == ["2026-01-31T00:00:00Z", "2026-02-28T00:00:00Z", "2026-03-31T00:00:00Z"])
        #expect(try elapses("*-02~01", "UTC", after: "2027-06-01T00:00:00Z", count: 2)
                == ["2028-02-29T00:00:00Z", "2029-02-28T00:00:00Z"])
    }

    @Test func impossibleDatesEndQuickly() throws {
        let february30 = try CalendarSchedule(parsing: "*-02-30")
        let monday31 = try CalendarSchedule(parsing: "Mon *-02-31 12:00")
        let base = Self.utc("2026-01-01T00:00:00Z")
        let elapsed = ContinuousClock().measure {
            #expect(february30.nextElapse(after: base, in: .gmt) == nil)
            #expect(monday31.nextElapse(after: base, in: .gmt) == nil)
        }
        #expect(elapsed < .seconds(2))
    }

    @Test func zoneSuffixOverridesPassedZone() throws {
        let schedule = try CalendarSchedule(parsing: "*-*-* 12:00 Asia/Tokyo")
        let next = schedule.nextElapse(after: Self.utc("2026-06-01T00:00:00Z"), in: try #require(TimeZone(identifier: "America/New_York")))
        #expect(next == Self.utc("2026-06-01T03:00:00Z"))
    }

    @Test func strictlyAfterBase() throws {
        let schedule = try CalendarSchedule(parsing: "*-*-* 12:00")
        #expect(schedule.nextElapse(after: Self.utc("2026-06-01T12:00:00Z"), in: .gmt) == Self.utc("2026-06-02T12:00:00Z"))
    }
}
