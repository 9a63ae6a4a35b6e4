/// The declared identifiers and their definitions, by interned slot.
///
/// Why not `[String: TaskDefinition]`: a definition is about 200 bytes and a million identifiers
/// declared with the same rules (a family of requests) would each keep a copy in a dictionary
/// twice their number of buckets (about 790 B an identifier with the runtime's handler). Here a
/// slot keeps 4 bytes, the index of its rules in `rules`, where equal rules are stored once (the
/// identifier blanked); `self[identifier]` puts the identifier back. Rules a redeclaration leaves
/// unused stay in `rules` (a reload's worth, not a request's).
package struct TaskDefinitions: Sendable {
    private(set) var table = IdentifierTable()
    /// Per slot: the index in `rules`, or -1 when the identifier is not declared (now).
    private var ruleBySlot: ContiguousArray<Int32> = []
    private(set) var rules: ContiguousArray<TaskDefinition> = []
    private var ruleIndex: [TaskDefinition: Int32] = [:]
    package private(set) var count = 0
    /// How many withdrawals so far: the incremental invariant check walks every pending
    /// request's declaration only after one (a declaration cannot leave a request undeclared).
    private(set) var withdrawals = 0

    package init() {}

    package var isEmpty: Bool { count == 0 }

    /// The definition of a declared identifier.
    package subscript(identifier: String) -> TaskDefinition? {
        get {
            guard let slot = table.slot(of: identifier) else { return nil }
            return definition(at: slot)
        }
        set {
            if let newValue {
                precondition(newValue.identifier == identifier, "a definition is stored under its own identifier")
                set(newValue)
            } else if let slot = table.slot(of: identifier), ruleBySlot[Int(slot)] >= 0 {
                ruleBySlot[Int(slot)] = -1
                count -= 1
                withdrawals += 1
            }
        }
    }

    /// Whether an identifier is declared (copies no definition).
    package func contains(_ identifier: String) -> Bool {
        guard let slot = table.slot(of: identifier) else { return false }
        return ruleBySlot[Int(slot)] >= 0
    }

    /// The index in `rules` of the declared identifier at a slot, or -1.
    func rule(at slot: Int32) -> Int32 { ruleBySlot[Int(slot)] }

    /// The `accuracy` of the declared identifier at a slot, read in place (a whole
    /// `TaskDefinition` copied to read one field was an eighth of the core's memory moves).
    func accuracy(at slot: Int32) -> Duration? {
        let r = ruleBySlot[Int(slot)]
        return r >= 0 ? rules[Int(r)].accuracy : nil
    }

    /// The definition at a slot, if declared.
    func definition(at slot: Int32) -> TaskDefinition? {
        let r = ruleBySlot[Int(slot)]
        guard r >= 0 else { return nil }
        var d = rules[Int(r)]
        d.identifier = table[Int(slot)]
        return d
    }

    /// Declares or replaces.
    mutating func set(_ definition: TaskDefinition) {
        let slot = Int(table.intern(definition.identifier))
        if slot == ruleBySlot.count { ruleBySlot.append(-1) }
        var rule = definition
        rule.identifier = ""
        let r: Int32
        if let last = rules.last, last == rule {
            r = Int32(rules.count - 1)  // the usual case: a run of identifiers with the same rules
        } else if let known = ruleIndex[rule] {
            r = known
        } else {
            r = Int32(rules.count)
            rules.append(rule)
            ruleIndex[rule] = r
        }
        if ruleBySlot[slot] < 0 { count += 1 }
        ruleBySlot[slot] = r
    }

    /// The index of `definition`'s rules in `rules` (stored once; the identifier is ignored):
    /// what a template's instances share.
    mutating func ruleIndex(of definition: TaskDefinition) -> Int32 {
        var rule = definition
        rule.identifier = ""
        if let last = rules.last, last == rule { return Int32(rules.count - 1) }
        if let known = ruleIndex[rule] { return known }
        let r = Int32(rules.count)
        rules.append(rule)
        ruleIndex[rule] = r
        return r
    }

    /// Declares `identifier` with the rules at index `rule` (an instance of a template: 4 bytes
    /// and its name, no definition of its own). Returns its slot.
    @discardableResult
    mutating func declare(_ identifier: String, rule: Int32) -> Int32 {
        let slot = table.intern(identifier)
        if Int(slot) == ruleBySlot.count { ruleBySlot.append(-1) }
        declare(slot: slot, rule: rule)
        return slot
    }

    /// Declares instance `template[key]` with the rules at index `rule` (stored as its key: see
    /// `IdentifierTable.intern(template:key:)`). Returns its slot.
    @discardableResult
    mutating func declareInstance(template: String, key: String, rule: Int32?, existing: Int32?? = nil) -> Int32 {
        let slot: Int32
        switch existing {
        case let .some(.some(found)): slot = found  // the caller found its slot
        case .some(.none): slot = table.intern(template: template, key: key, absent: true)  // the caller found none
        case .none: slot = table.intern(template: template, key: key)
        }
        if Int(slot) == ruleBySlot.count { ruleBySlot.append(-1) }
        if let rule { declare(slot: slot, rule: rule) }
        return slot
    }

    /// Room for `more` instances without growing on the way.
    mutating func reserve(instances more: Int) {
        table.reserve(instances: more)
        ruleBySlot.reserveCapacity(ruleBySlot.count + more)
    }

    /// Gives `identifier` a slot without declaring it. Returns its slot.
    mutating func intern(_ identifier: String) -> Int32 {
        let slot = table.intern(identifier)
        if Int(slot) == ruleBySlot.count { ruleBySlot.append(-1) }
        return slot
    }

    /// Declares the identifier at `slot` with the rules at index `rule`.
    mutating func declare(slot: Int32, rule: Int32) {
        if ruleBySlot[Int(slot)] < 0 { count += 1 }
        ruleBySlot[Int(slot)] = rule
    }

    /// Withdraws the identifier at `slot` (its slot stays).
    mutating func undeclare(slot: Int32) {
        guard ruleBySlot[Int(slot)] >= 0 else { return }
        ruleBySlot[Int(slot)] = -1
        count -= 1
        withdrawals += 1
    }

    /// Whether the identifier at `slot` is declared.
    func isDeclared(slot: Int32) -> Bool { ruleBySlot[Int(slot)] >= 0 }

    /// The declared identifiers, in the order they were first declared.
    package var identifiers: [String] {
        ruleBySlot.indices.compactMap { ruleBySlot[$0] >= 0 ? table[$0] : nil }
    }

    /// The declared definitions, in the order their identifiers were first declared.
    package var values: [TaskDefinition] {
        ruleBySlot.indices.compactMap { definition(at: Int32($0)) }
    }
}
