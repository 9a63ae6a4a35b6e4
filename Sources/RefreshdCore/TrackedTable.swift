/// A dictionary by identifier that can note which keys changed, for the incremental invariant
/// check (`SchedulerCore.checkInvariantsIncrementally`): after every simulated step it checks
/// the entries a step changed instead of walking every table. Noting is off until that check
/// turns it on, so the daemon keeps no log (one branch per write).
struct TrackedTable<Value>: Sequence {
    private(set) var storage: [String: Value] = [:]
    /// Keys written or removed since the last `takeChanged()`, when tracking.
    private(set) var changed: [String] = []
    var tracking = false

    init() {}
    init(_ dictionary: [String: Value]) { storage = dictionary }

    subscript(key: String) -> Value? {
        get { storage[key] }
        set {
            if tracking { changed.append(key) }
            storage[key] = newValue
        }
    }

    subscript(key: String, default value: @autoclosure () -> Value) -> Value { storage[key, default: value()] }

    @discardableResult
    mutating func removeValue(forKey key: String) -> Value? {
        let old = storage.removeValue(forKey: key)
        if tracking, old != nil { changed.append(key) }
        return old
    }

    mutating func removeAll() {
        if tracking { changed += storage.keys }
        storage.removeAll()
    }

    /// Appends the keys changed since the last call to `out`, and forgets them. Into the
    /// caller's buffer: returning the array would share it, and emptying a shared buffer
    /// allocates a new one at every call (the simulator calls this after every step).
    mutating func takeChanged(into out: inout [String]) {
        out.append(contentsOf: changed)
        changed.removeAll(keepingCapacity: true)
    }

    var isEmpty: Bool { storage.isEmpty }
    var count: Int { storage.count }
    var keys: Dictionary<String, Value>.Keys { storage.keys }
    var values: Dictionary<String, Value>.Values { storage.values }
    func makeIterator() -> Dictionary<String, Value>.Iterator { storage.makeIterator() }
}

extension TrackedTable: Sendable where Value: Sendable {}
