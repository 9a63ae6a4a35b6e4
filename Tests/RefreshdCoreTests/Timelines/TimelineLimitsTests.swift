import Testing
@testable import RefreshdCore

/// Bad provider output is refused with a reason naming what was wrong and what was expected.
@Suite struct TimelineLimitsTests {
    static let limits = TimelineLimits(maxEntries: 3, maxContentBytes: 16)

    @Test func withinLimitsPasses() {
        let t = timeline([.at(1, 0), .at(2, 0)], .atEnd, content: "{\"a\":1}")
        #expect(Self.limits.check(t) == .success(t))
    }

    @Test func eachBreachNamesTheEntryAndTheLimit() {
        let many = timeline([.at(1, 0), .at(2, 0), .at(3, 0), .at(4, 0)], .atEnd)
        #expect(Self.limits.check(many) == .failure(.tooManyEntries(count: 4, limit: 3)))
        let big = Timeline(entries: [TimelineEntry(date: .at(1, 0), content: "{}"),
                                     TimelineEntry(date: .at(2, 0), content: String(repeating: "x", count: 17))], policy: .never)
        #expect(Self.limits.check(big) == .failure(.entryTooLarge(index: 1, bytes: 17, limit: 16)))
        #expect("\(TimelineError.entryTooLarge(index: 1, bytes: 17, limit: 16))"
            == "entry 1 content is 17 bytes; expected at most 16 (light content such as an asset identifier, not the asset)")
        let empty = timeline([.at(1, 0)], .never, content: "")
        #expect(Self.limits.check(empty) == .failure(.emptyContent(index: 0)))
        let nan = Timeline(entries: [TimelineEntry(date: .at(1, 0), content: "{}", relevance: .nan)], policy: .never)
        #expect(Self.limits.check(nan) == .failure(.relevanceNotFinite(index: 0)))
        let negative = Timeline(entries: [TimelineEntry(date: .at(1, 0), content: "{}", duration: .seconds(-1))], policy: .never)
        #expect(Self.limits.check(negative) == .failure(.negativeDuration(index: 0)))
    }
}
