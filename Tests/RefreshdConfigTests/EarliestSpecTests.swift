import Foundation
import RefreshdCore
import Testing
@testable import RefreshdConfig

@Suite struct EarliestSpecTests {
    let paris = TestSupport.zone("Europe/Paris")

    @Test func relativeIsAddedToTheLoadInstant() throws {
        guard case .success(let spec) = EarliestSpec.parse("+1h30m", zone: paris) else { Issue.record("should parse"); return }
        #expect(spec == .relative(.seconds(5400)))
        #expect(spec.text == "+1h30m")
        #expect(spec.instant(loadedAt: Instant(milliseconds: 1000)) == Instant(milliseconds: 5_401_000))
    }

    @Test(arguments: [
        ("2026-11-22T04:00:00Z", "2026-11-22T04:00:00.000Z"),
        ("2026-11-22T04:00:00+01:00", "2026-11-22T03:00:00.000Z"),
        ("2026-11-22T04:00:00-02:30", "2026-11-22T06:30:00.000Z"),
        ("2026-11-22T04:00:00.25Z", "2026-11-22T04:00:00.250Z"),
        ("2026-11-22T04:00:00.123456Z", "2026-11-22T04:00:00.123Z"),
        ("2024-02-29T23:59:59Z", "2024-02-29T23:59:59.000Z"),
        ("1970-01-01T00:00:00Z", "1970-01-01T00:00:00.000Z"),
    ])
    func absoluteDatesWithOffsets(text: String, utc: String) {
        guard case .success(let spec) = EarliestSpec.parse(text, zone: paris) else { Issue.record("\(text) should parse"); return }
        #expect(spec.text == utc)
        #expect(spec.instant(loadedAt: Instant(milliseconds: 0)).iso8601 == utc)
    }

    @Test(arguments: [
        ("2026-11-22T04:00:00", "the offset is missing: add Z for UTC or ±HH:MM"),
        ("2026-13-01T00:00:00Z", "there is no such date or time"),
        ("2025-02-29T00:00:00Z", "there is no such date or time"),
        ("2026-11-22T25:00:00Z", "there is no such date or time"),
        ("2026-11-22T04:00Z", "the time must be HH:MM:SS"),
        ("2026-11-22T04:00:00+0100", "the offset must be Z or ±HH:MM"),
        ("2026-11-22T04:00:00Zx", "unexpected text after the offset"),
        ("2026-11-22T04:00:00.Z", "expected digits after the decimal point"),
        ("2026-11-22t04:00:00", "the offset is missing: add Z for UTC or ±HH:MM"),
    ])
    func rejectsBadDates(text: String, detail: String) {
        guard case .failure(let problem) = EarliestSpec.parse(text, zone: paris) else { Issue.record("\(text) should fail"); return }
        #expect(problem.description.hasSuffix("found \"\(text)\" (\(detail))"))
        #expect(problem.description.hasPrefix("expected +DURATION (like +10s) or an ISO 8601 date with offset"))
    }

    @Test func badRelativeDurationKeepsTheDetail() {
        guard case .failure(let problem) = EarliestSpec.parse("+10", zone: paris) else { Issue.record("should fail"); return }
        #expect(problem.description.contains("found \"+10\" (the unit is missing after 10"))
    }

    // MARK: Calendar expressions

    /// `+` is a duration, `YYYY-MM-DDT` is ISO 8601, a date-time with offset is an instant,
    /// anything else a calendar expression (in the zone given, unless it names its own).
    @Test(arguments: [
        ("+10s", "+10s"),
        ("2026-11-22 04:00:00+01:00", "2026-11-22T03:00:00.000Z"),
        ("2026-11-22 04:00:00Z", "2026-11-22T04:00:00.000Z"),
        ("2026-11-22", "2026-11-22 [Europe/Paris]"),
        ("2026-11-22 04:00:00", "2026-11-22 04:00:00 [Europe/Paris]"),
        ("Mon..Fri 06:00", "Mon..Fri 06:00 [Europe/Paris]"),
        ("daily", "daily [Europe/Paris]"),
        ("0 4 * * *", "0 4 * * * [Europe/Paris]"),
        ("*-*-* 04:00 America/New_York", "*-*-* 04:00 America/New_York [America/New_York]"),
    ])
    func disambiguation(text: String, canonical: String) throws {
        let spec = try EarliestSpec.parse(text, zone: paris).get()
        #expect(spec.text == canonical)
        let isCalendar = spec.schedule != nil
        #expect(isCalendar == canonical.hasSuffix("]"))
    }

    @Test func calendarIsTheNextElapseAfterTheLoad() throws {
        let spec = try EarliestSpec.parse("*-*-* 04:00", zone: paris).get()
        // Loaded Saturday 2026-11-21 12:00Z: next 04:00 in Paris (CET, +01:00) is Sunday 03:00Z.
        #expect(spec.instant(loadedAt: TestSupport.now) == TestSupport.instant("2026-11-22T03:00:00Z"))
        // Strictly after: loaded exactly at a slot gives the next one.
        #expect(spec.instant(loadedAt: TestSupport.instant("2026-11-22T03:00:00Z"))
            == TestSupport.instant("2026-11-23T03:00:00Z"))
    }

    @Test func calendarWithoutAFutureElapseFallsBackToTheLoad() throws {
        let spec = try EarliestSpec.parse("2020-01-01", zone: paris).get()
        #expect(spec.instant(loadedAt: TestSupport.now) == TestSupport.now)
    }

    @Test func calendarErrorsCarryTheirColumn() {
        guard case .failure(let hour) = EarliestSpec.parse("Mon..Fri 25:00", zone: paris) else {
            Issue.record("should fail"); return
        }
        #expect(hour.description == "expected an hour 0-23, found \"25\"")
        #expect(hour.column == 10)
        guard case .failure(let date) = EarliestSpec.parse("22.11.2026", zone: paris) else { Issue.record("should fail"); return }
        #expect(date.column == 3)
    }

    @Test func unrecognisableTextListsAllThreeForms() {
        guard case .failure(let problem) = EarliestSpec.parse("tomorrow", zone: paris) else { Issue.record("should fail"); return }
        #expect(problem.column == 1)
        #expect(problem.description == "expected +DURATION (like +10s), an ISO 8601 date with offset (like 2026-11-22T04:00:00Z) "
            + "or a calendar expression (like Mon..Fri 06:00), found \"tomorrow\" (as a calendar expression: expected a date or time)")
    }
}
