import RefreshdCore
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
package final class InMemoryStore: StateStoring, Sendable {
    /// Why a call was refused. Nothing of a refused batch is applied.
    package struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        package enum Kind: Sendable, Hashable {
            /// A change does not fit the state (where SQLite refuses it too).
            case invalidChange
            /// A fault injected by `failingAtCommit` or `commitFault`.
            case injected
            /// The store was used after `close()`.
            case closed
            /// The state cannot be restored (a run id of `Int64.max` leaves no next run id).
            case unrestorable
        }

        package var kind: Kind
        package var message: String

        package init(_ kind: Kind, _ message: String) {
            self.kind = kind
            self.message = message
        }

        package var description: String { message }
    }

    /// Decides whether a commit fails: called with the 1-based number of the non-empty `apply`
    /// (counting refused ones) and its changes; a returned failure is thrown and nothing applied.
    /// It runs under the store's lock, so it must not call the store.
    package typealias CommitFault = @Sendable (_ commit: Int, _ changes: [StateChange]) -> Failure?

    private let instance: String
    private let state: Mutex<State>

    /// An empty store. `instanceID` defaults to 16 random lowercase hex digits (pass one for a
    /// reproducible simulation); `failingAtCommit: n` makes the n-th non-empty `apply` throw a
    /// "disk full" `.injected` failure.
    package convenience init(instanceID: String? = nil, failingAtCommit: Int? = nil) {
        var fault: CommitFault?
        if let n = failingAtCommit {
            fault = { commit, _ in
                commit == n ? Failure(.injected, "disk full (injected at commit \(n))") : nil
            }
        }
        self.init(instanceID: instanceID, commitFault: fault)
    }

    /// An empty store whose commits fail where `commitFault` says.
    package convenience init(instanceID: String? = nil, commitFault: CommitFault?) {
        self.init(instanceID: instanceID ?? Self.randomInstanceID(),
                  state: State(tables: Tables(), commitFault: commitFault))
    }

    private init(instanceID: String, state: State) {
        self.instance = instanceID
        self.state = Mutex(state)
    }

    /// The fault consulted at every non-empty `apply`; settable at any time.
    package var commitFault: CommitFault? {
        get { state.withLock { $0.commitFault } }
        set { state.withLock { $0.commitFault = newValue } }
    }

    /// Called with every batch committed (not with a refused one), in commit order, under the
    /// store's lock: so it must not call the store. The simulator keeps the whole run history
    /// with it, which the store itself prunes.
    package typealias CommitObserver = @Sendable (_ changes: [StateChange]) -> Void

    /// The observer of committed batches; settable at any time.
    package var onCommit: CommitObserver? {
        get { state.withLock { $0.onCommit } }
        set { state.withLock { $0.onCommit = newValue } }
    }

    /// How many non-empty batches `apply` was given, refused ones included.
    package var commitAttempts: Int { state.withLock { $0.commits } }

    /// An independent open store holding this store's committed state and instance id (no fault,
    /// commit count 0). Later changes to either are not seen by the other.
    package func snapshot() -> InMemoryStore {
        let tables = state.withLock { $0.tables }
        return InMemoryStore(instanceID: instance, state: State(tables: tables, commitFault: nil))
    }

    // MARK: StateStoring

    /// Commits the batch atomically: a refused change (or an injected fault) throws and leaves
    /// the state as it was. An empty batch does nothing, even after `close()`, as in SQLite.
    package func apply(_ changes: [StateChange]) throws(Failure) {
        guard !changes.isEmpty else { return }
        try state.withLock { (s: inout State) throws(Failure) in
            try s.requireOpen()
            s.commits += 1
            if let fault = s.commitFault, let failure = fault(s.commits, changes) {
                throw failure
            }
            // One undo journal reused by every commit (no allocation per batch).
            var journal: [Undo] = []
            swap(&journal, &s.journal)
            defer {
                journal.removeAll(keepingCapacity: true)
                swap(&journal, &s.journal)
            }
            for change in changes {
                do throws(Failure) {
                    try s.tables.write(change, journal: &journal)
                } catch {
                    s.tables.undo(journal)
                    throw Failure(error.kind, "\(error.message) (applying \(change))")
                }
            }
            s.onCommit?(changes)
        }
    }

    package func restoredState() throws(Failure) -> SchedulerCore.RestoredState {
        try read { (t: Tables) throws(Failure) in
            let jobs = t.jobs.compactMap { $0 }.sorted { $0.rowid < $1.rowid }
            var nextRunID: Int64 = 1
            if let last = t.runOrder.last {
                guard last < Int64.max else {
                    throw Failure(.unrestorable, "run \(last) leaves no next run id")
                }
                nextRunID = last + 1
            }
            return SchedulerCore.RestoredState(
                pending: t.orderedPending(),
                unfinishedRuns: t.runRows.filter { $0.ended == nil }.map(\.withoutOutput),
                failureStreaks: Dictionary(jobs.filter { $0.failureStreak > 0 }.map { ($0.identifier, $0.failureStreak) },
                                           uniquingKeysWith: { _, last in last }),
                nextRunID: nextRunID,
                seedSpecs: Dictionary(jobs.compactMap { job in job.seedSpec.map { (job.identifier, $0) } },
                                      uniquingKeysWith: { _, last in last }),
                counters: t.countersOfLatestDays(1),
                records: t.orderedRecords(),
                instances: t.orderedInstances())
        }
    }

    package func instanceID() throws(Failure) -> String {
        try read { _ in instance }
    }

    package func pendingRequests() throws(Failure) -> [PendingRequest] {
        try read { $0.orderedPending() }
    }

    package func recentRuns(limit: Int) throws(Failure) -> [RunRecord] {
        try read { t in Array(t.runRows.suffix(max(0, limit)).reversed()) }
    }

    package func recentRuns(of identifier: String, limit: Int) throws(Failure) -> [RunRecord] {
        // By bytes, as the other stores compare identifiers ("café" in NFC and NFD are two jobs).
        try read { t in Array(t.runRows.reversed().lazy.filter { $0.identifier.utf8.elementsEqual(identifier.utf8) }.prefix(max(0, limit))) }
    }

    package func recentRuns(limit: Int, before: Int64?) throws(Failure) -> [RunRecord] {
        guard let before else { return try recentRuns(limit: limit) }
        return try read { t in
            let end = t.runOrder.lowerBound(of: before)
            return Array(t.runRows[..<end].suffix(max(0, limit)).reversed())
        }
    }

    package func lastRunPerJob() throws(Failure) -> [RunRecord] {
        try read { t in
            t.latestRun.indices.compactMap { slot in t.latestRun[slot].map { (Key(t.names[slot]), $0) } }
                .sorted { $0.0 < $1.0 }.compactMap { t.run($0.1)?.withoutOutput }
        }
    }

    package func dailyCounters(days: Int?) throws(Failure) -> [DailyCounter] {
        try read { t in t.countersOfLatestDays(days) }
    }

    package func seedSpec(for identifier: String) throws(Failure) -> String? {
        try read { t in t.slot(of: identifier).flatMap { t.jobs[Int($0)]?.seedSpec } }
    }

    package func records(table: String) throws(Failure) -> [MachineRecord] {
        try read { $0.orderedRecords(table: table) }
    }

    /// Further calls throw `.closed` (an empty `apply` still does nothing); `snapshot()` still
    /// copies the committed state.
    package func close() {
        state.withLock { $0.closed = true }
    }

    /// Whether the run table's three parallel deques agree: ids, rows and end instants at the
    /// same index, ids ascending. For the parity tests, after every batch (refused ones too).
    var runTableIsConsistent: Bool {
        state.withLock { s in
            let t = s.tables
            guard t.runOrder.count == t.runRows.count, t.runRows.count == t.runEnds.count else { return false }
            return t.runRows.indices.allSatisfy { i in
                t.runOrder[i] == t.runRows[i].runID && t.runEnds[i] == Tables.endKey(t.runRows[i])
                    && (i == 0 || t.runOrder[i - 1] < t.runOrder[i])
            }
        }
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

private struct State: Sendable {
    var tables: InMemoryStore.Tables
    var commitFault: InMemoryStore.CommitFault?
    var onCommit: InMemoryStore.CommitObserver?
    var commits = 0
    var closed = false
    var journal: [InMemoryStore.Undo] = []

    func requireOpen() throws(InMemoryStore.Failure) {
        if closed { throw InMemoryStore.Failure(.closed, "the in-memory store was closed") }
    }
}

extension RunRecord {
    /// The record as the restore and the latest runs read it: without its kept output (the
    /// other stores do not read it there).
    var withoutOutput: RunRecord {
        guard !output.isEmpty else { return self }
        var record = self
        record.output = .none
        return record
    }
}
