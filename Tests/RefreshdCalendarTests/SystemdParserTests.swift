import Testing
import RefreshdCalendar

/// Parsing of systemd calendar events: normalized forms (as systemd-analyze prints them) and
/// error columns for rejected expressions.
@Suite struct SystemdParserTests {
    @Test(arguments: [
        ("daily", "*-*-* 00:00:00"),
        ("minutely", "*-*-* *:*:00"),
        ("hourly", "*-*-* *:00:00"),
        ("weekly", "Mon *-*-* 00:00:00"),
        ("monthly", "*-*-01 00:00:00"),
        ("yearly", "*-01-01 00:00:00"),
        ("annually", "*-01-01 00:00:00"),
        ("quarterly", "*-01,04,07,10-01 00:00:00"),
        ("semiannually", "*-01,07-01 00:00:00"),
        ("daily UTC", "*-*-* 00:00:00 UTC"),
        ("Mon..Fri 09:00", "Mon..Fri *-*-* 09:00:00"),
        ("Sat,Sunday 12:00", "Sat,Sun *-*-* 12:00:00"),
        ("Mon-Wed,Fri", "Mon..Wed,Fri *-*-* 00:00:00"),
        ("*-*~01", "*-*~01 00:00:00"),
        ("*-02~01..03 23:00", "*-02~01..03 23:00:00"),
        ("2026-11-22 03:00", "2026-11-22 03:00:00"),
        ("26-1-2", "2026-01-02 00:00:00"),
        ("*:0/15", "*-*-* *:00/15:00"),
        ("*:*:05.250", "*-*-* *:*:05.250000"),
        ("12:00 Europe/Paris", "*-*-* 12:00:00 Europe/Paris"),
        ("*-*-* 01..05/2:30", "*-*-* 01..05/2:30:00"),
        ("*-*-* 1..6/2:00", "*-*-* 01..05/2:00:00"),
        ("@1395716396", "2014-03-25 02:59:56 UTC"),
    ])
    func normalizes(_ input: String, _ expected: String) throws {
        #expect(try CalendarSchedule(parsing: input).normalized == expected)
    }

    @Test(arguments: [
        ("*-*-* 25:00", 7, "an hour 0-23", "25"),
        ("*-13-01", 3, "a month 1-12", "13"),
        ("*-*-32", 5, "a day 1-31", "32"),
        ("*-*-* 12:60", 10, "a minute 0-59", "60"),
        ("Fri..Mon", 1, "a weekday range in Monday-to-Sunday order", "Fri..Mon"),
        ("*-*-* 12:00 Mars/Olympus", 13, "a time zone (UTC or an IANA name such as Europe/Paris)", "Mars/Olympus"),
        ("*-*-* 12", 9, "\":\" after the hour", nil),
        ("1969-01-01", 1, "a year 1970-2199", "1969"),
        ("*:*:59..59", 5, "a seconds range at least one second long", "59..59"),
        ("*-*~29", 5, "a day 1-28 counted back from the month's end", "29"),
    ] as [(String, Int, String, String?)])
    func rejects(_ input: String, _ column: Int, _ expected: String, _ found: String?) {
        #expect(throws: CalendarParseError(column: column, expected: expected, found: found)) {
            try CalendarSchedule(parsing: input)
        }
    }

    /// Issue 36: `every 5 minutes` was read as an expression ending in the time zone "minutes".
    @Test(arguments: [
        ("every 5 minutes", "for every 5 minutes write *:0/5, or the cron line */5 * * * *"),
        ("Every hour", "for every hour write hourly (*:00:00), or the cron line 0 * * * *"),
        ("every 2 hours", "for every 2 hours write 0/2:00, or the cron line 0 */2 * * *"),
        ("every 30 seconds", "for every 30 seconds write *:*:0/30"),
        ("every day", "for every day write daily (00:00), or a time such as 06:00"),
        ("every full moon", "e.g. *:0/5 is every 5 minutes, hourly, daily, Mon..Fri 06:00, or a cron line such as */5 * * * *"),
    ])
    func plainWordsAreAnsweredWithTheSyntaxMeant(_ input: String, _ hint: String) {
        #expect(throws: CalendarParseError(column: 1, expected: "a calendar expression (systemd's syntax or a cron line), not words",
                                           found: input, hint: hint)) {
            try CalendarSchedule(parsing: input)
        }
    }

    /// Issue 36: a misspelt zone is answered with the zones near it.
    @Test func aMisspeltZoneSuggestsTheNearOnes() {
        #expect(PlainWords.zoneSuggestions(for: "Europe/Berln").first == "Europe/Berlin")
        #expect(PlainWords.zoneSuggestions(for: "europe/paris") == ["Europe/Paris"])
        #expect(PlainWords.zoneSuggestions(for: "Berlin") == ["Europe/Berlin"])
        #expect(PlainWords.zoneSuggestions(for: "Mars/Olympus").isEmpty)
        #expect(throws: CalendarParseError(column: 7, expected: "a time zone (UTC or an IANA name such as Europe/Paris)",
                                           found: "Europe/Berln", hint: "did you mean Europe/Berlin?")) {
            try CalendarSchedule(parsing: "daily Europe/Berln")
        }
        let error = CalendarParseError(column: 7, expected: "a time zone", found: "Europe/Berln", hint: "did you mean Europe/Berlin?")
        #expect(error.description == "column 7: expected a time zone, found \"Europe/Berln\"; did you mean Europe/Berlin?")
    }

    @Test func errorDescription() {
        let error = CalendarParseError(column: 7, expected: "an hour 0-23", found: "25")
        #expect(error.description == "column 7: expected an hour 0-23, found \"25\"")
    }

    @Test func zoneSuffix() throws {
        #expect(try CalendarSchedule(parsing: "daily Asia/Tokyo").timeZone?.identifier == "Asia/Tokyo")
        #expect(try CalendarSchedule(parsing: "daily").timeZone == nil)
        #expect(try CalendarSchedule(parsing: "daily utc").timeZone?.secondsFromGMT() == 0)
    }
}
