/// An identifier's slot in the core's table of definitions, carried beside its name in changes,
/// launches and run ends, so that the in-memory store and the simulator find the identifier's
/// rows by index instead of hashing its name at every commit (issue 22: integers on the hot
/// path, names at the edges: SQLite, PostgreSQL, logs and JSON read only the name).
///
/// A hint, not part of the value it rides on: two values that differ only in their hint are
/// equal and hash alike (a change written by a test, or read back from a database, has none),
/// and every reader checks that the hinted slot holds the same name before trusting it, so a
/// hint from another table (a restarted core, a second runtime) costs a lookup, never a wrong row.
package struct SlotHint: Sendable, Hashable {
    /// The slot, or -1 for none.
    package var raw: Int32

    package init(_ raw: Int32) { self.raw = raw }

    /// No hint: the reader looks the name up.
    package static let none = SlotHint(-1)

    /// The slot as an array index, if there is one.
    package var index: Int? { raw >= 0 ? Int(raw) : nil }

    package static func == (_: SlotHint, _: SlotHint) -> Bool { true }
    package func hash(into hasher: inout Hasher) {}
}

/// What a reader keyed by names of its own (a store's rows, the simulator's audits) learned of
/// hints: per hinted slot, its own index + 1 (0: not yet). The reader checks the name at the
/// index it gets back (`index(for:matching:)`) and looks the name up when that fails.
package struct HintCache: Sendable {
    private var byHint: [Int32] = []

    package init() {}

    /// The index last learned for `hint`, if `matches` accepts it (the name there is the one
    /// being looked up).
    @inline(__always)
    package func index(for hint: SlotHint, matching matches: (Int) -> Bool) -> Int32? {
        guard let h = hint.index, h < byHint.count else { return nil }
        let index = Int(byHint[h]) - 1
        return index >= 0 && matches(index) ? Int32(index) : nil
    }

    /// Remembers that `hint` names what sits at `index`.
    package mutating func learn(_ hint: SlotHint, _ index: Int32) {
        guard let h = hint.index else { return }
        if h >= byHint.count { byHint.append(contentsOf: repeatElement(0, count: h + 1 - byHint.count)) }
        byHint[h] = index + 1
    }
}

/// Names numbered in the order they were first seen (0, 1, …), each found through a slot hint
/// (one name compared, `HintCache`) or by name (one hash): what a reader that keys its own rows
/// by identifier keeps (the core's counters of the day, the simulator's audit, run numbers and
/// run history). Names compare as Swift strings, as the dictionaries they replace did.
package struct HintedNames: Sendable {
    /// The names, by number.
    package private(set) var names: [String] = []
    private var byName: [String: Int32] = [:]
    private var hints = HintCache()

    package init() {}

    /// The number of `name`, given now if it has none (`added`).
    package mutating func number(of name: String, hint: SlotHint) -> (number: Int32, added: Bool) {
        if let found = hints.index(for: hint, matching: { names[$0] == name }) { return (found, false) }
        var added = false
        let number = byName[name] ?? {
            added = true
            let next = Int32(names.count)
            byName[name] = next
            names.append(name)
            return next
        }()
        hints.learn(hint, number)
        return (number, added)
    }

    /// The number of `name`, if it has one.
    package func number(of name: String) -> Int32? { byName[name] }

    /// Forgets every name (and what the hints pointed at).
    package mutating func removeAll() {
        names.removeAll(keepingCapacity: true)
        byName.removeAll(keepingCapacity: true)
        hints = HintCache()
    }
}
