import RefreshdCore
import Testing
@testable import RefreshdConfig

@Suite struct EarliestSpecTests {
    @Test func relativeIsAddedToTheLoadInstant() throws {
        guard case .success(let spec) = EarliestSpec.parse("+1h30m") else { Issue.record("should parse"); return }
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
        guard case .success(let spec) = EarliestSpec.parse(text) else { Issue.record("\(text) should parse"); return }
        #expect(spec.text == utc)
        #expect(spec.instant(loadedAt: Instant(milliseconds: 0)).iso8601 == utc)
    }

    @Test(arguments: [
        ("2026-11-22T04:00:00", "the offset is missing: add Z for UTC or ±HH:MM"),
        ("2026-11-22", "a time and an offset are required"),
        ("2026-13-01T00:00:00Z", "there is no such date or time"),
        ("2025-02-29T00:00:00Z", "there is no such date or time"),
        ("2026-11-22T25:00:00Z", "there is no such date or time"),
        ("2026-11-22T04:00Z", "the time must be HH:MM:SS"),
        ("22.11.2026", "the date must be YYYY-MM-DD"),
        ("2026-11-22T04:00:00+0100", "the offset must be Z or ±HH:MM"),
        ("2026-11-22T04:00:00Zx", "unexpected text after the offset"),
        ("2026-11-22T04:00:00.Z", "expected digits after the decimal point"),
        ("tomorrow", "the date must be YYYY-MM-DD"),
    ])
    func rejectsBadDates(text: String, detail: String) {
        guard case .failure(let problem) = EarliestSpec.parse(text) else { Issue.record("\(text) should fail"); return }
        #expect(problem.description.hasSuffix("found \"\(text)\" (\(detail))"))
        #expect(problem.description.hasPrefix("expected +DURATION (like +10s) or an ISO 8601 date with offset"))
    }

    @Test func badRelativeDurationKeepsTheDetail() {
        guard case .failure(let problem) = EarliestSpec.parse("+10") else { Issue.record("should fail"); return }
        #expect(problem.description.contains("found \"+10\" (the unit is missing after 10"))
    }
}
