/// Search and filter over a template's instances and over runs (issue 33, item 5): what a
/// search asks, the order of its results, and a page of them with its position.
///
/// The stores answer a search themselves (SQL on an index, or the in-memory store's scan): a
/// page of at most `limit` results next to a cursor, how many results match in all, and how
/// many come before the cursor, so a page knows its position ("201-250 of 12,345") without
/// reading the results before it. Pages are keyset pages, not offsets: a page after or before
/// a result reads only its own rows through an index, so page 20,000 of a million costs what
/// page 1 does (an `OFFSET` reads and drops every row before it). The position is counted on
/// the same index, which SQLite counts at tens of millions of entries a second.
///
/// ```swift
/// let page = try store.searchInstances(InstanceSearch(template: "feed", text: "ali", state: .failing),
///                                      cursor: .after("alex"), limit: 50)
/// // page.position + 1 ... page.position + page.items.count of page.total
/// ```

/// What an instance or a job is doing, as a search filters it. One definition: `pending`, it has
/// a pending request; `running`, a run without an end; `failing`, a failure streak above zero
/// (failed attempts in a row, `Outcome.isTheJobsFailure`, counted by the core; an interrupted
/// run neither counts nor ends it); `paused`, it or its template is paused. An instance's
/// providers' (`T[K]#family`) requests, runs and streaks are its own, as its counts have them;
/// a pause is its own.
package enum SearchState: String, Sendable, Hashable, Codable, CaseIterable {
    case pending, running, failing, paused
}

/// A search among a template's instances: keys containing `text` (bytes; empty: every key), in
/// `state` (nil: any).
package struct InstanceSearch: Sendable, Hashable {
    package var template: String
    package var text: String
    package var state: SearchState?

    package init(template: String, text: String = "", state: SearchState? = nil) {
        self.template = template
        self.text = text
        self.state = state
    }

    /// Why `text` cannot be searched for, or nil: keys are of a small alphabet
    /// (`InstanceName.keyExpectation`), so a text outside it could match no key.
    package static func textProblem(_ text: String) -> String? {
        guard text.utf8.count > InstanceName.maximumKeyBytes || !text.utf8.allSatisfy(InstanceName.isKeyByte) else { return nil }
        return "expected part of a key: up to \(InstanceName.maximumKeyBytes) bytes of letters, digits, '.', '_', '@' and '-'"
    }

    /// The first identifier of the template's instances (`TEMPLATE[`) and the first past them
    /// (`TEMPLATE\`): the range the identifier-keyed tables (pending, runs, job state, pauses)
    /// hold them in.
    package var lowerBound: String { template + "[" }
    package var upperBound: String { template + "\\" }

    /// The results' order: by identifier `TEMPLATE[KEY]` (UTF-8 bytes), the order of the
    /// identifier-keyed tables; within a template that is the order of `KEY]` (not of `KEY`:
    /// `user10` comes before `user1`, as `]` sorts after the digits).
    package static func orderKey(_ key: String) -> [UInt8] { Array(key.utf8) + [UInt8(ascii: "]")] }

    package static func precedes(_ a: String, _ b: String) -> Bool { orderKey(a).lexicographicallyPrecedes(orderKey(b)) }

    /// The key of one of the template's own instance identifiers in `[lowerBound, upperBound)`
    /// ending in `]` (not a provider's `T[K]#family`), or nil.
    package func key(ofIdentifier identifier: String) -> String? {
        let bytes = Array(identifier.utf8), lower = Array(lowerBound.utf8)
        guard bytes.count > lower.count, bytes.starts(with: lower), bytes.last == UInt8(ascii: "]") else { return nil }
        return String(decoding: bytes[lower.count..<(bytes.count - 1)], as: UTF8.self)
    }

    /// Whether `key` holds the text (bytes).
    package func matchesText(_ key: String) -> Bool {
        text.isEmpty || Self.contains(Array(key.utf8), Array(text.utf8))
    }

    package static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}

/// A search among runs: of one identifier (nil: any), ending as `ending` says (nil: any),
/// started at or after `since` and before `until`. Results newest start first (ties: the
/// higher run id first), the order the dashboard lists runs in on one machine and a cluster.
package struct RunSearch: Sendable, Hashable {
    /// How the runs ended: with one of `outcomes`, or not yet (`unfinished`).
    public enum Ending: Sendable, Hashable {
        case outcomes([Outcome])
        case unfinished
    }

    package var identifier: String?
    package var ending: Ending?
    package var since: Instant?
    package var until: Instant?

    package init(identifier: String? = nil, ending: Ending? = nil, since: Instant? = nil, until: Instant? = nil) {
        self.identifier = identifier
        self.ending = ending
        self.since = since
        self.until = until
    }

    /// The words a search names an ending with: an outcome (`success`, `failure`, ...),
    /// `failed` (every outcome that `Outcome.isFailure`), or `running` (no end yet).
    package static let endingNames = Outcome.allCases.map(\.rawValue) + ["failed", "running"]

    package static func ending(named name: String) -> Ending? {
        if let outcome = Outcome(rawValue: name) { return .outcomes([outcome]) }
        if name == "failed" { return .outcomes(Outcome.allCases.filter(\.isFailure)) }
        return name == "running" ? .unfinished : nil
    }

    /// Whether a run is a result (the in-memory store's scan; the SQL says the same).
    package func matches(_ run: RunRecord) -> Bool {
        if let identifier, !run.identifier.utf8.elementsEqual(identifier.utf8) { return false }
        switch ending {
        case nil: break
        case let .outcomes(list): guard let outcome = run.outcome, list.contains(outcome) else { return false }
        case .unfinished: guard run.outcome == nil else { return false }
        }
        if let since, run.started < since { return false }
        if let until, run.started >= until { return false }
        return true
    }
}

