import HeapModule

/// Pending requests: at most one per identifier, launched in (wake-up, submission sequence) order.
///
/// Identifiers are interned into dense slots when declared (an identifier has at most one pending
/// request, so its slot is reserved up front); a pending request is a 32-byte record in an array
/// indexed by slot (with its wake-up: see `wake(at:)`), and the min-heap holds 24-byte entries
/// (wake-up, sequence, slot). Checking an entry, launching it or counting a namespace hashes no
/// string. Replacing or cancelling a request leaves its old heap entry behind; entries whose
/// sequence no longer matches are skipped when they reach the top, and the heap is rebuilt when
/// stale entries outnumber live ones.
struct PendingQueue {
    struct Entry: Comparable {
        /// When to wake for it: the earliest begin date plus the job's accuracy window.
        var due: Int64
        var sequence: UInt64
        var slot: Int32

        static func < (a: Entry, b: Entry) -> Bool {
            a.due != b.due ? a.due < b.due : a.sequence < b.sequence
        }
        static func == (a: Entry, b: Entry) -> Bool { a.due == b.due && a.sequence == b.sequence }
    }

    /// A pending request without its strings: identifier and namespace are the slot's.
    struct Record {
        var earliest: Int64
        var submitted: Int64
        var sequence: UInt64
        /// Its wake-up (its live entry's `due`, which never changes) less `earliest`, or
        /// `wakeInOverflow` (then `PendingQueue.wakeOverflow` holds it). Declared before the
        /// small fields: `Record?` keeps its stride of 32 bytes.
        var wakeDelta: UInt32
        var namespace: UInt16
        var flags: UInt8

        static let wakeInOverflow = UInt32.max

        static let processing: UInt8 = 1, power: UInt8 = 2, network: UInt8 = 4
        static let originShift: UInt8 = 3
    }

    /// Identifier <-> slot (an open-addressing index, not a dictionary: see `IdentifierTable`).
    private(set) var ids = IdentifierTable()
    /// Slot by identifier (`slots[identifier]`) and identifier by slot (`identifiers[slot]`).
    var slots: IdentifierTable { ids }
    var identifiers: IdentifierTable { ids }
    private var records: [Record?] = []
    private var namespaceIndex: [String: UInt16] = [:]
    private var namespaces: [String] = []
    /// Pending requests per (namespace, kind): index namespace * 2 + (processing ? 1 : 0).
    private var counts: [Int] = []
    private var heap = Heap<Entry>()
    /// The wake-ups of the requests that wake `wakeInOverflow` ms or more after their earliest
    /// date (an accuracy window of over 49 days), by slot: empty in practice.
    private var wakeOverflow: [Int32: Int64] = [:]
    private var staleEntries = 0
    private(set) var count = 0
    /// What changed since the incremental invariant check last looked (nil, and no cost
    /// beyond a branch, until it turns tracking on: see `ChangeLog`).
    private(set) var changeLog: ChangeLog?

    /// The slots whose record or heap entries changed and the heap entries added, since the
    /// last `takeChanges()`, plus each slot's number of live heap entries, kept where the heap
    /// changes (private to this type), so that the check after a step reads what it touched.
    struct ChangeLog {
        var slots: [Int32] = []
        var entries: [Entry] = []
        var liveInHeap: [Int32] = []
    }

    /// The slot of an identifier, reserving one if it has none.
    @discardableResult
    mutating func intern(_ identifier: String) -> Int32 {
        let slot = ids.intern(identifier)
        if Int(slot) == records.count { records.append(nil) }
        if changeLog != nil { growLog() }
        return slot
    }

    /// Takes `table` as the identifier table (the definitions' one, which holds every identifier
    /// this queue's does, at the same slots), so that both share one copy of the names.
    mutating func adopt(_ table: IdentifierTable) {
        ids = table
        while records.count < ids.count { records.append(nil) }
        if changeLog != nil { growLog() }
    }

    /// Drops this queue's reference to its table before `adopt`, so that the owner of the other
    /// reference can grow it in place.
    mutating func releaseIdentifiers() { ids = IdentifierTable() }

    func identifier(of entry: Entry) -> String { ids[Int(entry.slot)] }

    subscript(identifier: String) -> PendingRequest? {
        guard let slot = ids.slot(of: identifier) else { return nil }
        return request(at: slot)
    }

