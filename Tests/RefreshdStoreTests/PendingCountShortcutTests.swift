import Testing
@testable import RefreshdCore
@testable import RefreshdStore
import RefreshdTestSupport

/// Issue 33: a template's pending instances are counted as the rows of its range (on the
/// primary key's index, no function a row), corrected by the few rows `pending_not_own` holds
/// (a provider's `T[K]#family`, any other that is no instance's own): the same answers as the
/// rule tested on every row, which took 244 ms at a million instances.
@Suite struct PendingCountShortcutTests {
    /// The rule as it was counted before, two patterns a row: what the shortcut must answer.
    static let rows = "SELECT identifier AS ord FROM pending WHERE identifier > ?1 AND identifier < ?2"
    static let rule = """
        SELECT count(*) FILTER (WHERE p.ord GLOB '*]')
        + count(DISTINCT CASE WHEN p.ord GLOB '*]#*' AND NOT EXISTS (SELECT 1 FROM (\(rows)) AS o WHERE o.ord = substr(p.ord, 1, instr(p.ord, ']#')))
                         THEN substr(p.ord, 1, instr(p.ord, ']#')) END)
        FROM (\(rows)) AS p
        """

    static func saved(_ identifiers: [String]) -> [StateChange] {
        identifiers.enumerated().map { i, id in
            .savePending(PendingRequest(identifier: id, namespace: "ns", kind: .processing, earliest: SearchFixture.start,
                                        submitted: SearchFixture.start, sequence: UInt64(i + 1)))
        }
    }

    static func bounds(_ template: String) -> [SQLValue] {
        let range = InstanceSearch(template: template)
        return [.text(range.lowerBound), .text(range.upperBound)]
    }

    static func byTheRule(_ store: StateStore, _ template: String) throws -> Int {
        try store.connection.query(rule, bounds(template), context: "test") { $0.int(0) }.first ?? -1
    }

    /// The shortcut's case: only instances' own rows in the range (and others around it). The
    /// correction reads `pending_not_own`, which holds none of them: no row of the range is
    /// scanned or tested.
    @Test func onlyOwnRowsAreCountedOnTheIndexAlone() throws {
        try withStore { store, _ in
            try store.apply(Self.saved(["feed[a]", "feed[b]", "feed[c]", "feed", "feedx", "feed.other", "other[a]#small", "odd[x"]))
            #expect(try store.instanceCounts(of: "feed").pending == 3)
            #expect(try Self.byTheRule(store, "feed") == 3)
            let held = try store.connection.query("SELECT identifier FROM pending INDEXED BY pending_not_own WHERE \(Schema.pendingNotOwn)",
                                                  context: "test") { $0.text(0) }
            #expect(held.sorted() == ["odd[x", "other[a]#small"])
            let plan = try store.connection.query("EXPLAIN QUERY PLAN " + StateStore.pendingCountQuery, Self.bounds("feed"),
                                                  context: "test") { $0.text(3) }
            #expect(plan.contains { $0.contains("pending_not_own") }, "\(plan)")
            #expect(!plan.contains { $0.hasPrefix("SCAN pending") }, "\(plan)")
        }
    }

