import Synchronization

/// The runtime's state in memory: folds every `StateChange` exactly as the SQLite `StateStore`
/// does, for the simulator and for tests.
///
/// Same fold, same query orders, same refusals (the end of an unknown or ended run, a duplicate
/// run id, the process of an unknown run), atomic batches, and the same `restoredState`, so
/// a restart in simulation restores what a restart on disk would. Identifiers compare by their
/// UTF-8 bytes, as SQLite's BINARY collation does (Swift's `==` on `String` is canonical
/// equivalence, which SQLite does not know).
///
/// A batch is applied in place with an undo journal, so a commit costs what the batch touches,
/// not the size of the state. `snapshot()` copies the committed state: dropping a store and
/// continuing with its snapshot is a kill -9. Faults can be injected at chosen commits
/// (`failingAtCommit`, `commitFault`) to play a full disk.
///
/// Thread-safe: every call takes the store's mutex.
@available(macOS 15.0, *)
public final class InMemoryStore: StateStoring, Sendable {
    /// Why a call was refused. Nothing of a refused batch is applied.
    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        public enum Kind: Sendable, Hashable {
            /// A change does not fit the state (where SQLite refuses it too).
            case invalidChange
            /// A fault injected by `failingAtCommit` or `commitFault`.
            case injected
            /// The store was used after `close()`.
            case closed
            /// The state cannot be restored (a run id of `Int64.max` leaves no next run id).
            case unrestorable
        }

        public var kind: Kind
        public var message: String

        public init(_ kind: Kind, _ message: String) {
            self.kind = kind
            self.message = message
        }