    func request(at slot: Int32) -> PendingRequest? {
        guard let r = records[Int(slot)] else { return nil }
        return PendingRequest(
            identifier: ids[Int(slot)], namespace: namespaces[Int(r.namespace)],
            kind: r.flags & Record.processing != 0 ? .processing : .appRefresh,
            earliest: Instant(milliseconds: r.earliest), submitted: Instant(milliseconds: r.submitted),
            sequence: r.sequence, requiresExternalPower: r.flags & Record.power != 0,
            requiresNetworkConnectivity: r.flags & Record.network != 0,
            origin: PendingRequest.Origin.allCases[Int(r.flags >> Record.originShift)])
    }

    func isLive(_ entry: Entry) -> Bool { records[Int(entry.slot)]?.sequence == entry.sequence }

    /// The wake-up of a slot's request: the `due` of its live entry, wherever that entry is (the
    /// heap or a side table), read from its record without a look at the heap (the light
    /// snapshot's). Entries keep the due they were made with (`reinsert` puts one back as it
    /// was), and the record is written with its entry.
    func wake(at slot: Int32) -> Int64? {
        guard let r = records[Int(slot)] else { return nil }
        return r.wakeDelta == Record.wakeInOverflow ? wakeOverflow[slot] : r.earliest + Int64(r.wakeDelta)
    }

    /// The record's `wakeDelta` for a new entry, noting a wake-up too far for it in `wakeOverflow`.
    private mutating func wakeDelta(_ entry: Entry, earliest: Int64) -> UInt32 {
        let (delta, overflow) = entry.due.subtractingReportingOverflow(earliest)
        if !overflow, delta >= 0, delta < Int64(Record.wakeInOverflow) { return UInt32(delta) }
        wakeOverflow[entry.slot] = entry.due
        return Record.wakeInOverflow
    }

    /// Pending requests of a kind in a namespace.
    func pendingCount(namespace: String, kind: TaskKind) -> Int {
        guard let ns = namespaceIndex[namespace] else { return 0 }
        return counts[Int(ns) * 2 + (kind == .processing ? 1 : 0)]
    }

    /// Inserts or replaces; returns the replaced request. `wake` is when to launch it, at or
    /// after its earliest begin date (later when an accuracy window lets wake-ups coalesce).
    @discardableResult
    mutating func insert(_ request: PendingRequest, wake: Int64? = nil) -> PendingRequest? {
        let slot = intern(request.identifier)
        let old = self.request(at: slot)
        insert(request, at: slot, wake: wake)
        return old
    }

    /// `insert` at the identifier's slot, known to the caller (a launch's resubmit, a run's
    /// retry): no name hashed, built or compared on the way.
    mutating func insert(_ request: PendingRequest, at slot: Int32, wake: Int64? = nil) {
        assert(ids[Int(slot)] == request.identifier, "insert(at:) at another identifier's slot")
        removeRecord(slot: slot, dropTop: false)
        var flags: UInt8 = request.kind == .processing ? Record.processing : 0
        if request.requiresExternalPower { flags |= Record.power }
        if request.requiresNetworkConnectivity { flags |= Record.network }
        flags |= UInt8(PendingRequest.Origin.allCases.firstIndex(of: request.origin)!) << Record.originShift
        let ns = namespaceSlot(request.namespace)
        let entry = Entry(due: max(wake ?? request.earliest.milliseconds, request.earliest.milliseconds),
                          sequence: request.sequence, slot: slot)
        let delta = wakeDelta(entry, earliest: request.earliest.milliseconds)
        records[Int(slot)] = Record(earliest: request.earliest.milliseconds, submitted: request.submitted.milliseconds,
                                    sequence: request.sequence, wakeDelta: delta, namespace: ns, flags: flags)
        counts[Int(ns) * 2 + (request.kind == .processing ? 1 : 0)] += 1
        count += 1
        heap.insert(entry)
        if changeLog != nil { logged(entry, live: 1) }
        compactIfNeeded()
    }

