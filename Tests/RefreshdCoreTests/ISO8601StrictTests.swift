import RefreshdCore
import Testing

/// Issue 20: dates that come in are parsed strictly, by one parser, with a reason naming the
/// field when refused.
@Suite struct ISO8601StrictTests {
    /// 2026-11-22T06:00:00Z.
    static let six = ISO8601.days(year: 2026, month: 11, day: 22) * 86_400_000 + 6 * 3_600_000

    @Test(arguments: [
        ("2026-11-22T06:00:00Z", 0),
        ("2026-11-22t06:00:00z", 0),
        ("2026-11-22T06:00Z", 0),
        ("2026-11-22T07:00:00+01:00", 0),
        ("2026-11-22T07:00:00+0100", 0),
        ("2026-11-22T07:00:00+01", 0),
        ("2026-11-22T05:30:00-00:30", 0),
        ("2026-11-22T06:00:00-00:00", 0),
        ("2026-11-22T06:00:00.250Z", 250),
        ("2026-11-22T06:00:00,5Z", 500),
        ("2026-11-22T06:00:00.123456789Z", 123),
        ("2026-11-21T23:00:00-07:00", 0),
    ])
    func everyZoneISO8601AllowsIsAccepted(_ text: String, _ extra: Int64) throws {
        let instant = try ISO8601.parseStrict(text).get()
        #expect(instant.milliseconds == Self.six + extra)
        #expect(ISO8601.parse(instant.iso8601) == instant, "formats back and parses again")
    }

    @Test(arguments: [
        ("2026-02-30T00:00:00Z", "day 30: 2026-02 has 28 days"),
        ("2024-02-30T00:00:00Z", "day 30: 2024-02 has 29 days"),
        ("2026-04-31T00:00:00Z", "day 31: 2026-04 has 30 days"),
        ("2026-13-01T00:00:00Z", "month 13: expected 01 to 12"),
        ("2026-00-01T00:00:00Z", "month 00: expected 01 to 12"),
        ("2026-01-00T00:00:00Z", "day 00: 2026-01 has 31 days"),
        ("0000-01-01T00:00:00Z", "year 0000: expected 0001 to 9999"),
        ("-5952-01-01T00:00:00Z", "expected an ISO 8601 date with a zone"),
        ("+12026-01-01T00:00:00Z", "expected an ISO 8601 date with a zone"),
        ("2026-01-01T24:00:00Z", "hour 24: expected 00 to 23"),
        ("2026-01-01T23:60:00Z", "minute 60: expected 00 to 59"),
        ("2026-12-31T23:59:60Z", "second 60: expected 00 to 59"),
        ("2026-01-01T00:00:00", "zone: expected Z or an offset"),
        ("2026-01-01T00:00:00+24:00", "zone: offset +24:00: expected hours 00 to 23"),
        ("2026-01-01T00:00:00+01:60", "zone: offset +01:60"),
        ("2026-01-01T00:00:00+1", "zone: expected an offset like +01:00"),
        ("2026-01-01T00:00:00 Z", "zone: expected Z or an offset"),
        ("2026-01-01T00:00:00Zjunk", "expected nothing after the zone"),
        ("2026-01-01T00:00:00.Z", "expected an ISO 8601 date"),
        ("2026-01-01 00:00:00Z", "expected an ISO 8601 date"),
        ("0001-01-01T00:00:00+01:00", "outside years 0001 to 9999 in UTC"),
        ("9999-12-31T23:59:59-01:00", "outside years 0001 to 9999 in UTC"),
        ("", "expected an ISO 8601 date"),
        ("2026-01-01T00:00:00\nZ", #"zone: expected Z or an offset like +01:00, +0100 or +01, found "\nZ""#),
    ])
    func impossibleDatesAreRefusedNamingTheField(_ text: String, _ reason: String) {
        switch ISO8601.parseStrict(text) {
        case let .success(instant): Issue.record("accepted \(text) as \(instant)")
        case let .failure(refusal): #expect(refusal.description.contains(reason), "\(refusal)")
        }
        #expect(ISO8601.parse(text) == nil)
    }

    @Test func theEdgesOfTheRangeRoundTrip() throws {
        for text in ["0001-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z", "2000-02-29T12:00:00.000Z"] {
            let instant = try ISO8601.parseStrict(text).get()
            #expect(instant.iso8601 == text)
        }
    }
}
