import Testing
import RefreshdCore
@testable import RefreshdStore

/// Each StateChange written by `apply` and read back by a fresh store on the same file.
@Suite struct StateStoreApplyTests {
    @Test func emptyStoreRestoresNothing() throws {
        try withStore { store, _ in
            let state = try store.restoredState()
            #expect(state.pending.isEmpty)
            #expect(state.unfinishedRuns.isEmpty)
            #expect(state.failureStreaks.isEmpty)
            #expect(state.nextRunID == 1)
            try store.apply([])  // no transaction, no error
        }
    }

    @Test func savePendingRoundTripsEveryField() throws {
        try withStore { store, directory in
            let a = pendingRequest("a.refresh", earliest: at(5_000), sequence: 7)
            let b = pendingRequest("b.maint", earliest: at(9_000), sequence: 1 << 40, kind: .processing,
                                   origin: .retry, power: true, network: true)
            try store.apply([.savePending(b), .savePending(a)])
            store.close()
            let restored = try reopened(directory) { try $0.restoredState() }
            #expect(restored.pending == [a, b])
        }
    }

    @Test func savePendingReplacesTheIdentifiersRequest() throws {
        try withStore { store, directory in
            try store.apply([.savePending(pendingRequest("a", earliest: at(5_000), sequence: 1))])
            let replacement = pendingRequest("a", earliest: at(90_000), sequence: 2, origin: .resubmit)
            try store.apply([.savePending(replacement)])
            #expect(try reopened(directory) { try $0.pendingRequests() } == [replacement])
        }
    }

    @Test func deletePendingRemovesOnlyThatIdentifier() throws {
        try withStore { store, directory in
            let a = pendingRequest("a", sequence: 1), b = pendingRequest("b", sequence: 2)
            try store.apply([.savePending(a), .savePending(b)])
            try store.apply([.deletePending(identifier: "a"), .deletePending(identifier: "unknown")])
            #expect(try reopened(directory) { try $0.restoredState() }.pending == [b])
        }
    }

    @Test func runStartedIsRestoredAsUnfinished() throws {
        try withStore { store, directory in
            let run = runRecord(7, "a.refresh", kind: .processing, attempt: 3)
            try store.apply([.deletePending(identifier: "a.refresh"), .runStarted(run)])
            let restored = try reopened(directory) { try $0.restoredState() }
            #expect(restored.unfinishedRuns == [run])
            #expect(restored.nextRunID == 8)
        }
    }

    @Test func runEndedStoresTheEndAndIsNoLongerUnfinished() throws {
        try withStore { store, directory in
            let first = runRecord(1, "a"), second = runRecord(2, "b")
            try store.apply([.runStarted(first), .runStarted(second)])
            try store.apply([ended(first, at: at(130_000), .crashed, signal: 9)])
            try reopened(directory) { again throws in
                let restored = try again.restoredState()
                #expect(restored.unfinishedRuns == [second])
                #expect(restored.nextRunID == 3)
                var expected = first
                expected.ended = at(130_000)
                expected.outcome = .crashed
                expected.signal = 9
                #expect(try again.recentRuns(limit: 10) == [second, expected])
            }
        }
    }

    @Test func failureStreakRoundTripsAndZeroIsNotRestored() throws {
        try withStore { store, directory in
            try store.apply([.failureStreak(identifier: "a", count: 3), .failureStreak(identifier: "b", count: 1)])
            try store.apply([.failureStreak(identifier: "b", count: 0)])
            #expect(try reopened(directory) { try $0.restoredState() }.failureStreaks == ["a": 3])
        }
    }

    @Test func recordProcessIsRestoredWithTheUnfinishedRun() throws {
        try withStore { store, directory in
            var run = runRecord(4, "cmd.job")
            try store.apply([.runStarted(run)])
            try store.apply([.processStarted(runID: 4, processGroup: 31_337, startTicks: UInt64.max - 5)])
            run.processGroup = 31_337
            run.processStartTicks = UInt64.max - 5
            #expect(try reopened(directory) { try $0.restoredState() }.unfinishedRuns == [run])
            try store.apply([.processStarted(runID: 4, processGroup: 12, startTicks: nil)])
            run.processGroup = 12
            run.processStartTicks = nil
            #expect(try store.restoredState().unfinishedRuns == [run])
        }
    }

    @Test func recordProcessOfAnUnknownRunIsAnInvalidChange() throws {
        try withStore { store, _ in
            let error = #expect(throws: StoreError.self) {
                try store.apply([.processStarted(runID: 99, processGroup: 1, startTicks: nil)])
            }
            #expect(error?.kind == .invalidChange)
        }
    }

    @Test func seedSpecIsKeptApartFromTheFailureStreak() throws {
        try withStore { store, directory in
            #expect(try store.seedSpec(for: "a") == nil)
            try store.apply([.failureStreak(identifier: "a", count: 2)])
            try store.apply([.seedSpec(identifier: "a", spec: "every 1h")])
            try store.apply([.seedSpec(identifier: "a", spec: "every 2h")])
            try store.apply([.seedSpec(identifier: "b", spec: "daily")])
            try store.apply([.failureStreak(identifier: "a", count: 5)])
            try reopened(directory) { again throws in
                #expect(try again.seedSpec(for: "a") == "every 2h")
                #expect(try again.seedSpec(for: "b") == "daily")
                #expect(try again.restoredState().failureStreaks == ["a": 5])
            }
        }
    }
}
