import HeapModule

/// Pending requests: one per identifier, ordered by (earliest begin, submission sequence).
///
/// A min-heap of small entries plus a dictionary that holds the truth. Replacing or cancelling a
/// request leaves its old heap entry behind; entries whose sequence no longer matches are skipped
/// when they reach the top, and the heap is rebuilt when stale entries outnumber live ones.
struct PendingQueue {
    struct Entry: Comparable {
        var due: Int64
        var sequence: UInt64
        var identifier: String

        static func < (a: Entry, b: Entry) -> Bool {
            a.due != b.due ? a.due < b.due : a.sequence < b.sequence
        }
        static func == (a: Entry, b: Entry) -> Bool { a.due == b.due && a.sequence == b.sequence }
    }

    private(set) var byIdentifier: [String: PendingRequest] = [:]
    private var heap = Heap<Entry>()
    private var staleEntries = 0

    var count: Int { byIdentifier.count }
    subscript(identifier: String) -> PendingRequest? { byIdentifier[identifier] }

    func isLive(_ entry: Entry) -> Bool { byIdentifier[entry.identifier]?.sequence == entry.sequence }

    /// Inserts or replaces; returns the replaced request.
    @discardableResult
    mutating func insert(_ request: PendingRequest) -> PendingRequest? {
        let old = byIdentifier.updateValue(request, forKey: request.identifier)
        if old != nil { staleEntries += 1 }
        heap.insert(Entry(due: request.earliest.milliseconds, sequence: request.sequence,
                          identifier: request.identifier))
        compactIfNeeded()
        return old
    }

    @discardableResult
    mutating func remove(_ identifier: String) -> PendingRequest? {
        guard let old = byIdentifier.removeValue(forKey: identifier) else { return nil }
        staleEntries += 1
        dropStaleTop()
        compactIfNeeded()
        return old
    }

    /// Puts back an entry that was taken out (blocked by a run or waiting on conditions).
    mutating func reinsert(_ entry: Entry) {
        guard isLive(entry) else { return }
        heap.insert(entry)
    }

    /// The earliest live entry.
    mutating func peek() -> Entry? {
        dropStaleTop()
        return heap.min
    }

    /// Removes and returns the earliest live entry if it is due at `now`.
    mutating func popDue(at now: Instant) -> Entry? {
        dropStaleTop()
        guard let top = heap.min, top.due <= now.milliseconds else { return nil }
        return heap.removeMin()
    }

    /// All live requests in due order.
    func sorted() -> [PendingRequest] {
        byIdentifier.values.sorted {
            $0.earliest != $1.earliest ? $0.earliest < $1.earliest : $0.sequence < $1.sequence
        }
    }

    private mutating func dropStaleTop() {
        while let top = heap.min, !isLive(top) {
            heap.removeMin()
            staleEntries = max(0, staleEntries - 1)
        }
    }

    private mutating func compactIfNeeded() {
        guard staleEntries > 1024, staleEntries > byIdentifier.count else { return }
        heap = Heap(byIdentifier.values.map {
            Entry(due: $0.earliest.milliseconds, sequence: $0.sequence, identifier: $0.identifier)
        })
        staleEntries = 0
    }
}