/// Where a run stands in a run search's order (newest start first, then the higher run id).
package struct RunPosition: Sendable, Hashable, Codable {
    package var started: Instant
    package var runID: Int64

    package init(started: Instant, runID: Int64) {
        self.started = started
        self.runID = runID
    }

    package init(_ run: RunRecord) { self.init(started: run.started, runID: run.runID) }

    /// Whether `a` comes before `b` in the order (it is newer).
    package static func precedes(_ a: RunPosition, _ b: RunPosition) -> Bool { (a.started, a.runID) > (b.started, b.runID) }

    /// `STARTED_RUNID` (milliseconds, run id): a URL's cursor.
    package var text: String { "\(started.milliseconds)_\(runID)" }

    package init?(text: String) {
        let parts = text.split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count == 2, let started = Int64(parts[0]), let runID = Int64(parts[1]) else { return nil }
        self.init(started: Instant(milliseconds: started), runID: runID)
    }
}

/// Which page of a search: the results right after a position, or right before it.
package enum SearchCursor<Position: Sendable & Hashable>: Sendable, Hashable {
    case after(Position)
    case before(Position)
}

/// A page of a search: its results in order, how many match in all, and how many come before
/// the cursor (`after`: up to and including its position; `before`: before it; no cursor: 0).
package struct SearchPage<Item: Sendable>: Sendable {
    package var items: [Item]
    package var total: Int
    package var beforeCursor: Int
    /// False for a `before` cursor: the page ends at the cursor.
    package var forward: Bool

    package init(items: [Item], total: Int, beforeCursor: Int, forward: Bool) {
        self.items = items
        self.total = total
        self.beforeCursor = beforeCursor
        self.forward = forward
    }

    /// How many results come before the page's first.
    package var position: Int { forward ? beforeCursor : max(0, beforeCursor - items.count) }
    package var hasPrevious: Bool { position > 0 }
    package var hasNext: Bool { position + items.count < total }

    /// A page of `matches` (every result, in order): what a store without an index answers.
    /// `precedes(item, position)`: the item comes before the position in the order.
    package static func of<P>(_ matches: [Item], cursor: SearchCursor<P>?, limit: Int,
                              precedes: (Item, P) -> Bool, follows: (Item, P) -> Bool) -> SearchPage {
        let limit = max(0, limit)
        switch cursor {
        case nil:
            return SearchPage(items: Array(matches.prefix(limit)), total: matches.count, beforeCursor: 0, forward: true)
        case let .after(position):
            let upTo = matches.count { !follows($0, position) }
            return SearchPage(items: Array(matches.filter { follows($0, position) }.prefix(limit)), total: matches.count,
                              beforeCursor: upTo, forward: true)
        case let .before(position):
            let before = matches.filter { precedes($0, position) }
            return SearchPage(items: Array(before.suffix(limit)), total: matches.count, beforeCursor: before.count, forward: false)
        }
    }

    /// Pages of the same search and cursor from several stores, as one: the results merged in
    /// order (`inOrder`), the first `limit` after the cursor or the last `limit` before it,
    /// counts summed.
    package static func merged(_ pages: [SearchPage], limit: Int, inOrder: (Item, Item) -> Bool) -> SearchPage {
        guard pages.count > 1 else { return pages.first ?? SearchPage(items: [], total: 0, beforeCursor: 0, forward: true) }
        let forward = pages[0].forward
        let all = pages.flatMap(\.items).sorted(by: inOrder)
        return SearchPage(items: Array(forward ? all.prefix(max(0, limit)) : all.suffix(max(0, limit))),
                          total: pages.reduce(0) { $0 + $1.total }, beforeCursor: pages.reduce(0) { $0 + $1.beforeCursor },
                          forward: forward)
    }

    package func map<T, E: Error>(_ transform: (Item) throws(E) -> T) throws(E) -> SearchPage<T> {
        SearchPage<T>(items: try items.map(transform), total: total, beforeCursor: beforeCursor, forward: forward)
    }
}
