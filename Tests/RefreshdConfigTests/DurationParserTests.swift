import Testing
@testable import RefreshdConfig

@Suite struct DurationParserTests {
    @Test(arguments: [
        ("500ms", Int64(500)), ("30s", 30_000), ("10m", 600_000), ("6h", 21_600_000), ("1d", 86_400_000),
        ("1h30m", 5_400_000), ("1d12h", 129_600_000), ("2m30s500ms", 150_500), ("0s", 0), ("90m", 5_400_000),
        ("1d1h1m1s1ms", 90_061_001),
    ])
    func parsesValidDurations(text: String, milliseconds: Int64) throws {
        let duration = try DurationParser.parse(text).get()
        #expect(duration == .milliseconds(milliseconds))
    }

    @Test(arguments: [
        ("thirty", nil),
        ("", "it is empty"),
        ("30", "the unit is missing after 30: write 30s, 30m, 30h, ..."),
        ("1h30", "the unit is missing after 30: write 30s, 30m, 30h, ..."),
        ("-5s", "durations cannot be negative"),
        ("1 h", "spaces are not allowed"),
        ("1.5h", "only whole numbers are allowed"),
        ("5w", "unknown unit \"w\" (units are d, h, m, s, ms)"),
        ("1m1h", "units must go from largest to smallest (d, h, m, s, ms); h comes after m"),
        ("1s1s", "the unit s appears twice"),
        ("h", nil),
        ("99999999999999999999s", "longer than the maximum, 36500d (100 years)"),
        ("999999999999999d", "longer than the maximum, 36500d (100 years)"),
    ] as [(String, String?)])
    func rejectsInvalidDurations(text: String, detail: String?) {
        guard case .failure(let error) = DurationParser.parse(text) else {
            Issue.record("\(text) should not parse")
            return
        }
        #expect(error.text == text)
        #expect(error.detail == detail)
        #expect(error.description.hasPrefix("expected a duration like 30s, 10m or 1h30m, found \"\(text)\""))
    }

    @Test func throwingVariantMatchesResult() throws {
        #expect(try DurationParser.duration("1h") == .seconds(3600))
        #expect(throws: DurationParseError.self) { try DurationParser.duration("1x") }
    }

    @Test(arguments: [
        (Int64(5_400_000), "1h30m"), (0, "0s"), (500, "500ms"), (129_600_000, "1d12h"),
        (150_500, "2m30s500ms"), (30_000, "30s"), (-30_000, "-30s"),
    ])
    func formatsCanonically(milliseconds: Int64, text: String) {
        #expect(DurationParser.format(.milliseconds(milliseconds)) == text)
    }

    @Test(arguments: ["90m", "1d24h", "3600s", "2m30s500ms", "1000ms"])
    func formatThenParseRoundTrips(text: String) throws {
        let duration = try DurationParser.parse(text).get()
        #expect(try DurationParser.parse(DurationParser.format(duration)).get() == duration)
    }
}
