import HeapModule

/// Pending requests: one per identifier, ordered by (earliest begin, submission sequence).
///
/// A min-heap of small entries keyed by wake-up instant, plus a dictionary that holds the truth. Replacing or cancelling a
/// request leaves its old heap entry behind; entries whose sequence no longer matches are skipped
/// when they reach the top, and the heap is rebuilt when stale entries outnumber live ones.
struct PendingQueue {
    struct Entry: Comparable {
        /// When to wake for it: the earliest begin date plus the job's accuracy window.
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

    /// Inserts or replaces; returns the replaced request. `wake` is when to launch it, at or
    /// after its earliest begin date (later when an accuracy window lets wake-ups coalesce).
    @discardableResult
    mutating func insert(_ request: PendingRequest, wake: Int64? = nil) -> PendingRequest? {
        let old = byIdentifier.updateValue(request, forKey: request.identifier)
        if old != nil { staleEntries += 1 }
        heap.insert(Entry(due: max(wake ?? request.earliest.milliseconds, request.earliest.milliseconds),
                          sequence: request.sequence, identifier: request.identifier))
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

    /// Removes and returns the first live entry if its wake-up has come, or if its earliest
    /// begin date has passed (it shares this wake-up instead of waking again later).
    mutating func popDue(at now: Instant) -> Entry? {
        dropStaleTop()
        guard let top = heap.min else { return nil }
        guard top.due <= now.milliseconds || (byIdentifier[top.identifier]?.earliest ?? .init(milliseconds: .max)) <= now
        else { return nil }
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
        heap = Heap(heap.unordered.filter(isLive))
        staleEntries = 0
    }
}