    /// The correction's case: providers with and without their instance's own row, rows that
    /// end in `]` after a `]#`, rows without a `]` at the end, a template whose name holds `]#`
    /// (its providers' instance is cut inside the name, outside the range), and random rows of
    /// brackets and hashes: the same count as the rule, for every template.
    @Test func providersAndOddRowsCountAsTheRuleSays() throws {
        var rng = SplitMix64(seed: 33)
        let alphabet = ["a", "b", "]", "#", "[", "]#", "x"]
        let random = (0..<400).map { _ in
            rng.pick(["t[", "t[", "q]#r[", "t"]) + (0..<rng.int(0...6)).map { _ in rng.pick(alphabet) }.joined()
        }
        let fixed = ["t[a]", "t[a]#small", "t[a]#large", "t[b]#small", "t[c]#x]", "t[d", "t[e]x", "t[f]]", "t[]", "t[]#s",
                     "q]", "q]#r[k]#small", "q]#r[k]"]
        try withStore { store, _ in
            try store.apply(Self.saved(Array(Set(fixed + random)).sorted()))
            for template in ["t", "q]#r", "t[a", "none"] {
                let expected = try Self.byTheRule(store, template)
                #expect(try store.instanceCounts(of: template).pending == expected, "\(template)")
            }
            // The fixed rows alone: a, b (its provider's), c (its provider's) and c's own odd
            // row `t[c]#x]`, `t[f]]`, `t[]` ... as the rule counts them.
            #expect(try Self.byTheRule(store, "t") > 0)
        }
        try withStore { store, _ in
            try store.apply(Self.saved(fixed))
            // t: a (own), b and c (by their providers), t[c]#x], t[f]], t[] (own rows ending in `]`);
            // q]#r: its provider's instance `q]` is outside the range (not counted as present).
            #expect(try store.instanceCounts(of: "t").pending == 6)
            #expect(try store.instanceCounts(of: "q]#r").pending == 2)
            #expect(try Self.byTheRule(store, "t") == 6 && Self.byTheRule(store, "q]#r") == 2)
        }
    }

    /// A version 8 file gains `pending_not_own` when opened; one opened read-only before that
    /// counts the same without it (a scan).
    @Test func aVersion8FileGainsTheIndex() throws {
        try withTemporaryDirectory { temp in
            let old = try StateStore.open(directory: temp)
            try old.apply(Self.saved(["t[a]", "t[a]#small", "t[b]#small", "t[c"]))
            try old.connection.execute(script: "DROP INDEX pending_not_own; PRAGMA user_version = 8", context: "test")
            old.close()
            let reader = try StateStore.open(directory: temp, readOnly: true)
            #expect(try reader.instanceCounts(of: "t").pending == 2)
            reader.close()
            let store = try StateStore.open(directory: temp)
            defer { store.close() }
            #expect(try Schema.userVersion(store.connection) == Schema.version)
            let indexes = try store.connection.query("SELECT name FROM sqlite_master WHERE type = 'index'", context: "test") { $0.text(0) }
            #expect(indexes.contains("pending_not_own"))
            #expect(try store.instanceCounts(of: "t").pending == 2)
        }
    }

    /// A pending search in a range of instances' own rows alone is walked and counted on the
    /// primary key as it is (no fold of each row, which sorted a million rows a search): the
    /// same pages, positions and totals both ways as the rule, and the fold again once a
    /// provider's row is in the range.
    @Test func aPendingSearchAmongOwnRowsPagesAsTheRuleSays() throws {
        let keys = (0..<60).map { "k\($0)" }
        let expected = keys.map { "t[\($0)]" }.sorted().map { String($0.dropFirst(2).dropLast()) }
        try withStore { store, _ in
            try store.apply(Self.saved(keys.map { "t[\($0)]" } + ["t", "u[a]#small"]))
            for extra in [[], ["t[k7]#small", "t[zz]#small"]] {
                try store.apply(Self.saved(extra))
                let all = extra.isEmpty ? expected : expected + ["zz"]  // `t[zz]` sorts last either way
                let search = InstanceSearch(template: "t", state: .pending)
                // The walk on the primary key (own rows alone), then the fold (providers in range).
                #expect(try store.pendingHoldsOtherRows(search, "test") == !extra.isEmpty)
                try StateStore.$wholeRead.withValue(0) {
                    let first = try store.searchInstances(search, cursor: nil, limit: 25)
                    #expect(first.items.map(\.key) == Array(all.prefix(25)) && first.total == all.count && first.beforeCursor == 0)
                    let next = try store.searchInstances(search, cursor: .after(all[24]), limit: 25)
                    #expect(next.items.map(\.key) == Array(all[25..<50]) && next.total == all.count && next.beforeCursor == 25)
                    let back = try store.searchInstances(search, cursor: .before(all[30]), limit: 10)
                    #expect(back.items.map(\.key) == Array(all[20..<30]) && back.position == 20 && back.total == all.count)
                }
            }
        }
    }
}
