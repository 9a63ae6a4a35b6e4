@_spi(Benchmarks) import RefreshdCore

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
