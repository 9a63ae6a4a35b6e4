import Testing
import RefreshdCore
@testable import RefreshdStore

/// A batch is one transaction: a failing change leaves nothing of the batch behind.
@Suite struct StateStoreRollbackTests {
    /// Everything a batch could have written, to compare before and after.
    private func snapshot(_ store: StateStore) throws -> String {
        let state = try store.restoredState()
        return "\(state.pending) \(state.unfinishedRuns) \(state.failureStreaks.sorted { $0.key < $1.key }) "
            + "\(state.nextRunID) \(try store.recentRuns(limit: 100)) \(try store.dailyCounters(days: nil))"
    }

    @Test func endOfAnUnknownRunRollsBackTheWholeBatch() throws {
        try withStore { store, directory in
            let kept = runRecord(1, "kept")
            try store.apply([.savePending(pendingRequest("kept")), .runStarted(kept)])
            let before = try snapshot(store)
            let error = #expect(throws: StoreError.self) {
                try store.apply([
                    .savePending(pendingRequest("new", sequence: 2)),
                    .deletePending(identifier: "kept"),
                    .runStarted(runRecord(2, "new")),
                    ended(kept, at: at(200_000), .success),
                    .runEnded(runID: 99, identifier: "ghost", ended: at(200_000), outcome: .failure,
                              exitStatus: 1, signal: nil),
                    .failureStreak(identifier: "ghost", count: 1),
                ])
            }
            #expect(error?.kind == .invalidChange)
            #expect(error?.description.contains("99") == true)
            #expect(try snapshot(store) == before)
            #expect(try reopened(directory) { try snapshot($0) } == before)
            // The connection is usable after the rollback.
            try store.apply([ended(kept, at: at(300_000), .success)])
            #expect(try store.restoredState().unfinishedRuns.isEmpty)
        }
    }

    @Test func endingARunTwiceOrUnderAnotherIdentifierIsRefused() throws {
        try withStore { store, _ in
            let run = runRecord(1, "a")
            try store.apply([.runStarted(run)])
            let mismatch = #expect(throws: StoreError.self) {
                try store.apply([.runEnded(runID: 1, identifier: "b", ended: at(1), outcome: .success,
                                           exitStatus: 0, signal: nil)])
            }
            #expect(mismatch?.kind == .invalidChange)
            try store.apply([ended(run, at: at(200_000), .success, exit: 0)])
            let twice = #expect(throws: StoreError.self) {
                try store.apply([ended(run, at: at(300_000), .failure, exit: 1)])
            }
            #expect(twice?.kind == .invalidChange)
            // The first end stands: the refused second one changed nothing.
            #expect(try store.recentRuns(limit: 1).first?.outcome == .success)
        }
    }

    @Test func duplicateRunIDIsAnSQLiteErrorAndRollsBack() throws {
        try withStore { store, _ in
            try store.apply([.runStarted(runRecord(1, "a"))])
            let before = try snapshot(store)
            let error = #expect(throws: StoreError.self) {
                try store.apply([.savePending(pendingRequest("b")), .runStarted(runRecord(1, "b"))])
            }
            #expect(error?.kind == .sqlite)
            #expect(error?.sqliteCode != nil)
            #expect(error?.description.contains("state.sqlite") == true)
            #expect(try snapshot(store) == before)
        }
    }

    @Test func readOnlyStoreRefusesWritesButAcceptsAnEmptyBatch() throws {
        try withStore { store, directory in
            try store.apply([.savePending(pendingRequest("a"))])
            let reader = try StateStore.open(directory: directory, readOnly: true)
            defer { reader.close() }
            try reader.apply([])
            #expect(throws: StoreError.self) { try reader.apply([.deletePending(identifier: "a")]) }
            #expect(throws: StoreError.self) { try reader.apply([.seedSpec(identifier: "a", spec: "x")]) }
            #expect(try store.pendingRequests().count == 1)
        }
    }

    @Test func closedStoreThrowsClosed() throws {
        try withStore { store, _ in
            store.close()
            let error = #expect(throws: StoreError.self) { try store.pendingRequests() }
            #expect(error?.kind == .closed)
        }
    }
}
