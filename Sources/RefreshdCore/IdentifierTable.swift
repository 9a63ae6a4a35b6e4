/// Identifiers interned to dense integer slots: slot -> name in an array, name -> slot through an
/// open-addressing index of 4-byte slots (linear probing, at most half full).
///
/// Why not `[String: Int32]`: at 1,000,000 identifiers a dictionary keeps 2^21 buckets of a
/// 16-byte key and a 4-byte value (about 42 B an identifier); this index keeps 2^21 slots of 4
/// bytes (8 B), the name being stored once, in `names`. Slots are never freed: an identifier
/// keeps its slot for the life of the table (withdrawn and declared again, it gets the same one).
/// Iteration is in slot order (first interned first), never in hash order.
///
/// Instance identifiers (`template[key]`, issue 23) are stored as their key and the index of
/// their template's prefix (`intern(template:key:)`): a key of up to 15 bytes fits in its
/// `String` without a heap allocation, where the whole name (`bench.feed[u123456]`) took one of
/// about 48 B. They have an index of their own, hashed by (prefix, key); `self[slot]` builds the
/// whole name when asked (at the edges: logs, stores, launches). A name is found whichever way
/// it was interned: `slot(of: "t[k]")` falls back to the instance index, and interning an
/// instance first looks for a plain name `t[k]` when the table holds any name of that shape.
package struct IdentifierTable: Sendable {
    /// Per slot: the whole name, or for an instance slot its key.
    private(set) var names: ContiguousArray<String> = []
    /// Slot + 1 per bucket, plain names only; 0 is an empty bucket. Capacity is a power of two (or zero).
    private var buckets: ContiguousArray<Int32> = []
    private var plainCount = 0
    /// How many plain names look like an instance's (`x[y]`): while none does, interning an
    /// instance need not look for its whole name among them.
    private var bracketedPlainCount = 0
    /// Per slot, the prefix index of an instance slot, or -1; empty until the first instance.
    private var prefixBySlot: ContiguousArray<Int32> = []
    /// Per bucket, instance slot + 1 in the low 32 bits and the high 32 bits of its hash above
    /// (0: empty), hashed by (prefix, key). The hash bits let a probe pass a bucket without
    /// reading that slot's key (a cache miss each in a million-entry table).
    private var instanceBuckets: ContiguousArray<UInt64> = []
    private var instanceCount = 0
    /// Template identifiers that prefix instance slots, and their index.
    private var prefixes: [String] = []
    private var prefixIndex: [String: Int32] = [:]

    package init() {}

    /// How many identifiers have a slot.
    package var count: Int { names.count }

    /// The name of a slot (built for an instance slot).
    package subscript(slot: Int) -> String {
        guard !prefixBySlot.isEmpty else { return names[slot] }
        let p = prefixBySlot[slot]
        guard p >= 0 else { return names[slot] }
        // One allocation (the concatenations made two intermediate strings).
        let (prefix, key) = (prefixes[Int(p)], names[slot])
        var name = String()
        name.reserveCapacity(prefix.utf8.count + key.utf8.count + 2)
        name += prefix
        name += "["
        name += key
        name += "]"
        return name
    }

    /// The slot of a name, if it has one.
    package subscript(name: String) -> Int32? { slot(of: name) }

    /// Whether a slot holds a template's instance (`TEMPLATE[KEY]`, interned as one).
    package func isInstance(_ slot: Int32) -> Bool { !prefixBySlot.isEmpty && prefixBySlot[Int(slot)] >= 0 }

    /// The key of an instance slot (nil for a plain name).
    func key(at slot: Int32) -> String? {
        guard !prefixBySlot.isEmpty, prefixBySlot[Int(slot)] >= 0 else { return nil }
        return names[Int(slot)]
    }

    package func slot(of name: String) -> Int32? {
        if instanceCount > 0, let (template, key) = Self.split(name) {
            // An instance's name: its own index first (no plain name has its shape, unless
            // `bracketedPlainCount` says so), without copying its parts into new strings.
            if let p = prefixSlot(of: template), let found = instanceSlot(prefix: p, key: key) { return found }
            return bracketedPlainCount > 0 ? plainSlot(of: name) : nil
        }
        return plainSlot(of: name)
    }

    /// The index of a template prefix. Templates are few: compared byte by byte while there are
    /// at most eight (no `String` made from the substring, no dictionary hash).
    private func prefixSlot(of template: Substring) -> Int32? {
        if prefixes.count <= 8 {
            for (i, prefix) in prefixes.enumerated() where prefix.utf8.elementsEqual(template.utf8) { return Int32(i) }
            return nil
        }
        return prefixIndex[String(template)]
    }

    /// Whether no name of the table could be an instance's: no instance, and no plain name with
    /// brackets. A restore into such a table needs no lookup before adding each stored instance
    /// (the store's rows are unique by template and key).
    package var holdsNoInstanceNames: Bool { instanceCount == 0 && bracketedPlainCount == 0 }

    /// Calls `body` with every plain (not instance) slot, in no order: a walk of the plain
    /// names' own index (about twice their number), none of the instances' slots (the light
    /// snapshot's, among a million instances).
    func forEachPlainSlot(_ body: (Int32) -> Void) {
        for bucket in buckets where bucket != 0 { body(bucket - 1) }
    }

    /// The slot of instance `template[key]`, if it has one.
    func slot(template: String, key: String) -> Int32? {
        if instanceCount > 0, let p = prefixIndex[template], let found = instanceSlot(prefix: p, key: key) { return found }
        guard bracketedPlainCount > 0 else { return nil }
        return plainSlot(of: template + "[" + key + "]")
    }

    /// The slot of a name, reserving the next one if it has none.
    @discardableResult
    package mutating func intern(_ name: String) -> Int32 {
        if let found = slot(of: name) { return found }
        if (plainCount + 1) * 2 > buckets.count { growPlain() }
        let mask = buckets.count - 1
        var b = name.hashValue & mask
        while buckets[b] != 0 { b = (b + 1) & mask }
        let slot = Int32(names.count)
        names.append(name)
        if !prefixBySlot.isEmpty { prefixBySlot.append(-1) }
        buckets[b] = slot + 1
        plainCount += 1
        if Self.split(name) != nil { bracketedPlainCount += 1 }
        return slot
    }

    /// The slot of instance `template[key]`, reserving the next one (stored as its key) if it
    /// has none. The key is a valid instance key (no brackets).
    /// `absent`: the caller has just found no slot for it (`slot(template:key:)` was nil), so
    /// it is not looked up again (each probe of a million-entry index is a cache miss).
    @discardableResult
    mutating func intern(template: String, key: String, absent: Bool = false) -> Int32 {
        if !absent, let found = slot(template: template, key: key) { return found }
        let p: Int32
        if let known = prefixIndex[template] {
            p = known
        } else {
            p = Int32(prefixes.count)
            prefixes.append(template)
            prefixIndex[template] = p
        }
        if prefixBySlot.isEmpty {
            prefixBySlot = ContiguousArray(repeating: -1, count: names.count)
        }
        if (instanceCount + 1) * 2 > instanceBuckets.count { growInstances() }
        let mask = instanceBuckets.count - 1
        let h = Self.hash(prefix: p, key: key)
        var b = h & mask
        while instanceBuckets[b] != 0 { b = (b + 1) & mask }
        let slot = Int32(names.count)
        names.append(key)
        prefixBySlot.append(p)
        instanceBuckets[b] = Self.bucket(slot: slot, hash: h)
        instanceCount += 1
        return slot
    }

    /// Room for `more` names without growing the arrays or the indexes on the way (a batch of
    /// instances: no doubling copy, no rehash half-way).
    mutating func reserve(instances more: Int) {
        names.reserveCapacity(names.count + more)
        prefixBySlot.reserveCapacity(names.count + more)
        while (instanceCount + more) * 2 > instanceBuckets.count { growInstances() }
    }

    /// Whether both tables hold the same names in the same storage (one is a copy of the other
    /// that neither has changed since): then they map every name to the same slot.
    func sharesNames(with other: IdentifierTable) -> Bool {
        names.count == other.names.count
            && names.withUnsafeBufferPointer { a in other.names.withUnsafeBufferPointer { b in a.baseAddress == b.baseAddress } }
    }

    // MARK: Internals

    private func plainSlot(of name: String) -> Int32? {
        guard !buckets.isEmpty else { return nil }
        let mask = buckets.count - 1
        var b = name.hashValue & mask
        while true {
            let s = buckets[b]
            if s == 0 { return nil }
            if names[Int(s - 1)] == name, isPlain(Int(s - 1)) { return s - 1 }
            b = (b + 1) & mask
        }
    }

    private func instanceSlot<Key: StringProtocol>(prefix p: Int32, key: Key) -> Int32? {
        guard !instanceBuckets.isEmpty else { return nil }
        let mask = instanceBuckets.count - 1
        let h = Self.hash(prefix: p, key: key)
        let tag = Self.bucket(slot: -1, hash: h)
        var b = h & mask
        while true {
            let e = instanceBuckets[b]
            if e == 0 { return nil }
            if e & 0xFFFF_FFFF_0000_0000 == tag {
                let s = Int(e & 0xFFFF_FFFF) - 1
                if prefixBySlot[s] == p, names[s].utf8.elementsEqual(key.utf8) { return Int32(s) }
            }
            b = (b + 1) & mask
        }
    }

    @inline(__always)
    private func isPlain(_ slot: Int) -> Bool { prefixBySlot.isEmpty || prefixBySlot[slot] < 0 }

    /// A bucket: `slot + 1` below, the hash's high 32 bits above.
    @inline(__always)
    private static func bucket(slot: Int32, hash: Int) -> UInt64 {
        (UInt64(UInt(bitPattern: hash)) & 0xFFFF_FFFF_0000_0000) | UInt64(UInt32(bitPattern: slot + 1))
    }

    /// The instance index's hash of (prefix, key), over the key's UTF-8 bytes, so that a key
    /// and a substring of a whole name hash alike (keys are ASCII: bytes are the comparison).
    private static func hash<Key: StringProtocol>(prefix: Int32, key: Key) -> Int {
        var hasher = Hasher()
        hasher.combine(prefix)
        let done: Void? = key.utf8.withContiguousStorageIfAvailable { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        if done == nil {
            for byte in key.utf8 { hasher.combine(byte) }
        }
        return hasher.finalize()
    }

    /// `template[key]` split at its last `[` (a key holds no bracket), or nil.
    static func split(_ name: String) -> (Substring, Substring)? {
        let utf8 = name.utf8
        guard utf8.last == UInt8(ascii: "]"), let open = utf8.lastIndex(of: UInt8(ascii: "[")), open != utf8.startIndex else {
            return nil
        }
        let end = utf8.index(before: utf8.endIndex)
        return (name[..<open], name[utf8.index(after: open)..<end])
    }

    private mutating func growPlain() {
        let capacity = max(16, buckets.count * 2)
        var fresh = ContiguousArray<Int32>(repeating: 0, count: capacity)
        let mask = capacity - 1
        for (i, name) in names.enumerated() where isPlain(i) {
            var b = name.hashValue & mask
            while fresh[b] != 0 { b = (b + 1) & mask }
            fresh[b] = Int32(i + 1)
        }
        buckets = fresh
    }

    private mutating func growInstances() {
        let capacity = max(16, instanceBuckets.count * 2)
        instanceBuckets = []  // the old index is freed before the new one is filled
        var fresh = ContiguousArray<UInt64>(repeating: 0, count: capacity)
        let mask = capacity - 1
        for (i, p) in prefixBySlot.enumerated() where p >= 0 {
            let h = Self.hash(prefix: p, key: names[i])
            var b = h & mask
            while fresh[b] != 0 { b = (b + 1) & mask }
            fresh[b] = Self.bucket(slot: Int32(i), hash: h)
        }
        instanceBuckets = fresh
    }
}
