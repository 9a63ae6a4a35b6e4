import Foundation
import Testing
@testable import RefreshdStore

/// Paths that cannot hold refreshd state are reported for what they are, not as "the file does
/// not exist" or SQLite's "disk I/O error".
@Suite struct StateDirectoryTests {
    @Test func checkReadableAcceptsAStateDirectoryWithAStateFile() throws {
        try withStore { _, directory in
            try StateDirectory.checkReadable(directory)
        }
    }

    @Test func checkReadableNamesWhatIsWrong() throws {
        try withTemporaryDirectory { temp in
            let fm = FileManager.default
            let file = temp + "/file"
            #expect(fm.createFile(atPath: file, contents: Data("x".utf8)))
            try fm.createDirectory(atPath: temp + "/empty", withIntermediateDirectories: false)
            try fm.createDirectory(atPath: temp + "/dir/state.sqlite", withIntermediateDirectories: true)
            let cases: [(directory: String, kind: StoreError.Kind, path: String, detail: String)] = [
                (temp + "/missing", .noState, temp + "/missing", "the state directory does not exist"),
                (temp + "/missing/deeper", .noState, temp + "/missing/deeper", "the state directory does not exist"),
                (file, .wrongType, file, "it is a regular file, not a directory"),
                (file + "/state", .wrongType, file, "it is a regular file, not a directory, so the state directory"),
                (temp + "/empty", .noState, temp + "/empty/state.sqlite", "the state directory has no state.sqlite"),
                (temp + "/dir", .wrongType, temp + "/dir/state.sqlite", "it is a directory, not a regular file"),
                ("", .system, "", "the state directory path is empty"),
            ]
            for c in cases {
                let error = #expect(throws: StoreError.self, "\(c.directory)") {
                    try StateDirectory.checkReadable(c.directory)
                }
                #expect(error?.kind == c.kind, "\(c.directory)")
                #expect(error?.path == c.path, "\(c.directory)")
                #expect(error?.detail.hasPrefix(c.detail) == true, "\(c.directory): \(error?.detail ?? "")")
                #expect(c.path.isEmpty || error?.description.contains(c.path) == true)
            }
            #expect(!fm.fileExists(atPath: temp + "/missing"))  // nothing is created
        }
    }

    /// Regression: a directory named state.sqlite surfaced as SQLite's "disk I/O error", for the
    /// daemon (read-write) as for `status` (read-only).
    @Test func aDirectoryNamedStateSqliteIsRefusedAsSuch() throws {
        try withTemporaryDirectory { temp in
            try FileManager.default.createDirectory(atPath: temp + "/state.sqlite", withIntermediateDirectories: false)
            for readOnly in [true, false] {
                let error = #expect(throws: StoreError.self) {
                    try StateStore.open(directory: temp, readOnly: readOnly)
                }
                #expect(error?.kind == .wrongType)
                #expect(error?.path == temp + "/state.sqlite")
                #expect(error?.description.contains("it is a directory, not a regular file") == true)
                #expect(error?.description.contains("I/O") == false)
            }
            #expect(StateDirectory.isDirectory(temp + "/state.sqlite"))  // left alone
        }
    }

    @Test func aStateDirectoryThatIsAFileIsRefusedAsSuch() throws {
        try withTemporaryDirectory { temp in
            let file = temp + "/state"
            #expect(FileManager.default.createFile(atPath: file, contents: Data("keep".utf8)))
            let writer = #expect(throws: StoreError.self) { try StateStore.open(directory: file) }
            #expect(writer?.kind == .wrongType)
            #expect(writer?.path == file)
            #expect(writer?.description.contains("state directory \(file) cannot be used: it is a regular file") == true)
            // Read-only: not "the file does not exist".
            let reader = #expect(throws: StoreError.self) { try StateStore.open(directory: file, readOnly: true) }
            #expect(reader?.kind != .noState)
            #expect(reader?.description.contains("does not exist") == false)
            #expect(fileBytes(file) == Data("keep".utf8))
        }
    }

    @Test func existsCountsOnlyNoSuchFileAsAbsent() throws {
        try withTemporaryDirectory { temp in
            let file = temp + "/file"
            #expect(FileManager.default.createFile(atPath: file, contents: Data()))
            #expect(StateDirectory.exists(file))
            #expect(!StateDirectory.exists(temp + "/missing"))
            #expect(StateDirectory.exists(file + "/state.sqlite"))  // ENOTDIR: present, checkAccess says why
        }
    }

    @Test func kindNamesAreDistinct() {
        let kinds: [StoreError.Kind] = [.noState, .notADatabase, .corrupt, .inaccessible, .foreignDatabase,
                                        .newerSchema(found: 9, known: 1), .locked(holder: nil), .invalidChange,
                                        .closed, .sqlite, .system, .wrongType]
        #expect(Set(kinds.map(\.name)).count == kinds.count)
        #expect(StoreError.Kind.wrongType.name == "wrong-type")
        #expect(StoreError.Kind.noState.name == "no-state")
    }
}
