import Foundation
import Testing

@Suite struct CalendarCommandTests {
    @Test func jsonPrintsUTCInstantsInTheGivenZone() throws {
        let r = try CLI.run(["calendar", "*-*-* 04:00", "--base", "2026-03-28T12:00:00Z",
                             "--timezone", "Europe/Paris", "--iterations", "3", "--json"])
        #expect(r.status == 0)
        let instants = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String]
        // Paris moves to summer time on 2026-03-29: 04:00 is 03:00Z before, 02:00Z after.
        #expect(instants == ["2026-03-29T02:00:00Z", "2026-03-30T02:00:00Z", "2026-03-31T02:00:00Z"])
    }

    @Test func invalidExpressionPointsAtTheColumn() throws {
        let r = try CLI.run(["calendar", "*-*-* 25:00"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("column 7"))
    }
}
