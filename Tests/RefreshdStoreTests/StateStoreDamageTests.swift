import Foundation
import Testing
import RefreshdCore
import RefreshdStore

/// Files that are not, or no longer, a usable database: a clear error naming the file, and the
/// file left exactly as it was.
@Suite struct StateStoreDamageTests {
    private func expectRefused(_ directory: String, kind: StoreError.Kind) throws {
        let path = directory + "/state.sqlite"
        let before = try #require(fileBytes(path))
        for readOnly in [false, true, false] {
            let error = #expect(throws: StoreError.self) {
                try StateStore.open(directory: directory, readOnly: readOnly)
            }
            #expect(error?.kind == kind)
            let text = error?.description ?? ""
            #expect(text.contains(path))
            #expect(text.contains("will not delete or replace"))
            #expect(text.contains("Move it aside to start with empty state"))
        }
        #expect(fileBytes(path) == before)
    }

    @Test func garbageFileIsNotADatabaseAndStaysUntouched() throws {
        try withTemporaryDirectory { directory in
            var generator = SystemRandomNumberGenerator()
            let garbage = Data((0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) })
            #expect(FileManager.default.createFile(atPath: directory + "/state.sqlite", contents: garbage))
            try expectRefused(directory, kind: .notADatabase)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["state.sqlite"])
        }
    }

    @Test func damagedPageIsCorruptAndStaysUntouched() throws {
        try withTemporaryDirectory { directory in
            let store = try StateStore.open(directory: directory)
            // Enough rows to fill most of page 2, the root (and only) page of `pending`.
            try store.apply((1...40).map { .savePending(pendingRequest("job.\($0)", sequence: UInt64($0))) })
            store.close()  // checkpoints the WAL into the main file
            let path = directory + "/state.sqlite"
            let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
            let header = try #require(try handle.read(upToCount: 18))
            let pageSize = Int(header[16]) << 8 | Int(header[17])
            try handle.seek(toOffset: UInt64(pageSize + pageSize / 4))
            try handle.write(contentsOf: Data((0..<pageSize / 2).map { UInt8(truncatingIfNeeded: $0 &* 37) }))
            try handle.close()
            try expectRefused(directory, kind: .corrupt)
        }
    }

    @Test func truncatedDatabaseIsCorruptAndStaysUntouched() throws {
        try withTemporaryDirectory { directory in
            let store = try StateStore.open(directory: directory)
            try store.apply((1...300).map { .savePending(pendingRequest("job.\($0)", sequence: UInt64($0))) })
            try store.apply((1...300).map { .runStarted(runRecord(Int64($0), "job.\($0)")) })
            store.close()
            let path = directory + "/state.sqlite"
            let size = try #require(fileBytes(path)?.count)
            #expect(truncate(path, off_t(size / 2 + 100)) == 0)
            try expectRefused(directory, kind: .corrupt)
        }
    }
}