        public var description: String { message }
    }

    /// Decides whether a commit fails: called with the 1-based number of the non-empty `apply`
    /// (counting refused ones) and its changes; a returned failure is thrown and nothing applied.
    /// It runs under the store's lock, so it must not call the store.
    public typealias CommitFault = @Sendable (_ commit: Int, _ changes: [StateChange]) -> Failure?

    private let instance: String
    private let state: Mutex<State>

    /// An empty store. `instanceID` defaults to 16 random lowercase hex digits (pass one for a
    /// reproducible simulation); `failingAtCommit: n` makes the n-th non-empty `apply` throw a
    /// "disk full" `.injected` failure.
    public convenience init(instanceID: String? = nil, failingAtCommit: Int? = nil) {
        var fault: CommitFault?
        if let n = failingAtCommit {
            fault = { commit, _ in
                commit == n ? Failure(.injected, "disk full (injected at commit \(n))") : nil
            }
        }
        self.init(instanceID: instanceID, commitFault: fault)
    }

    /// An empty store whose commits fail where `commitFault` says.
    public convenience init(instanceID: String? = nil, commitFault: CommitFault?) {
        self.init(instanceID: instanceID ?? Self.randomInstanceID(),
                  state: State(tables: Tables(), commitFault: commitFault))
    }

    private init(instanceID: String, state: State) {
        self.instance = instanceID
        self.state = Mutex(state)
    }

    /// The fault consulted at every non-empty `apply`; settable at any time.
    public var commitFault: CommitFault? {
        get { state.withLock { $0.commitFault } }
        set { state.withLock { $0.commitFault = newValue } }
    }

    /// How many non-empty batches `apply` was given, refused ones included.
    public var commitAttempts: Int { state.withLock { $0.commits } }

    /// An independent open store holding this store's committed state and instance id (no fault,
    /// commit count 0). Later changes to either are not seen by the other.
    public func snapshot() -> InMemoryStore {
        let tables = state.withLock { $0.tables }
        return InMemoryStore(instanceID: instance, state: State(tables: tables, commitFault: nil))
    }

    // MARK: StateStoring

    /// Commits the batch atomically: a refused change (or an injected fault) throws and leaves
    /// the state as it was. An empty batch does nothing, even after `close()`, as in SQLite.
    public func apply(_ changes: [StateChange]) throws(Failure) {
        guard !changes.isEmpty else { return }
        try state.withLock { (s: inout State) throws(Failure) in
            try s.requireOpen()
            s.commits += 1
            if let fault = s.commitFault, let failure = fault(s.commits, changes) {
                throw failure
            }
            var journal: [Undo] = []
            for change in changes {
                do throws(Failure) {
                    try s.tables.write(change, journal: &journal)
                } catch {
                    s.tables.undo(journal)
                    throw Failure(error.kind, "\(error.message) (applying \(change))")
                }
            }
        }
    }

    public func restoredState() throws(Failure) -> SchedulerCore.RestoredState {
        try read { (t: Tables) throws(Failure) in
            let jobs = t.jobs.values.sorted { $0.rowid < $1.rowid }
            var nextRunID: Int64 = 1
            if let last = t.runOrder.last {
                guard last < Int64.max else {
                    throw Failure(.unrestorable, "run \(last) leaves no next run id")
                }
                nextRunID = last + 1
            }
            return SchedulerCore.RestoredState(
                pending: t.orderedPending(),
                unfinishedRuns: t.runOrder.compactMap { id in t.runs[id].flatMap { $0.ended == nil ? $0 : nil } },
                failureStreaks: Dictionary(jobs.filter { $0.failureStreak > 0 }.map { ($0.identifier, $0.failureStreak) },
                                           uniquingKeysWith: { _, last in last }),
                nextRunID: nextRunID,
                seedSpecs: Dictionary(jobs.compactMap { job in job.seedSpec.map { (job.identifier, $0) } },
                                      uniquingKeysWith: { _, last in last }),
                counters: t.countersOfLatestDays(1))
        }
    }

    public func instanceID() throws(Failure) -> String {
        try read { _ in instance }
    }

    public func pendingRequests() throws(Failure) -> [PendingRequest] {
        try read { $0.orderedPending() }
    }

    public func recentRuns(limit: Int) throws(Failure) -> [RunRecord] {
        try read { t in t.runOrder.suffix(max(0, limit)).reversed().compactMap { t.runs[$0] } }
    }

    public func lastRunPerJob() throws(Failure) -> [RunRecord] {
        try read { t in
            t.latestRun.sorted { $0.key < $1.key }.compactMap { t.runs[$0.value] }
        }
    }

    public func dailyCounters(days: Int?) throws(Failure) -> [DailyCounter] {
        try read { t in t.countersOfLatestDays(days) }
    }

    public func seedSpec(for identifier: String) throws(Failure) -> String? {
        try read { $0.jobs[Key(identifier)]?.seedSpec }
    }

    /// Further calls throw `.closed` (an empty `apply` still does nothing); `snapshot()` still
    /// copies the committed state.
    public func close() {
        state.withLock { $0.closed = true }
    }

    // MARK: Internals

    private func read<T>(_ body: (Tables) throws(Failure) -> T) throws(Failure) -> T {
        let tables = try state.withLock { (s: inout State) throws(Failure) -> Tables in
            try s.requireOpen()
            return s.tables
        }
        return try body(tables)
    }

    private static func randomInstanceID() -> String {
        let hex = String(UInt64.random(in: .min ... .max), radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}

/// An identifier compared by its UTF-8 bytes (SQLite's BINARY collation).
private struct Key: Hashable, Comparable, Sendable {
    let string: String

    init(_ string: String) { self.string = string }

    static func == (a: Key, b: Key) -> Bool {
        let (x, y) = (a.string.utf8, b.string.utf8)
        guard x.count == y.count else { return false }
        // Native strings are contiguous UTF-8: compare the bytes directly.
        if let same = x.withContiguousStorageIfAvailable({ p in
            y.withContiguousStorageIfAvailable { q in p.elementsEqual(q) }
        }), let same { return same }
        return x.elementsEqual(y)
    }

    static func < (a: Key, b: Key) -> Bool { precedes(a.string, b.string) }

    static func precedes(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }

    func hash(into hasher: inout Hasher) {
        var copy = string
        copy.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}

/// The primary key of `daily_counters`.
private struct CounterKey: Hashable, Sendable {
    var day: String
    var identifier: Key
}

/// A `pending` row; `rowid` breaks ties of (earliest, sequence) as SQLite's scan order does.
private struct PendingRow: Sendable {
    var rowid: Int64
    var request: PendingRequest
}

/// A `job_state` row; `rowid` is the scan order of the restore queries.
private struct JobRow: Sendable {
    var rowid: Int
    var identifier: String
    var failureStreak: Int = 0
    var seedSpec: String?
}

/// How to take back one write of a refused batch.
private enum Undo {
    case pending(Key, PendingRow?)
    case insertedRun(Int64)
    case run(RunRecord)
    case latestRun(Key, Int64?)
    case job(Key, JobRow?)
    case counter(CounterKey, DailyCounter?)
}

private struct State: Sendable {
    var tables: Tables
    var commitFault: InMemoryStore.CommitFault?
    var commits = 0
    var closed = false

    func requireOpen() throws(InMemoryStore.Failure) {
        if closed { throw InMemoryStore.Failure(.closed, "the in-memory store was closed") }
    }
}

/// The tables of `Schema`, as values.
private struct Tables: Sendable {
    var pending: [Key: PendingRow] = [:]
    /// The last pending rowid given. SQLite gives a new row the largest rowid + 1; any number
    /// above every existing row orders the same, so a counter (never taken back) will do.
    var lastPendingRowid: Int64 = 0
    var runs: [Int64: RunRecord] = [:]
    /// Every run id, ascending.
    var runOrder: [Int64] = []
    /// The highest run id of each identifier.
    var latestRun: [Key: Int64] = [:]
    var jobs: [Key: JobRow] = [:]
    var counters: [CounterKey: DailyCounter] = [:]

    typealias Failure = InMemoryStore.Failure

    func orderedPending() -> [PendingRequest] {
        pending.values.sorted { a, b in
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
            let key = Key(request.identifier)
            let old = pending[key]
            journal.append(.pending(key, old))
            if let old {
                pending[key] = PendingRow(rowid: old.rowid, request: request)
            } else {
                lastPendingRowid += 1
                pending[key] = PendingRow(rowid: lastPendingRowid, request: request)
            }
        case let .deletePending(identifier):
            let key = Key(identifier)
            guard let old = pending.removeValue(forKey: key) else { return }
            journal.append(.pending(key, old))
        case let .runStarted(run):
            guard runs[run.runID] == nil else {
                throw Failure(.invalidChange, "run \(run.runID) already exists")
            }
            runs[run.runID] = run
            insertOrdered(run.runID)
            journal.append(.insertedRun(run.runID))
            let key = Key(run.identifier)
            let latest = latestRun[key]
            if latest.map({ $0 < run.runID }) ?? true {
                journal.append(.latestRun(key, latest))
                latestRun[key] = run.runID
            }
        case let .runEnded(runID, identifier, ended, outcome, exitStatus, signal):
            guard var run = runs[runID], run.ended == nil, Key(run.identifier) == Key(identifier) else {
                throw Failure(.invalidChange, "no unfinished run \(runID) of \(identifier) to end")
            }
            journal.append(.run(run))
            run.ended = ended
            run.outcome = outcome
            run.exitStatus = exitStatus
            run.signal = signal
            runs[runID] = run
        case let .failureStreak(identifier, count):
            updateJob(identifier, journal: &journal) { $0.failureStreak = count }
        case let .counters(c):
            // The row as the core counted it: replaced, nothing derived.
            self.count(day: c.day, identifier: c.identifier, journal: &journal) { $0 = c }
        case let .processStarted(runID, processGroup, startTicks):
            guard var run = runs[runID] else {
                throw Failure(.invalidChange, "no run \(runID)")
            }
            journal.append(.run(run))
            run.processGroup = processGroup
            run.processStartTicks = startTicks
            runs[runID] = run
        case let .seedSpec(identifier, spec):
            updateJob(identifier, journal: &journal) { $0.seedSpec = spec }
        }
    }

    /// Takes back a refused batch's writes, newest first.
    mutating func undo(_ journal: [Undo]) {
        for entry in journal.reversed() {
            switch entry {
            case let .pending(key, row): pending[key] = row
            case let .insertedRun(id):
                runs[id] = nil
                if runOrder.last == id {
                    runOrder.removeLast()
                } else {
                    runOrder.remove(at: insertionIndex(id))
                }
            case let .run(run): runs[run.runID] = run
            case let .latestRun(key, id): latestRun[key] = id
            case let .job(key, row): jobs[key] = row
            case let .counter(key, counter): counters[key] = counter
            }
        }
    }

    /// Inserts into `runOrder` (run ids usually grow, so usually an append).
    private mutating func insertOrdered(_ id: Int64) {
        if runOrder.last.map({ $0 < id }) ?? true {
            runOrder.append(id)
        } else {
            runOrder.insert(id, at: insertionIndex(id))
        }
    }

    /// The first index of `runOrder` whose id is not below `id`.
    private func insertionIndex(_ id: Int64) -> Int {
        var (low, high) = (0, runOrder.count)
        while low < high {
            let middle = (low + high) / 2
            if runOrder[middle] < id { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Upserts a `job_state` row (new rows get the next rowid; rows are never deleted).
    private mutating func updateJob(_ identifier: String, journal: inout [Undo], _ body: (inout JobRow) -> Void) {
        let key = Key(identifier)
        let old = jobs[key]
        journal.append(.job(key, old))
        var row = old ?? JobRow(rowid: jobs.count + 1, identifier: identifier)
        body(&row)
        jobs[key] = row
    }

    /// Upserts a `daily_counters` row.
    private mutating func count(day: String, identifier: String, journal: inout [Undo],
                                _ body: (inout DailyCounter) -> Void) {
        let key = CounterKey(day: day, identifier: Key(identifier))
        let old = counters[key]
        journal.append(.counter(key, old))
        var counter = old ?? DailyCounter(day: day, identifier: identifier)
        body(&counter)
        counters[key] = counter
    }
}

extension Int {
    /// SQLite turns an overflowing integer sum into a REAL, which reads back clamped to Int64.
    fileprivate func saturatingAdd(_ other: Int) -> Int {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }
}

extension Tables {
    /// Counter rows, newest day first then by identifier, limited to the `days` most recent days.
    func countersOfLatestDays(_ days: Int?) -> [DailyCounter] {
        let t = self
        var rows = t.counters.sorted { a, b in
            a.key.day != b.key.day ? Key.precedes(b.key.day, a.key.day) : a.key.identifier < b.key.identifier
        }
        if let days {
            var kept = 0
            var last: String?
            rows = Array(rows.prefix { row in
                if row.key.day != last {
                last = row.key.day
                kept += 1
                }
                return kept <= max(0, days)
            })
        }
        return rows.map(\.value)
    }
}
