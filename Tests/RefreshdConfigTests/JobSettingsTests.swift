import RefreshdCore
import Testing
@testable import RefreshdConfig

/// Each setting's bad values, rejected at the exact line and column of the value.
@Suite struct JobSettingsTests {
    @Test func badDurationPointsAtTheValue() throws {
        let error = try #require(TestSupport.onlyError("""
            identifier: com.example.refresh
            command: [true]
            kind: app-refresh
            allowance:  thirty
            """))
        #expect(error.description
            == "Jobs/test.yaml:4:13: allowance: expected a duration like 30s, 10m or 1h30m, found \"thirty\"")
    }

    @Test func zeroAllowanceAndBareNumber() {
        let errors = TestSupport.errors("""
            identifier: com.example.refresh
            command: [true]
            allowance: 0s
            grace: 5
            """)
        #expect(errors.map(\.position) == ["3:12", "4:8"])
        #expect(errors[0].message == "allowance: expected a duration greater than zero, found \"0s\"")
        #expect(errors[1].message.contains("the unit is missing after 5"))
    }

    @Test func badEnumListsTheAllowedValues() throws {
        let error = try #require(TestSupport.onlyError("""
            identifier: com.example.refresh
            kind: background
            command: [true]
            """))
        #expect(error.description
            == "Jobs/test.yaml:2:7: kind: expected one of app-refresh, processing, timeline, found \"background\"")
    }

    @Test func wrongTypes() {
        let errors = TestSupport.errors("""
            identifier: [com, example]
            command: [true, {a: b}]
            namespace: {x: 1}
            earliest: [now]
            environment: [A]
            """)
        #expect(errors.map(\.position) == ["1:13", "2:17", "3:12", "4:11", "5:14"])
        #expect(errors[0].message.hasPrefix("identifier: expected a reverse-DNS name"))
        #expect(errors[0].message.hasSuffix("found a list"))
        #expect(errors[1].message == "command: expected each element to be a string, found a mapping")
        #expect(errors[2].message.hasSuffix("found a mapping"))
        #expect(errors[3].message == "earliest: expected +DURATION, an ISO 8601 date or a calendar expression, found a list")
        #expect(errors[4].message == "environment: expected a mapping like {NAME: value}, found a list")
    }

    @Test func requiresOnAppRefreshIsRejected() throws {
        let error = try #require(TestSupport.onlyError("""
            identifier: com.example.refresh
            command: [true]
            requires: [network]
            """))
        #expect(error.position == "3:1")
        #expect(error.message.hasPrefix("requires: only processing jobs can require network"))
    }

    @Test func badAndDuplicateRequirements() {
        let errors = TestSupport.errors("""
            identifier: com.example.refresh
            kind: processing
            command: [true]
            requires: [network, wifi, network]
            """)
        #expect(errors.map(\.position) == ["4:21", "4:27"])
        #expect(errors[0].message == "requires: expected one of external-power, network, found \"wifi\"")
        #expect(errors[1].message == "requires: \"network\" is listed twice; expected each requirement at most once")
    }

    @Test func emptyCommandList() throws {
        let error = try #require(TestSupport.onlyError("""
            identifier: com.example.refresh
            command: []
            """))
        #expect(error.description == "Jobs/test.yaml:2:10: command: expected a program and its arguments, found an empty list")
    }

    @Test func badIdentifiers() {
        for (text, column) in [("refresh", 13), ("com..example", 13), ("com.example.wall paper", 13), ("\"com.ex!\"", 13)] {
            let errors = TestSupport.errors("identifier: \(text)\ncommand: [true]\n")
            #expect(errors.map(\.position) == ["1:\(column)"], "\(text)")
            #expect(errors.first?.message.hasPrefix("identifier: expected a reverse-DNS name") == true)
        }
    }

    @Test func badIsoDate() throws {
        let error = try #require(TestSupport.onlyError("""
            identifier: com.example.refresh
            command: [true]
            earliest: 2026-11-22T04:00:00
            """))
        #expect(error.position == "3:11")
        #expect(error.message.hasSuffix("found \"2026-11-22T04:00:00\" (the offset is missing: add Z for UTC or ±HH:MM)"))
    }
}

// MARK: Calendar schedules, missed slots, jitter and accuracy

extension JobSettingsTests {
    private static let head = "identifier: com.example.refresh\ncommand: [true]\n"

    /// Issue 36: a misspelt zone, or a schedule in words, is answered with what was meant.
    @Test func aMisspeltZoneAndAScheduleInWordsSayWhatWasMeant() throws {
        let zone = try #require(TestSupport.onlyError(Self.head + "resubmit: {calendar: daily}\ntimezone: Europe/Berln\n"))
        #expect(zone.message == "timezone: expected an IANA time zone like Europe/Paris, found \"Europe/Berln\" (did you mean Europe/Berlin?)")
        let words = try #require(TestSupport.onlyError(Self.head + "resubmit: {calendar: every 5 minutes}\n"))
        #expect(words.message.hasSuffix("found \"every 5 minutes\"; for every 5 minutes write *:0/5, or the cron line */5 * * * *"),
                "\(words.message)")
    }

    @Test func fullCalendarJob() throws {
        let config = try #require(TestSupport.config(Self.head + """
            resubmit: {calendar: "*-*-* 04:00", timezone: Europe/Paris}
            earliest: "Mon..Fri 06:00"
            timezone: America/New_York
            missed: all
            catch-up: 2d
            jitter: 10m
            fixed-jitter: true
            accuracy: 1m
            """))
        let d = config.definition
        #expect(d.schedule?.text == "*-*-* 04:00 [Europe/Paris]")
        #expect(d.schedule?.next(after: TestSupport.now) == TestSupport.instant("2026-11-22T03:00:00Z"))
        #expect(d.missed == .all)
        #expect(d.catchUp == .seconds(2 * 86_400))
        #expect(d.jitter == .seconds(600))
        #expect(d.fixedJitter)
        #expect(d.accuracy == .seconds(60))
        #expect(config.earliest.text == "Mon..Fri 06:00 [America/New_York]")
        // Loaded Saturday: Monday 06:00 EST.
        #expect(config.earliest.instant(loadedAt: TestSupport.now) == TestSupport.instant("2026-11-23T11:00:00Z"))
    }

    @Test func defaultsOfTheNewSettings() throws {
        let config = try #require(TestSupport.config(Self.head))
        let d = config.definition
        #expect(d.missed == .once && d.catchUp == .seconds(86_400) && d.jitter == .zero && !d.fixedJitter && d.accuracy == .zero)
    }

    @Test func zonePrecedence() throws {
        // No zone anywhere: the machine's (Asia/Tokyo in the tests, +09:00; 21:00 there at load).
        let machine = try #require(TestSupport.config(Self.head + "resubmit: {calendar: \"*-*-* 04:00\"}\n"))
        #expect(machine.definition.schedule?.text == "*-*-* 04:00 [Asia/Tokyo]")
        #expect(machine.definition.schedule?.next(after: TestSupport.now) == TestSupport.instant("2026-11-21T19:00:00Z"))
        // The job's timezone: applies to resubmit and earliest.
        let job = try #require(TestSupport.config(Self.head + """
            timezone: America/New_York
            resubmit: {calendar: "*-*-* 04:00"}
            earliest: "*-*-* 05:00"
            """))
        #expect(job.definition.schedule?.next(after: TestSupport.now) == TestSupport.instant("2026-11-22T09:00:00Z"))
        #expect(job.earliest.instant(loadedAt: TestSupport.now) == TestSupport.instant("2026-11-22T10:00:00Z"))
        // resubmit.timezone overrides it for resubmit only.
        let both = try #require(TestSupport.config(Self.head + """
            timezone: America/New_York
            resubmit: {calendar: "*-*-* 04:00", timezone: Europe/Paris}
            earliest: "*-*-* 05:00"
            """))
        #expect(both.definition.schedule?.text == "*-*-* 04:00 [Europe/Paris]")
        #expect(both.earliest.text == "*-*-* 05:00 [America/New_York]")
    }

    @Test func expressionZoneSuffixWinsOverTimezone() throws {
        let config = try #require(TestSupport.config(Self.head + """
            timezone: Europe/Paris
            resubmit: {calendar: "*-*-* 04:00 America/New_York", timezone: Europe/Paris}
            earliest: "*-*-* 04:00 UTC"
            """))
        #expect(config.definition.schedule?.text == "*-*-* 04:00 America/New_York [America/New_York]")
        #expect(config.definition.schedule?.next(after: TestSupport.now) == TestSupport.instant("2026-11-22T09:00:00Z"))
        #expect(config.earliest.instant(loadedAt: TestSupport.now) == TestSupport.instant("2026-11-22T04:00:00Z"))
        #expect(!config.earliest.text.contains("Paris"))
    }

    // MARK: Calendar errors at the exact column in the file

    @Test func calendarColumnInPlainScalars() {
        let errors = TestSupport.errors(Self.head + """
            earliest: Mon..Fri 25:00
            resubmit:
              calendar: Mon 06:61
            """)
        #expect(errors.map(\.description) == [
            "Jobs/test.yaml:3:20: earliest: expected an hour 0-23, found \"25\"",
            "Jobs/test.yaml:5:20: resubmit.calendar: expected a minute 0-59, found \"61\"",
        ])
    }

    @Test func calendarColumnInQuotedScalars() {
        let errors = TestSupport.errors(Self.head + """
            earliest: 'Mon..Fri 25:00'
            resubmit: {calendar: "*-*-* 25:00", timezone: Europe/Paris}
            """)
        #expect(errors.map(\.description) == [
            "Jobs/test.yaml:3:21: earliest: expected an hour 0-23, found \"25\"",
            "Jobs/test.yaml:4:29: resubmit.calendar: expected an hour 0-23, found \"25\"",
        ])
    }

    @Test func calendarColumnAtTheEndAndInTheZoneSuffix() {
        let errors = TestSupport.errors(Self.head + """
            earliest: "*-*-* 04:"
            resubmit: {calendar: '*-*-* 04:00 Mars/Olympus'}
            """)
        #expect(errors.map(\.position) == ["3:21", "4:35"])
        #expect(errors[0].message == "earliest: expected a minute 0-59, found end of expression")
        #expect(errors[1].message.hasPrefix("resubmit.calendar: expected a time zone"))
        #expect(errors[1].message.hasSuffix("found \"Mars/Olympus\""))
    }

    @Test func unrecognisableEarliest() throws {
        let error = try #require(TestSupport.onlyError(Self.head + "earliest: tomorrow\n"))
        #expect(error.position == "3:11")
        #expect(error.message.hasPrefix("earliest: expected +DURATION (like +10s), an ISO 8601 date with offset"))
    }

    @Test func expressionsThatNeverElapseAgain() {
        let errors = TestSupport.errors(Self.head + """
            earliest: "2020-01-01"
            resubmit: {calendar: "2026-11-21 11:00"}
            """)
        #expect(errors.map(\.position) == ["3:11", "4:22"])
        #expect(errors[0].message == "earliest: \"2020-01-01\" never elapses after 2026-11-21T12:00:00.000Z "
            + "(in 2020-01-01 [Asia/Tokyo]); expected a calendar expression with a future elapse")
        #expect(errors[1].message.hasPrefix("resubmit.calendar: \"2026-11-21 11:00\" never elapses after"))
    }

    @Test func oneTimeCalendarStillAheadIsAccepted() throws {
        let config = try #require(TestSupport.config(Self.head + "earliest: 2026-11-22\ntimezone: UTC\n"))
        #expect(config.earliest.instant(loadedAt: TestSupport.now) == TestSupport.instant("2026-11-22T00:00:00Z"))
    }

    // MARK: Time zones

    @Test func unknownZones() {
        let errors = TestSupport.errors(Self.head + """
            timezone: Mars/Olympus
            resubmit: {calendar: daily, timezone: europe/paris}
            """)
        #expect(errors.map(\.description) == [
            "Jobs/test.yaml:3:11: timezone: expected an IANA time zone like Europe/Paris, found \"Mars/Olympus\"",
            "Jobs/test.yaml:4:39: resubmit.timezone: expected an IANA time zone like Europe/Paris, found \"europe/paris\" (did you mean Europe/Paris?)",
        ])
    }

    @Test func zoneMustBeAString() throws {
        let error = try #require(TestSupport.onlyError(Self.head + "timezone: [UTC]\n"))
        #expect(error.description == "Jobs/test.yaml:3:11: timezone: expected an IANA time zone like Europe/Paris, found a list")
    }

    // MARK: resubmit

    @Test func resubmitWithBothAfterAndCalendar() throws {
        let error = try #require(TestSupport.onlyError(Self.head + """
            resubmit:
              calendar: daily
              after: 6h
            """))
        #expect(error.description == "Jobs/test.yaml:5:3: resubmit: expected either after: or calendar:, found both")
    }

    @Test func resubmitWithNeither() throws {
        let error = try #require(TestSupport.onlyError(Self.head + "resubmit: {timezone: UTC}\n"))
        #expect(error.position == "3:11")
        #expect(error.message.hasPrefix("resubmit: missing required key \"after\" or \"calendar\""))
    }

    @Test func resubmitTimezoneNeedsCalendar() throws {
        let error = try #require(TestSupport.onlyError(Self.head + "resubmit: {after: 6h, timezone: UTC}\n"))
        #expect(error.position == "3:23")
        #expect(error.message.hasPrefix("resubmit.timezone: applies only to resubmit.calendar"))
    }

    @Test func misspeltCalendarKeyIsNotAlsoReportedMissing() throws {
        let error = try #require(TestSupport.onlyError(Self.head + "resubmit: {calender: daily}\n"))
        #expect(error.message == "unknown key \"calender\" in resubmit (did you mean \"calendar\"?)")
    }

    @Test func resubmitCalendarMustBeAString() throws {
        let error = try #require(TestSupport.onlyError(Self.head + "resubmit: {calendar: [daily]}\n"))
        #expect(error.description
            == "Jobs/test.yaml:3:22: resubmit.calendar: expected a calendar expression like \"*-*-* 04:00\", found a list")
    }

    // MARK: missed, catch-up, jitter, fixed-jitter, accuracy

    @Test func missedPolicies() throws {
        for policy in MissedPolicy.allCases {
            let config = try #require(TestSupport.config(Self.head + "missed: \(policy.rawValue)\n"))
            #expect(config.definition.missed == policy)
        }
        let error = try #require(TestSupport.onlyError(Self.head + "missed: sometimes\n"))
        #expect(error.description == "Jobs/test.yaml:3:9: missed: expected one of once, skip, all, found \"sometimes\"")
    }

    @Test func catchUpNeedsMissedAll() {
        let defaulted = TestSupport.errors(Self.head + "catch-up: 1d\n")
        #expect(defaulted.map(\.description) == ["Jobs/test.yaml:3:1: catch-up: applies only to missed: all, "
            + "but this job's missed policy is once (the default); expected missed: all, or no catch-up:"])
        let skip = TestSupport.errors(Self.head + "missed: skip\ncatch-up: 1d\n")
        #expect(skip.map(\.message) == ["catch-up: applies only to missed: all, "
            + "but this job's missed policy is skip; expected missed: all, or no catch-up:"])
        // A bad missed: is reported once, not again through catch-up.
        #expect(TestSupport.errors(Self.head + "missed: every\ncatch-up: 1d\n").map(\.position) == ["3:9"])
    }

    @Test func catchUpMustBePositive() {
        let errors = TestSupport.errors(Self.head + "missed: all\ncatch-up: 0s\n")
        #expect(errors.map(\.description) == ["Jobs/test.yaml:4:11: catch-up: expected a duration greater than zero, found \"0s\""])
    }

    @Test func jitterAndAccuracyMayBeZeroButMustBeDurations() throws {
        let zero = try #require(TestSupport.config(Self.head + "jitter: 0s\naccuracy: 0ms\n"))
        #expect(zero.definition.jitter == .zero && zero.definition.accuracy == .zero)
        let errors = TestSupport.errors(Self.head + "jitter: -1m\naccuracy: 1 minute\n")
        #expect(errors.map(\.position) == ["3:9", "4:11"])
        #expect(errors[0].message == "jitter: expected a duration like 30s, 10m or 1h30m, found \"-1m\" (durations cannot be negative)")
        #expect(errors[1].message.hasPrefix("accuracy: expected a duration like 30s, 10m or 1h30m, found \"1 minute\""))
    }

    @Test func fixedJitterIsABoolean() throws {
        #expect(TestSupport.config(Self.head + "fixed-jitter: false\n")?.definition.fixedJitter == false)
        #expect(TestSupport.config(Self.head + "fixed-jitter: True\n")?.definition.fixedJitter == true)
        let error = try #require(TestSupport.onlyError(Self.head + "fixed-jitter: yes\n"))
        #expect(error.description == "Jobs/test.yaml:3:15: fixed-jitter: expected true or false, found \"yes\"")
    }

    @Test func everyErrorOfTheNewSettingsAtOnce() {
        let errors = TestSupport.errors(Self.head + """
            timezone: Nowhere
            missed: never
            jitter: soon
            fixed-jitter: 1
            accuracy: -1s
            resubmit: {calendar: "*-*-* 99:00"}
            """)
        #expect(errors.map(\.position) == ["3:11", "4:9", "5:9", "6:15", "7:11", "8:29"])
    }
}
