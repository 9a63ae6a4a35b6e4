import Foundation
import Testing
import RefreshdCore
@testable import RefreshdStore

/// Opening the file: creation, WAL, concurrent readers, crash visibility, and refusing files
/// refreshd cannot use without ever changing them.
@Suite struct StateStoreFileTests {
    @Test func openCreatesThePrivateDirectoryAndAWALDatabase() throws {
        try withTemporaryDirectory { temp in
            let directory = temp + "/nested/state"
            let store = try StateStore.open(directory: directory)
            defer { store.close() }
            #expect(store.path == directory + "/state.sqlite")
            let attributes = try FileManager.default.attributesOfItem(atPath: directory)
            #expect((attributes[.posixPermissions] as? Int).map { $0 & 0o077 } == 0)
            let mode = try store.connection.query("PRAGMA journal_mode", context: "test") { $0.text(0) }
            #expect(mode == ["wal"])
            let sync = try store.connection.query("PRAGMA synchronous", context: "test") { $0.int(0) }
            #expect(sync == [2])  // FULL
            let keys = try store.connection.query("PRAGMA foreign_keys", context: "test") { $0.int(0) }
            #expect(keys == [1])
            #expect(try Schema.userVersion(store.connection) == Schema.version)
        }
    }

    @Test func committedDataIsVisibleToAStoreOpenedWithoutClosingTheFirst() throws {
        try withStore { crashed, directory in
            // `crashed` is never closed before the second open, as after kill -9.
            let run = runRecord(1, "a")
            try crashed.apply([.savePending(pendingRequest("a")), .runStarted(run),
                               .failureStreak(identifier: "a", count: 2)])
            let successor = try StateStore.open(directory: directory)
            defer { successor.close() }
            let state = try successor.restoredState()
            #expect(state.pending == [pendingRequest("a")])
            #expect(state.unfinishedRuns == [run])
            #expect(state.failureStreaks == ["a": 2])
            #expect(state.nextRunID == 2)
        }
    }

    @Test func readOnlyOpenWorksWhileAWriterHoldsTheFile() throws {
        try withStore { writer, directory in
            try writer.apply([.savePending(pendingRequest("a"))])
            let reader = try StateStore.open(directory: directory, readOnly: true)
            defer { reader.close() }
            #expect(reader.isReadOnly)
            #expect(try reader.pendingRequests().map(\.identifier) == ["a"])
            try writer.apply([.savePending(pendingRequest("b", sequence: 2))])
            #expect(try reader.pendingRequests().map(\.identifier) == ["a", "b"])
            try writer.apply([.runStarted(runRecord(1, "a"))])
            #expect(try reader.recentRuns(limit: 1).map(\.runID) == [1])
        }
    }

    @Test func readOnlyOpenWorksWithoutAWriterAndLeavesTheFileAlone() throws {
        try withTemporaryDirectory { directory in
            let writer = try StateStore.open(directory: directory)
            try writer.apply([.savePending(pendingRequest("a"))])
            writer.close()
            let before = fileBytes(directory + "/state.sqlite")
            let reader = try StateStore.open(directory: directory, readOnly: true)
            #expect(try reader.pendingRequests().map(\.identifier) == ["a"])
            reader.close()
            #expect(fileBytes(directory + "/state.sqlite") == before)
        }
    }

    @Test func readOnlyOpenOfAMissingFileIsNoStateAndCreatesNothing() throws {
        try withTemporaryDirectory { temp in
            let directory = temp + "/state"
            let error = #expect(throws: StoreError.self) {
                try StateStore.open(directory: directory, readOnly: true)
            }
            #expect(error?.kind == .noState)
            // The directory itself is missing: that is what the message names.
            #expect(error?.description.contains(directory) == true)
            #expect(!FileManager.default.fileExists(atPath: directory))
        }
    }

    @Test func newerSchemaVersionIsRefused() throws {
        try withTemporaryDirectory { temp in
            let store = try StateStore.open(directory: temp)
            try store.connection.execute(script: "PRAGMA user_version = 99", context: "test")
            store.close()
            let before = fileBytes(temp + "/state.sqlite")
            for readOnly in [false, true] {
                let error = #expect(throws: StoreError.self) {
                    try StateStore.open(directory: temp, readOnly: readOnly)
                }
                #expect(error?.kind == .newerSchema(found: 99, known: Schema.version))
                #expect(error?.description.contains("newer") == true)
            }
            #expect(fileBytes(temp + "/state.sqlite") == before)
        }
    }

    @Test func databaseOfSomethingElseIsRefusedAndLeftAlone() throws {
        try withTemporaryDirectory { temp in
            let store = try StateStore.open(directory: temp)
            try store.connection.execute(script: """
                CREATE TABLE photos (id INTEGER PRIMARY KEY); PRAGMA user_version = 0
                """, context: "test")
            store.close()
            let before = fileBytes(temp + "/state.sqlite")
            for readOnly in [false, true] {
                let error = #expect(throws: StoreError.self) {
                    try StateStore.open(directory: temp, readOnly: readOnly)
                }
                #expect(error?.kind == .foreignDatabase)
                #expect(error?.description.contains("not a refreshd state file") == true)
            }
            #expect(fileBytes(temp + "/state.sqlite") == before)
        }
    }

    @Test func emptyFileBecomesAStateFile() throws {
        try withTemporaryDirectory { temp in
            #expect(FileManager.default.createFile(atPath: temp + "/state.sqlite", contents: Data()))
            let reader = #expect(throws: StoreError.self) { try StateStore.open(directory: temp, readOnly: true) }
            #expect(reader?.kind == .noState)
            let store = try StateStore.open(directory: temp)
            defer { store.close() }
            #expect(try store.restoredState().nextRunID == 1)
        }
    }

    @Test(.enabled(if: getuid() != 0, "root bypasses file permissions"))
    func unreadableFileIsReportedAsSuch() throws {
        try withTemporaryDirectory { temp in
            try StateStore.open(directory: temp).close()
            let path = temp + "/state.sqlite"
            chmod(path, 0)
            defer { chmod(path, 0o600) }
            let error = #expect(throws: StoreError.self) { try StateStore.open(directory: temp) }
            #expect(error?.kind == .inaccessible)
            #expect(error?.description.contains(path) == true)
        }
    }
}
