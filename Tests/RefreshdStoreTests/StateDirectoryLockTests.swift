import Foundation
import Testing
import RefreshdStore

@Suite struct StateDirectoryLockTests {
    @Test func secondAcquireFailsNamingTheHoldersPid() throws {
        try withTemporaryDirectory { temp in
            let directory = temp + "/state"
            let lock = try StateDirectoryLock.acquire(directory: directory)
            #expect(lock.isHeld)
            #expect(lock.path == directory + "/lock")
            let error = #expect(throws: StoreError.self) { try StateDirectoryLock.acquire(directory: directory) }
            let pid = getpid()
            #expect(error?.kind == .locked(holder: pid))
            #expect(error?.description.contains("another refreshd (pid \(pid))") == true)
            #expect(error?.description.contains(directory + "/lock") == true)
            lock.release()
            #expect(!lock.isHeld)
            let again = try StateDirectoryLock.acquire(directory: directory)
            again.release()
        }
    }

    @Test func lockIsReleasedOnDeinit() throws {
        try withTemporaryDirectory { temp in
            do {
                let lock = try StateDirectoryLock.acquire(directory: temp)
                #expect(lock.isHeld)
            }
            let next = try StateDirectoryLock.acquire(directory: temp)
            #expect(next.isHeld)
            let text = try String(contentsOfFile: temp + "/lock", encoding: .utf8)
            #expect(text == "\(getpid())\n")
        }
    }

    @Test func acquireCreatesAPrivateDirectoryAndLockFile() throws {
        try withTemporaryDirectory { temp in
            let directory = temp + "/a/b"
            let lock = try StateDirectoryLock.acquire(directory: directory)
            defer { lock.release() }
            let manager = FileManager.default
            let directoryMode = try manager.attributesOfItem(atPath: directory)[.posixPermissions] as? Int
            let fileMode = try manager.attributesOfItem(atPath: lock.path)[.posixPermissions] as? Int
            #expect(directoryMode.map { $0 & 0o077 } == 0)
            #expect(fileMode.map { $0 & 0o077 } == 0)
            // The store opens beside the lock.
            let store = try StateStore.open(directory: directory)
            store.close()
        }
    }

    @Test func aFileInPlaceOfTheDirectoryIsAWrongTypeError() throws {
        try withTemporaryDirectory { temp in
            let path = temp + "/state"
            #expect(FileManager.default.createFile(atPath: path, contents: Data("x".utf8)))
            let error = #expect(throws: StoreError.self) { try StateDirectoryLock.acquire(directory: path) }
            #expect(error?.kind == .wrongType)
            #expect(error?.description.contains("\(path) cannot be used: it is a regular file, not a directory") == true)
            #expect(fileBytes(path) == Data("x".utf8))
        }
    }
}
