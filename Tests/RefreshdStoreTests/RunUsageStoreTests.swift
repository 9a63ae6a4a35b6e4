import Foundation
import Testing
import RefreshdCore
@testable import RefreshdStore

/// Issue 35: a run's reason, CPU time and peak memory are kept with it (schema version 6), and a
/// state file written before them is migrated: its runs read as measured nothing.
@Suite struct RunUsageStoreTests {
    @Test func aRunsReasonAndUsageAreKept() throws {
        try withStore { store, _ in
            let run = runRecord(1, "a")
            let usage = RunUsage(cpuMicroseconds: 212_345, peakMemoryBytes: 33_554_432)
            try store.apply([.runStarted(run),
                             .runEnded(runID: 1, identifier: "a", ended: at(200_000), outcome: .crashed, exitStatus: nil,
                                       signal: 9, reason: "memory limit", usage: usage)])
            let kept = try #require(try store.recentRuns(limit: 1).first)
            #expect(kept.reason == "memory limit" && kept.usage == usage)
        }
    }

    @Test func aVersion5FileIsMigratedAndItsRunsMeasuredNothing() throws {
        try withTemporaryDirectory { temp in
            // A file as refreshd wrote it before version 6: the columns gone, an ended run in it.
            let old = try StateStore.open(directory: temp)
            try old.apply([.runStarted(runRecord(1, "a")), ended(runRecord(1, "a"), at: at(200_000), .success, exit: 0),
                           .runStarted(runRecord(2, "a"))])
            try old.connection.execute(script: """
                ALTER TABLE runs DROP COLUMN reason; ALTER TABLE runs DROP COLUMN cpu_usec;
                ALTER TABLE runs DROP COLUMN peak_memory; ALTER TABLE runs DROP COLUMN output;
                ALTER TABLE runs DROP COLUMN output_earlier; ALTER TABLE runs DROP COLUMN results; DROP INDEX instances_in_identifier_order; DROP INDEX job_state_failing; DROP INDEX runs_by_start; DROP INDEX runs_by_identifier_start; DROP INDEX pending_not_own; PRAGMA user_version = 5
                """, context: "test")
            old.close()
            let store = try StateStore.open(directory: temp)
            defer { store.close() }
            #expect(try Schema.userVersion(store.connection) == Schema.version)
            let usage = RunUsage(cpuMicroseconds: 5, peakMemoryBytes: nil)
            try store.apply([.runEnded(runID: 2, identifier: "a", ended: at(300_000), outcome: .success, exitStatus: 0,
                                       signal: nil, usage: usage)])
            let runs = try store.recentRuns(limit: 2)
            #expect(runs.map(\.runID) == [2, 1])
            #expect(runs[0].usage == usage && runs[1].usage == .none && runs[1].reason == nil)
        }
    }
}
