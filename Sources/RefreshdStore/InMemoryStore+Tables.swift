import DequeModule
import RefreshdCore

/// The in-memory store's tables: the rows of `Schema` as values, and the undo journal that
/// makes a batch atomic. Kept apart from `InMemoryStore` (the locking, the fault injection and
/// the `StateStoring` surface) so each file holds one idea.
extension InMemoryStore {
    /// The primary key of `records`.
    struct RecordKey: Hashable, Comparable, Sendable {
        var table: Key
        var key: Key

        static func < (a: RecordKey, b: RecordKey) -> Bool {
            a.table != b.table ? a.table < b.table : a.key < b.key
        }
    }

    /// A `pending` row; `rowid` breaks ties of (earliest, sequence) as SQLite's scan order does.
    struct PendingRow: Sendable {
        var rowid: Int64
        var request: PendingRequest
    }

    /// A `job_state` row; `rowid` is the scan order of the restore queries.
    struct JobRow: Sendable {
        var rowid: Int
        var identifier: String
        var failureStreak: Int = 0
        var seedSpec: String?
    }

    /// An `instances` row (issue 23); `rowid` is the restore's order, as SQLite's.
    struct InstanceRow: Sendable {
        var rowid: Int64
        var record: InstanceRecord
    }

    /// How to take back one write of a refused batch.
    enum Undo {
        case pending(Int32, PendingRow?)
        case insertedRun(Int64)
        case run(RunRecord)
        case latestRun(Int32, Int64?)
        case job(Int32, JobRow?)
        /// A counter row of a slot: its index in the slot's day-ordered rows, what it held
        /// before (nil: it was inserted there).
        case counter(Int32, index: Int, DailyCounter?)
        case record(RecordKey, String?)
        case instance(RecordKey, InstanceRow?)
        /// A prune: the rows dropped from the front, and the others with their index (after the
        /// front was dropped), last removed first.
        case prunedRuns([RunRecord], [(index: Int, row: RunRecord)])
    }

    /// The tables of `Schema`, as values.
    ///
    /// The rows keyed by identifier (pending requests, each identifier's latest run, job rows,
    /// daily counters) are kept by a slot the store interns the identifier to: one hash lookup
    /// a change finds every row of it, and a launch's delete-then-save of its pending row, or
    /// a new day's counter, never deletes from or grows a hash table (a dictionary's delete
    /// rehashes the entries after it; a table of (day, identifier) strings rehashed them all
    /// each time it doubled: 9% of a simulated month of 10,000 instances between them). A slot
    /// whose rows are all empty is invisible to every query; slots are never freed.
    struct Tables: Sendable {
        /// Slot by identifier, and identifier by slot.
        var slotByKey: [Key: Int32] = [:]
        var names: [String] = []
        /// The store's slots of the core's slot hints: a change that carries its hint finds its
        /// rows without hashing its name. Not taken back by an undo (a slot is never freed).
        var hints = HintCache()
        /// Per slot: its pending request, its highest run id, its `job_state` row, and its
        /// daily counters in ascending day order.
        var pending: [PendingRow?] = []
        /// The last pending rowid given. SQLite gives a new row the largest rowid + 1; any number
        /// above every existing row orders the same, so a counter (never taken back) will do.
        var lastPendingRowid: Int64 = 0
        /// Every run id, ascending, and its row at the same index. Run ids are handed out in
        /// ascending order, so a new run is an append and a lookup a binary search (a month of
        /// a per-minute job is 43,200 rows, which a hash table rehashed as it grew). Deques,
        /// because the daily prune drops the oldest rows: from the front, without moving the rest.
        var runOrder: Deque<Int64> = []
        var runRows: Deque<RunRecord> = []
        /// When each run ended, in milliseconds (`Int64.max` while it runs), at the same index:
        /// the daily prune reads only this, not a whole row per run.
        var runEnds: Deque<Int64> = []
        /// The highest run id of each slot's identifier.
        var latestRun: [Int64?] = []
        var jobs: [JobRow?] = []
        /// How many job rows exist (a new row's rowid is this + 1, as SQLite's would be).
        var jobCount = 0
        var counters: [[DailyCounter]] = []
        var records: [RecordKey: String] = [:]
        /// Instances by (template, key), and the last rowid given (as `lastPendingRowid`).
        var instances: [RecordKey: InstanceRow] = [:]
        var lastInstanceRowid: Int64 = 0

        typealias Failure = InMemoryStore.Failure

        /// The slot of an identifier, if the store has seen it.
        func slot(of identifier: String) -> Int32? { slotByKey[Key(identifier)] }

        /// The slot of an identifier, through its hint when the hinted slot holds the same name
        /// (compared by bytes, not hashed), else by name; the hint learns what the name found.
        mutating func slot(of identifier: String, hint: SlotHint) -> Int32? {
            if let found = hints.index(for: hint, matching: { Key(names[$0]) == Key(identifier) }) { return found }
            guard let found = slot(of: identifier) else { return nil }
            hints.learn(hint, found)
            return found
        }

