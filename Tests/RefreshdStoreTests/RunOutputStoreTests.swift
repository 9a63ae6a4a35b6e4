import Foundation
import Testing
import RefreshdCore
@testable import RefreshdStore

/// Issue 33: what is kept of a run's output lives in its row (schema version 7): a page of runs
/// reads it, the latest run of each job and the restore do not, the prune takes it with the
/// run, and a file written before version 7 is migrated (its runs kept nothing).
@Suite struct RunOutputStoreTests {
    static let output = RunOutput(lines: ["", "caf\u{E9}", "a\0b", "fatal: disk full"], earlier: 51,
                                  results: [#"{"note": "half done"}"#])

    @Test func aRunsOutputIsKeptWithItAndPrunedWithIt() throws {
        try withStore { store, _ in
            try store.apply([.runStarted(runRecord(1, "a")), ended(runRecord(1, "a"), at: at(200_000), .failure, exit: 2),
                             .runOutput(runID: 1, output: Self.output),
                             .runStarted(runRecord(2, "a")), ended(runRecord(2, "a"), at: at(300_000), .success, exit: 0),
                             .runOutput(runID: 99, output: Self.output)])  // no such run: nothing
            let runs = try store.recentRuns(limit: 2)
            #expect(runs.map(\.output) == [.none, Self.output])
            #expect(try store.recentRuns(limit: 1, before: 2).first?.output == Self.output)
            #expect(try store.recentRuns(of: "a", limit: 5).last?.output == Self.output)
            #expect(try store.recentRuns(limit: 1, before: 2, withOutput: false).first?.output == RunOutput.none)
            #expect(try store.withKeptOutput(store.recentRuns(limit: 2, before: nil, withOutput: false)).map(\.output)
                    == [.none, Self.output])
            #expect(try store.lastRunPerJob().map(\.output) == [.none])
            try store.apply([.pruneRuns(endedBefore: at(250_000))])
            #expect(try store.recentRuns(limit: 5).map(\.runID) == [2])
        }
    }

    @Test func aVersion6FileIsMigratedAndItsRunsKeptNothing() throws {
        try withTemporaryDirectory { temp in
            let old = try StateStore.open(directory: temp)
            try old.apply([.runStarted(runRecord(1, "a")), ended(runRecord(1, "a"), at: at(200_000), .failure, exit: 2)])
            try old.connection.execute(script: """
                ALTER TABLE runs DROP COLUMN output; ALTER TABLE runs DROP COLUMN output_earlier;
                ALTER TABLE runs DROP COLUMN results; DROP INDEX instances_in_identifier_order; DROP INDEX job_state_failing; DROP INDEX runs_by_start; DROP INDEX runs_by_identifier_start; DROP INDEX pending_not_own; PRAGMA user_version = 6
                """, context: "test")
            old.close()
            let store = try StateStore.open(directory: temp)
            defer { store.close() }
            #expect(try Schema.userVersion(store.connection) == Schema.version)
            #expect(try store.recentRuns(limit: 1).first?.output == RunOutput.none)
            try store.apply([.runOutput(runID: 1, output: Self.output)])
            #expect(try store.recentRuns(limit: 1).first?.output == Self.output)
        }
    }
}
