import Foundation
import Testing
import RefreshdCalendar

/// Compares cron evaluation with croniter 7.0.0, via the committed fixture made by
/// `Fixtures/make-cron-fixtures.py` (no Python at test time).
///
/// Deliberate difference: across a DST change we follow systemd, not croniter. A wall time
/// inside a spring-forward gap is skipped (croniter fires at the first valid time after it)
/// and a repeated fall-back hour fires once (croniter may fire in both copies). For cases whose
/// window contains an offset change, only the instants before the change are compared.
@Suite struct CronFixtureTests {
    struct Fixture: Decodable {
        struct Case: Decodable {
            let expression: String
            let zone: String
            let base: String
            let next: [String]
            let transitions: [String]
        }
        let cases: [Case]
    }

    static func load() throws -> Fixture {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/cron-croniter.json")
        return try JSONDecoder().decode(Fixture.self, from: Data(contentsOf: url))
    }

    static func date(_ text: String) throws -> Date {
        try #require(ISO8601DateFormatter().date(from: text), "bad date \(text)")
    }

    @Test func matchesCroniter() throws {
        let fixture = try Self.load()
        #expect(fixture.cases.count >= 300)
        var full = 0, partial = 0
        for item in fixture.cases {
            let context = "\(item.expression) in \(item.zone) after \(item.base)"
            let schedule = try CalendarSchedule(parsing: item.expression)
            let zone = try #require(TimeZone(identifier: item.zone))
            let base = try Self.date(item.base)
            var expected = try item.next.map(Self.date)
            let ours = schedule.elapses(after: base, in: zone, count: expected.count)
            if let change = try item.transitions.first.map(Self.date) {
                // DST semantics differ on purpose (see the type's doc comment).
                expected = expected.filter { $0 < change.addingTimeInterval(-3600) }
                #expect(Array(ours.prefix(expected.count)) == expected, "before the DST change: \(context)")
                partial += 1
            } else {
                #expect(ours == expected, "\(context)")
                full += 1
            }
        }
        print("croniter comparison: \(full) cases compared fully, \(partial) up to a DST change")
    }

    @Test func cronRecognisedByShape() throws {
        #expect(try CalendarSchedule(parsing: "0 3 * * *").normalized == "*-*-* 03:00:00")
        #expect(try CalendarSchedule(parsing: "@daily").normalized == "*-*-* 00:00:00")
        #expect(try CalendarSchedule(parsing: "*/15 * * * mon-fri").normalized == "Mon..Fri *-*-* *:00/15:00")
        #expect(try CalendarSchedule(parsing: "0 0 1,15 * 1").normalized == "*-*-01,15 00:00:00 | Mon *-*-* 00:00:00")
        #expect(try CalendarSchedule(parsing: "0 12 * jan-mar/2 sun,7").normalized == "Sun *-01..03/2-* 12:00:00")
    }
}