        /// `intern(_:)` through a hint, as `slot(of:hint:)`.
        mutating func intern(_ identifier: String, hint: SlotHint) -> Int32 {
            if let found = slot(of: identifier, hint: hint) { return found }
            let slot = intern(identifier)
            hints.learn(hint, slot)
            return slot
        }

        /// The slot of an identifier, given one if it has none.
        mutating func intern(_ identifier: String) -> Int32 {
            let next = Int32(names.count)
            let slot = Self.upsert(&slotByKey[Key(identifier)]) { $0 = $0 ?? next } ?? next
            if slot == next {
                names.append(identifier)
                pending.append(nil)
                latestRun.append(nil)
                jobs.append(nil)
                counters.append([])
            }
            return slot
        }

        func orderedPending() -> [PendingRequest] {
            pending.compactMap { $0 }.sorted { a, b in
                let (x, y) = (a.request, b.request)
                if x.earliest != y.earliest { return x.earliest < y.earliest }
                let (s, t) = (Int64(bitPattern: x.sequence), Int64(bitPattern: y.sequence))
                if s != t { return s < t }
                return a.rowid < b.rowid
            }.map(\.request)
        }

        mutating func write(_ change: StateChange, journal: inout [Undo]) throws(Failure) {
            switch change {
            case let .savePending(request):
                let slot = intern(request.identifier, hint: request.slot)
                let next = lastPendingRowid + 1
                let old = Self.upsert(&pending[Int(slot)]) { row in
                    row = PendingRow(rowid: row?.rowid ?? next, request: request)
                }
                journal.append(.pending(slot, old))
                if old == nil { lastPendingRowid = next }
            case let .deletePending(identifier, hint):
                guard let slot = slot(of: identifier, hint: hint), let old = pending[Int(slot)] else { return }
                pending[Int(slot)] = nil
                journal.append(.pending(slot, old))
            case let .runStarted(run):
                guard runIndex(run.runID) == nil else {
                    throw Failure(.invalidChange, "run \(run.runID) already exists")
                }
                var row = run
                row.output = .none  // kept only by `runOutput`, as the other stores keep it
                insertOrdered(row)
                journal.append(.insertedRun(run.runID))
                let slot = intern(run.identifier, hint: run.slot)
                let latest = latestRun[Int(slot)]
                if latest.map({ $0 < run.runID }) ?? true {
                    latestRun[Int(slot)] = run.runID
                    journal.append(.latestRun(slot, latest))
                }
            case let .runEnded(runID, identifier, ended, outcome, exitStatus, signal, _, reason, usage):
                guard let index = runIndex(runID), runRows[index].ended == nil,
                      Key(runRows[index].identifier) == Key(identifier) else {
                    throw Failure(.invalidChange, "no unfinished run \(runID) of \(identifier) to end")
                }
                journal.append(.run(runRows[index]))
                runEnds[index] = ended.milliseconds
                runRows[index].ended = ended
                runRows[index].outcome = outcome
                runRows[index].exitStatus = exitStatus
                runRows[index].signal = signal
                runRows[index].reason = reason
                // As the SQLite store keeps it: the numbers measured, not the kill count.
                runRows[index].usage = RunUsage(cpuMicroseconds: usage.cpuMicroseconds, peakMemoryBytes: usage.peakMemoryBytes)
            case let .runOutput(runID, output):
                guard let index = runIndex(runID) else { return }
                journal.append(.run(runRows[index]))
                runRows[index].output = output
            case let .failureStreak(identifier, count, hint):
                updateJob(identifier, hint: hint, journal: &journal) { $0.failureStreak = count }
            case let .counters(c):
                // The row as the core counted it: replaced, nothing derived.
                self.count(day: c.day, identifier: c.identifier, hint: c.slot, journal: &journal) { $0 = c }
            case let .processStarted(runID, processGroup, startTicks):
                guard let index = runIndex(runID) else {
                    throw Failure(.invalidChange, "no run \(runID)")
                }
                journal.append(.run(runRows[index]))
                runRows[index].processGroup = processGroup
                runRows[index].processStartTicks = startTicks
            case let .seedSpec(identifier, spec, hint):
                updateJob(identifier, hint: hint, journal: &journal) { $0.seedSpec = spec }
            case let .putRecord(record):
                let key = RecordKey(table: Key(record.table), key: Key(record.key))
                journal.append(.record(key, records.updateValue(record.value, forKey: key)))
            case let .deleteRecord(table, key):
                let key = RecordKey(table: Key(table), key: Key(key))
                guard let old = records.removeValue(forKey: key) else { return }
                journal.append(.record(key, old))
            case let .pruneRuns(cutoff):
                pruneRuns(endedBefore: cutoff, journal: &journal)
                // The world's events go with the runs (`WorldEvent`: keys sort in time order).
                let world = Key(WorldEvent.table), before = WorldEvent.key(from: cutoff)
                for key in records.keys where key.table == world && Array(key.key.string.utf8).lexicographicallyPrecedes(Array(before.utf8)) {
                    if let old = records.removeValue(forKey: key) { journal.append(.record(key, old)) }
                }
            case let .saveInstance(record):
                let key = RecordKey(table: Key(record.template), key: Key(record.key))
                let old = instances[key]
                var row = old ?? InstanceRow(rowid: lastInstanceRowid + 1, record: record)
                if old == nil { lastInstanceRowid += 1 }
                // Stored as SQLite stores it: the values' text read back.
                row.record = InstanceRecord(template: record.template, key: record.key,
                                            values: InstanceRecord.restoredValues(fromText: record.valuesText))
                instances[key] = row
                journal.append(.instance(key, old))
            case let .deleteInstance(template, key):
                let key = RecordKey(table: Key(template), key: Key(key))
                guard let old = instances.removeValue(forKey: key) else { return }
                journal.append(.instance(key, old))
            }
        }

