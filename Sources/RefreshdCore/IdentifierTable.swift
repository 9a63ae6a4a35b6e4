/// Identifiers interned to dense integer slots: slot -> name in an array, name -> slot through an
/// open-addressing index of 4-byte slots (linear probing, at most half full).
///
/// Why not `[String: Int32]`: at 1,000,000 identifiers a dictionary keeps 2^21 buckets of a
/// 16-byte key and a 4-byte value (about 42 B an identifier); this index keeps 2^21 slots of 4
/// bytes (8 B), the name being stored once, in `names`. Slots are never freed: an identifier
/// keeps its slot for the life of the table (withdrawn and declared again, it gets the same one).
/// Iteration is in slot order (first interned first), never in hash order.
public struct IdentifierTable: Sendable {
    private(set) var names: ContiguousArray<String> = []
    /// Slot + 1 per bucket; 0 is an empty bucket. Capacity is a power of two (or zero).
    private var buckets: ContiguousArray<Int32> = []

    public init() {}

    /// How many identifiers have a slot.
    public var count: Int { names.count }

    /// The name of a slot.
    public subscript(slot: Int) -> String { names[slot] }

    /// The slot of a name, if it has one.
    public subscript(name: String) -> Int32? { slot(of: name) }

    public func slot(of name: String) -> Int32? {
        guard !buckets.isEmpty else { return nil }
        let mask = buckets.count - 1
        var b = name.hashValue & mask
        while true {
            let s = buckets[b]
            if s == 0 { return nil }
            if names[Int(s - 1)] == name { return s - 1 }
            b = (b + 1) & mask
        }
    }

    /// The slot of a name, reserving the next one if it has none.
    @discardableResult
    public mutating func intern(_ name: String) -> Int32 {
        if (names.count + 1) * 2 > buckets.count { grow() }
        let mask = buckets.count - 1
        var b = name.hashValue & mask
        while true {
            let s = buckets[b]
            if s == 0 { break }
            if names[Int(s - 1)] == name { return s - 1 }
            b = (b + 1) & mask
        }
        let slot = Int32(names.count)
        names.append(name)
        buckets[b] = slot + 1
        return slot
    }

    /// Whether both tables hold the same names in the same storage (one is a copy of the other
    /// that neither has changed since): then they map every name to the same slot.
    func sharesNames(with other: IdentifierTable) -> Bool {
        names.count == other.names.count
            && names.withUnsafeBufferPointer { a in other.names.withUnsafeBufferPointer { b in a.baseAddress == b.baseAddress } }
    }

    private mutating func grow() {
        let capacity = max(16, buckets.count * 2)
        var fresh = ContiguousArray<Int32>(repeating: 0, count: capacity)
        let mask = capacity - 1
        for (i, name) in names.enumerated() {
            var b = name.hashValue & mask
            while fresh[b] != 0 { b = (b + 1) & mask }
            fresh[b] = Int32(i + 1)
        }
        buckets = fresh
    }
}
