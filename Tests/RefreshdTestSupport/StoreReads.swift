import RefreshdCore

/// The reads the dashboard, `status` and `stats runs` make without loading the whole state
/// (issue 32), compared between two stores that folded the same changes: what differs, by read
/// (empty: they agree). One copy for the SQLite and PostgreSQL parity tests.
package func storeReadMismatches(_ a: any StateStoring, _ b: any StateStoring, identifiers: [String]) throws -> [String] {
    var found: [String] = []
    for identifier in identifiers + ["never.seen"] {
        let (x, y) = (try a.recentRuns(of: identifier, limit: 3), try b.recentRuns(of: identifier, limit: 3))
        if x != y || x.map({ Array($0.identifier.utf8) }) != y.map({ Array($0.identifier.utf8) }) {
            found.append("recentRuns(of: \(identifier))")
        }
    }
    let bytes = { (streaks: [String: Int]) in Dictionary(streaks.map { (Array($0.key.utf8), $0.value) }, uniquingKeysWith: { x, _ in x }) }
    if bytes(try a.failureStreaks()) != bytes(try b.failureStreaks()) { found.append("failureStreaks()") }
    let bare = { (runs: [RunRecord]) in runs.map { run -> RunRecord in var r = run; r.output = .none; return r } }
    let (scanA, scanB) = (try a.recentRuns(limit: 1000, before: nil, withOutput: false), try b.recentRuns(limit: 1000, before: nil, withOutput: false))
    if bare(scanA) != bare(scanB) { found.append("recentRuns(withOutput: false)") }
    if try a.withKeptOutput(scanA) != b.withKeptOutput(scanB) { found.append("withKeptOutput") }
    for since in [Instant.earliest, Instant(milliseconds: 1_000_000)] {
        let text = { (counts: [(identifier: String, outcome: Outcome, count: Int)]) in
            counts.map { "\(Array($0.identifier.utf8)) \($0.outcome) \($0.count)" }
        }
        if text(try a.runCounts(since: since)) != text(try b.runCounts(since: since)) { found.append("runCounts(since: \(since))") }
    }
    let instances = try b.restoredState().instances
    for instance in instances where try a.instance(of: instance.template, key: instance.key) != instance {
        found.append("instance(\(instance.identifier))")
    }
    for template in Set(instances.map(\.template)) where try a.instanceCount(of: template) != b.instanceCount(of: template) {
        found.append("instanceCount(of: \(template))")
    }
    return found
}

/// The searches (issue 33, item 5) compared between two stores, every page of each: from the
/// first page forward by each page's last result, then back from the last page by each page's
/// first (pages of 2, so the cursors are many), items, totals and positions alike. Instances of
/// every template the state holds (each state, texts found in their keys and not); runs of
/// each identifier given and of all, by each ending, in a window and not.
package func searchMismatches(_ a: any StateStoring, _ b: any StateStoring, identifiers: [String]) throws -> [String] {
    var found: [String] = []
    let instances = try b.restoredState().instances
    let templates = Array(Set(instances.map(\.template))).sorted() + ["never.seen"]
    // "e" and "feed" are in the fixture's template's name too (`feed[...]`): the key alone is searched.
    let texts = ["", "1", "user1", "a", "A", ".", "zzz", "e", "feed"]
    for template in templates {
        for state in [nil] + SearchState.allCases.map(Optional.some) {
            for text in texts {
                let search = InstanceSearch(template: template, text: text, state: state)
                let bytes = { (r: InstanceRecord) in "\(Array(r.template.utf8)) \(Array(r.key.utf8)) \(r.valuesText)" }
                found += try pagesDiffer("searchInstances(\(search))", { try $0.searchInstances(search, cursor: $1, limit: 2) },
                                         a, b, position: \.key, same: { $0.map(bytes) == $1.map(bytes) })
            }
        }
    }
    let start = Instant(milliseconds: ISO8601.days(year: 2026, month: 11, day: 21) * 86_400_000 + 22 * 3_600_000)
    let endings: [RunSearch.Ending?] = [nil, RunSearch.ending(named: "failed"), RunSearch.ending(named: "running"),
                                        RunSearch.ending(named: "success")]
    for identifier in [nil] + identifiers.map(Optional.some) {
        for ending in endings {
            for (since, until) in [(nil, nil), (start - .seconds(3600), start + .seconds(3600))] as [(Instant?, Instant?)] {
                let search = RunSearch(identifier: identifier, ending: ending, since: since, until: until)
                let bare = { (runs: [RunRecord]) in runs.map { run -> RunRecord in var r = run; r.output = .none; return r } }
                found += try pagesDiffer("searchRuns(\(search))", { try $0.searchRuns(search, cursor: $1, limit: 2) },
                                         a, b, position: { RunPosition($0) }, same: { bare($0) == bare($1) })
            }
        }
    }
    return found
}

/// Walks every page of one search in both directions on `a`, asking `b` the same cursors.
private func pagesDiffer<Item, P>(_ name: String, _ read: (any StateStoring, SearchCursor<P>?) throws -> SearchPage<Item>,
                                  _ a: any StateStoring, _ b: any StateStoring, position: (Item) -> P,
                                  same: ([Item], [Item]) -> Bool) throws -> [String] {
    func compare(_ cursor: SearchCursor<P>?) throws -> SearchPage<Item>? {
        let (x, y) = (try read(a, cursor), try read(b, cursor))
        guard same(x.items, y.items), x.total == y.total, x.beforeCursor == y.beforeCursor, x.forward == y.forward else { return nil }
        return x
    }
    var cursor: SearchCursor<P>?
    var last: Item?
    for _ in 0..<500 {
        guard let page = try compare(cursor) else { return ["\(name) after \(String(describing: cursor))"] }
        if let item = page.items.last { last = item }
        guard page.hasNext, let item = page.items.last else { break }
        cursor = .after(position(item))
    }
    guard let last else { return [] }
    cursor = .before(position(last))
    for _ in 0..<500 {
        guard let page = try compare(cursor) else { return ["\(name) before \(String(describing: cursor))"] }
        guard page.hasPrevious, let item = page.items.first else { break }
        cursor = .before(position(item))
    }
    return []
}