    /// Inserts a request for the identifier at `slot`, which has none (an instance's first
    /// request, issue 23): `insert` without building or hashing its name.
    mutating func insert(slot: Int32, namespace: String, kind: TaskKind, earliest: Instant, submitted: Instant,
                         sequence: UInt64, power: Bool, network: Bool, origin: PendingRequest.Origin, wake: Int64) {
        while records.count <= Int(slot) { records.append(nil) }
        precondition(records[Int(slot)] == nil, "insert(slot:) is for a slot without a request")
        var flags: UInt8 = kind == .processing ? Record.processing : 0
        if power { flags |= Record.power }
        if network { flags |= Record.network }
        flags |= UInt8(PendingRequest.Origin.allCases.firstIndex(of: origin)!) << Record.originShift
        let ns = namespaceSlot(namespace)
        let entry = Entry(due: max(wake, earliest.milliseconds), sequence: sequence, slot: slot)
        let delta = wakeDelta(entry, earliest: earliest.milliseconds)
        records[Int(slot)] = Record(earliest: earliest.milliseconds, submitted: submitted.milliseconds,
                                    sequence: sequence, wakeDelta: delta, namespace: ns, flags: flags)
        counts[Int(ns) * 2 + (kind == .processing ? 1 : 0)] += 1
        count += 1
        heap.insert(entry)
        // Noted like every other insert: the incremental check (the simulator's, after every
        // step) otherwise missed an instance added while it ran (`pending-count-mismatch`).
        if changeLog != nil {
            growLog()
            logged(entry, live: 1)
        }
        compactIfNeeded()
    }

    /// Room for `more` requests without growing on the way.
    mutating func reserve(_ more: Int) {
        records.reserveCapacity(records.count + more)
        heap.reserveCapacity(heap.count + more)
    }

    @discardableResult
    mutating func remove(_ identifier: String) -> PendingRequest? {
        guard let slot = ids.slot(of: identifier) else { return nil }
        return remove(slot: slot)
    }

    @discardableResult
    mutating func remove(slot: Int32, dropTop: Bool = true) -> PendingRequest? {
        guard let old = request(at: slot) else { return nil }
        removeRecord(slot: slot, dropTop: dropTop)
        return old
    }

    /// `remove(slot:)` without building the removed request (nor its name); false if the
    /// slot had none.
    @discardableResult
    mutating func removeRecord(slot: Int32, dropTop: Bool = true) -> Bool {
        guard let r = records[Int(slot)] else { return false }
        records[Int(slot)] = nil
        if !wakeOverflow.isEmpty { wakeOverflow[slot] = nil }
        if changeLog != nil { changeLog!.slots.append(slot); changeLog!.liveInHeap[Int(slot)] = 0 }
        counts[Int(r.namespace) * 2 + (r.flags & Record.processing != 0 ? 1 : 0)] -= 1
        count -= 1
        staleEntries += 1
        if dropTop {
            dropStaleTop()
            compactIfNeeded()
        }
        return true
    }

    /// Puts back an entry that was taken out (blocked by a run or waiting on conditions).
    mutating func reinsert(_ entry: Entry) {
        guard isLive(entry) else { return }
        heap.insert(entry)
        if changeLog != nil { logged(entry, live: changeLog!.liveInHeap[Int(entry.slot)] + 1) }
    }

    /// The first live entry.
    mutating func peek() -> Entry? {
        dropStaleTop()
        return heap.min
    }

    /// Removes and returns the first live entry if its wake-up has come, or if its earliest
    /// begin date has passed (it shares this wake-up instead of waking again later).
    mutating func popDue(at now: Instant) -> Entry? {
        dropStaleTop()
        guard let top = heap.min else { return nil }
        guard top.due <= now.milliseconds || (records[Int(top.slot)]?.earliest ?? .max) <= now.milliseconds
        else { return nil }
        let popped = heap.removeMin()
        if changeLog != nil {
            changeLog!.slots.append(popped.slot)
            changeLog!.liveInHeap[Int(popped.slot)] -= 1  // live: stale tops were dropped above
        }
        return popped
    }

    /// The first live entry, as `peek()` finds it, without dropping stale tops: read-only and
    /// linear, for the invariant checker (which must not copy the heap to look).
    func firstLive() -> Entry? {
        var first: Entry?
        for entry in heap.unordered where isLive(entry) {
            if let f = first, !(entry < f) { continue }
            first = entry
        }
        return first
    }

    /// The first live entry without a walk when the heap's top is live (the usual case), as
    /// `firstLive()` otherwise: for the incremental check after every simulated step.
    func firstLiveQuickly() -> Entry? {
        if let top = heap.min, isLive(top) { return top }
        return firstLive()
    }

    // MARK: The change log of the incremental invariant check

    /// Starts noting changes: each slot's live heap entries counted once, from the heap.
    mutating func startChangeLog() {
        var log = ChangeLog()
        log.liveInHeap = Array(repeating: 0, count: records.count)
        for entry in heap.unordered where isLive(entry) { log.liveInHeap[Int(entry.slot)] += 1 }
        changeLog = log
    }