        /// Takes back a refused batch's writes, newest first.
        mutating func undo(_ journal: [Undo]) {
            for entry in journal.reversed() {
                switch entry {
                case let .pending(slot, row): pending[Int(slot)] = row
                case let .insertedRun(id):
                    if let index = runIndex(id) {
                        runOrder.remove(at: index)
                        runRows.remove(at: index)
                        runEnds.remove(at: index)
                    }
                case let .run(run):
                    if let index = runIndex(run.runID) {
                        runRows[index] = run
                        runEnds[index] = Self.endKey(run)
                    }
                case let .latestRun(slot, id): latestRun[Int(slot)] = id
                case let .job(slot, row):
                    if row == nil, jobs[Int(slot)] != nil { jobCount -= 1 }
                    jobs[Int(slot)] = row
                case let .counter(slot, index, counter):
                    if let counter {
                        counters[Int(slot)][index] = counter
                    } else {
                        counters[Int(slot)].remove(at: index)
                    }
                case let .record(key, value): records[key] = value
                case let .instance(key, row): instances[key] = row
                case let .prunedRuns(dropped, others):
                    for (index, row) in others.reversed() {
                        runRows.insert(row, at: index)
                        runOrder.insert(row.runID, at: index)
                        runEnds.insert(Self.endKey(row), at: index)
                    }
                    runRows.prepend(contentsOf: dropped)
                    runOrder.prepend(contentsOf: dropped.map(\.runID))
                    runEnds.prepend(contentsOf: dropped.map(Self.endKey))
                }
            }
        }

        /// The instances in the order they were added (rowid), as SQLite's restore reads them.
        func orderedInstances() -> [InstanceRecord] {
            instances.values.sorted { $0.rowid < $1.rowid }.map(\.record)
        }

        /// Upserts a `job_state` row (new rows get the next rowid; rows are never deleted).
        private mutating func updateJob(_ identifier: String, hint: SlotHint, journal: inout [Undo],
                                        _ body: (inout JobRow) -> Void) {
            let slot = intern(identifier, hint: hint)
            let rowid = jobCount + 1
            let old = Self.upsert(&jobs[Int(slot)]) { slot in
                var row = slot ?? JobRow(rowid: rowid, identifier: identifier)
                body(&row)
                slot = row
            }
            if old == nil { jobCount += 1 }
            journal.append(.job(slot, old))
        }

        /// Upserts a `daily_counters` row. A slot's rows are in ascending day order, and the
        /// day counted is nearly always its latest: checked first, then a binary search.
        private mutating func count(day: String, identifier: String, hint: SlotHint, journal: inout [Undo],
                                    _ body: (inout DailyCounter) -> Void) {
            let slot = Int(intern(identifier, hint: hint))
            let count = counters[slot].count
            var index = count
            if let last = counters[slot].last?.day {
                if last == day {
                    index = count - 1
                } else if !Key.precedes(last, day) {
                    index = Self.firstDay(notBefore: day, in: counters[slot])
                }
            }
            if index < count, counters[slot][index].day == day {
                journal.append(.counter(Int32(slot), index: index, counters[slot][index]))
                body(&counters[slot][index])
            } else {
                var counter = DailyCounter(day: day, identifier: identifier)
                body(&counter)
                counters[slot].insert(counter, at: index)
                journal.append(.counter(Int32(slot), index: index, nil))
            }
        }

        /// The index of the first row whose day is not before `day` (rows in ascending day order).
        private static func firstDay(notBefore day: String, in rows: [DailyCounter]) -> Int {
            var low = 0, count = rows.count
            while count > 0 {
                let half = count / 2
                if Key.precedes(rows[low + half].day, day) {
                    low += half + 1
                    count -= half + 1
                } else {
                    count = half
                }
            }
            return low
        }

        /// Changes a dictionary's slot in one lookup (`dictionary[key]` yields it in place) and
        /// returns what it held before, for the undo journal.
        @inline(__always)
        private static func upsert<Value>(_ slot: inout Value?, _ body: (inout Value?) -> Void) -> Value? {
            let old = slot
            body(&slot)
            return old
        }
    }
}
