import Testing
import RefreshdCalendar

/// Cron parsing: shape detection, aliases, names, the day-of-month OR day-of-week rule, errors.
@Suite struct CronParserTests {
    @Test(arguments: [
        ("@hourly", "*-*-* *:00:00"),
        ("@weekly", "Sun *-*-* 00:00:00"),
        ("@monthly", "*-*-01 00:00:00"),
        ("@yearly", "*-01-01 00:00:00"),
        ("30 2 * * 1-5", "Mon..Fri *-*-* 02:30:00"),
        ("0 */6 * * *", "*-*-* 00/6:00:00"),
        ("5,35 8-18/2 * jan,jul *", "*-01,07-* 08..18/2:05,35:00"),
        ("0 0 13 * fri", "*-*-13 00:00:00 | Fri *-*-* 00:00:00"),
        ("0 0 */2 * 1", "*-*-01/2 00:00:00 | Mon *-*-* 00:00:00"),
        ("0 0 * * 0,7", "Sun *-*-* 00:00:00"),
    ])
    func normalizes(_ input: String, _ expected: String) throws {
        #expect(try CalendarSchedule(parsing: input).normalized == expected)
    }

    @Test(arguments: [
        ("60 * * * *", 1, "a minute 0-59", "60"),
        ("0 24 * * *", 3, "an hour 0-23", "24"),
        ("0 0 0 * *", 5, "a day of month 1-31", "0"),
        ("0 0 * foo *", 7, "a month 1-12 or jan-dec", "foo"),
        ("0 0 * * 8", 9, "a day of week 0-7 or sun-sat", "8"),
        ("0 5-2 * * *", 3, "a range whose end is not before its start", "5-2"),
        ("@fortnightly", 1, "a cron alias (@hourly, @daily, @weekly, @monthly, @yearly)", "@fortnightly"),
    ] as [(String, Int, String, String?)])
    func rejects(_ input: String, _ column: Int, _ expected: String, _ found: String?) {
        #expect(throws: CalendarParseError(column: column, expected: expected, found: found)) {
            try CalendarSchedule(parsing: input)
        }
    }
}