    /// Appends the changed slots and the added heap entries since the last call to the
    /// caller's buffers, and forgets them (the log's own buffers stay unique, so emptying them
    /// allocates nothing).
    mutating func takeChanges(slots: inout [Int32], entries: inout [Entry]) {
        guard changeLog != nil else { return }
        slots.append(contentsOf: changeLog!.slots)
        entries.append(contentsOf: changeLog!.entries)
        changeLog!.slots.removeAll(keepingCapacity: true)
        changeLog!.entries.removeAll(keepingCapacity: true)
    }

    /// The live heap entries of a slot, as the change log counts them.
    func liveInHeap(slot: Int32) -> Int { changeLog.map { Int($0.liveInHeap[Int(slot)]) } ?? 0 }

    private mutating func logged(_ entry: Entry, live: Int32) {
        changeLog!.slots.append(entry.slot)
        changeLog!.entries.append(entry)
        changeLog!.liveInHeap[Int(entry.slot)] = live
    }

    private mutating func growLog() {
        let missing = records.count - changeLog!.liveInHeap.count
        if missing > 0 { changeLog!.liveInHeap += repeatElement(0, count: missing) }
    }

    /// All live requests in due order.
    func sorted() -> [PendingRequest] {
        records.indices.compactMap { request(at: Int32($0)) }.sorted {
            $0.earliest != $1.earliest ? $0.earliest < $1.earliest : $0.sequence < $1.sequence
        }
    }

    /// The live requests whose earliest begin date is at or before `limit`, in due order (the
    /// others are not built: at a restore of a million requests due tomorrow, none is).
    func sorted(earliestThrough limit: Instant) -> [PendingRequest] {
        records.indices.compactMap { i in
            guard let r = records[i], r.earliest <= limit.milliseconds else { return nil }
            return request(at: Int32(i))
        }.sorted {
            $0.earliest != $1.earliest ? $0.earliest < $1.earliest : $0.sequence < $1.sequence
        }
    }

    // MARK: Read-only views for invariant checks and snapshots

    /// The live heap entries (those whose sequence matches their slot's pending request).
    var liveHeapEntries: [Entry] { heap.unordered.filter(isLive) }

    /// How many slots exist (occupied or not): slot numbers are below it.
    var slotCount: Int { records.count }

    /// The stored fields of a slot's pending request, without building its strings.
    func record(at slot: Int32) -> Record? { records[Int(slot)] }

    /// The namespace at an index of the counters.
    func namespaceName(_ index: Int) -> String { namespaces[index] }

    /// The counters as kept, index namespace * 2 + (processing ? 1 : 0).
    var counterValues: [Int] { counts }

    /// The counters recomputed from the records, same indexing, with the number of occupied
    /// slots, in a buffer on the stack that lives for the call (the invariant check after every
    /// simulated step builds no array).
    func withCountsFromRecords<R>(_ body: (_ counts: UnsafeBufferPointer<Int>, _ occupied: Int) -> R) -> R {
        let size = namespaces.count * 2
        return withUnsafeTemporaryAllocation(of: Int.self, capacity: max(1, size)) { buffer in
            buffer.initialize(repeating: 0)
            var occupied = 0
            for record in records {
                guard let record else { continue }
                occupied += 1
                buffer[Int(record.namespace) * 2 + (record.flags & Record.processing != 0 ? 1 : 0)] += 1
            }
            return body(UnsafeBufferPointer(rebasing: buffer[..<size]), occupied)
        }
    }

    /// Calls `body` with every heap entry (live or stale), without copying the heap.
    func forEachHeapEntry(_ body: (Entry) -> Void) {
        for entry in heap.unordered { body(entry) }
    }

    private mutating func namespaceSlot(_ namespace: String) -> UInt16 {
        if let ns = namespaceIndex[namespace] { return ns }
        let ns = UInt16(namespaces.count)
        namespaceIndex[namespace] = ns
        namespaces.append(namespace)
        counts += [0, 0]
        return ns
    }

    private mutating func dropStaleTop() {
        while let top = heap.min, !isLive(top) {
            heap.removeMin()
            staleEntries = max(0, staleEntries - 1)
        }
    }

    private mutating func compactIfNeeded() {
        guard staleEntries > 1024, staleEntries > count else { return }
        heap = Heap(heap.unordered.filter(isLive))
        staleEntries = 0
    }
}
