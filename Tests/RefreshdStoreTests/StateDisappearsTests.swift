import Foundation
import Testing
import RefreshdCore
@testable import RefreshdStore

/// State that disappears under a running writer is noticed, the directory lock does not hang on
/// a file name, and the files are private whatever their modes were.
@Suite struct StateDisappearsTests {
    /// The state file, its WAL or its shared-memory index deleted, or another file moved to the
    /// state file's name: the next commit throws `.vanished` naming the state file.
    @Test(arguments: ["state.sqlite", "state.sqlite-wal", "state.sqlite-shm", "replaced"])
    func aCommitAfterTheFilesVanishedThrows(_ victim: String) throws {
        try withStore { store, directory in
            try store.apply([.savePending(pendingRequest("a"))])
            if victim == "replaced" {
                let other = directory + "/other.sqlite"
                #expect(FileManager.default.createFile(atPath: other, contents: Data()))
                #expect(rename(other, directory + "/state.sqlite") == 0)
            } else {
                #expect(unlink(directory + "/" + victim) == 0)
            }
            let error = #expect(throws: StoreError.self) {
                try store.apply([.savePending(pendingRequest("b"))])
            }
            #expect(error?.kind == .vanished)
            #expect(error?.kind.name == "vanished")
            #expect(error?.description.contains("\(directory)/state.sqlite was deleted or replaced") == true)
            #expect(error?.description.contains("refreshd stops") == true)
        }
    }

    @Test func commitsGoOnWhileTheFilesStayInPlace() throws {
        try withStore { store, directory in
            for index in 0..<5 { try store.apply([.savePending(pendingRequest("a\(index)"))]) }
            let count = try reopened(directory) { try $0.pendingRequests().count }
            #expect(count == 5)
        }
    }

    /// The lock is on the directory: deleting the pid file lets no second holder in.
    @Test func deletingTheLockFileDoesNotFreeTheDirectory() throws {
        try withTemporaryDirectory { temp in
            let directory = temp + "/state"
            let lock = try StateDirectoryLock.acquire(directory: directory)
            defer { lock.release() }
            #expect(unlink(lock.path) == 0)
            let error = #expect(throws: StoreError.self) { try StateDirectoryLock.acquire(directory: directory) }
            #expect(error?.kind == .locked(holder: nil))
            #expect(error?.description.contains("another refreshd holds the state directory lock") == true)
        }
    }

    /// Modes widened by hand (or by an older refreshd under a loose umask) are tightened when the
    /// next daemon takes the directory, and each change is reported for the log.
    @Test func widerModesAreTightenedAtStart() throws {
        try withTemporaryDirectory { temp in
            let directory = temp + "/state"
            do {
                let lock = try StateDirectoryLock.acquire(directory: directory)
                let store = try StateStore.open(directory: directory)
                try store.apply([.savePending(pendingRequest("a"))])
                // A crashed daemon: the WAL and shm stay.
                let names = ["state.sqlite", "state.sqlite-wal", "state.sqlite-shm", "lock"]
                for name in names { #expect(chmod(directory + "/" + name, 0o644) == 0) }
                #expect(chmod(directory, 0o775) == 0)  // umask 002 with a per-user group
                store.close()
                lock.release()
            }
            for name in ["state.sqlite", "lock"] { #expect(chmod(directory + "/" + name, 0o644) == 0) }
            let lock = try StateDirectoryLock.acquire(directory: directory)
            defer { lock.release() }
            #expect(lock.adjustments.contains("state directory \(directory) was mode 0775, now 0700"))
            #expect(lock.adjustments.contains("\(directory)/state.sqlite was mode 0644, now 0600"))
            #expect(mode(directory) == 0o700)
            #expect(mode(directory + "/state.sqlite") == 0o600)
            #expect(mode(directory + "/lock") == 0o600)
        }
    }

    /// A directory every user may write to is not refreshd's to make private: refused.
    @Test func aDirectoryOthersMayWriteToIsRefused() throws {
        try withTemporaryDirectory { temp in
            #expect(chmod(temp, 0o1777) == 0)
            let error = #expect(throws: StoreError.self) { try StateDirectoryLock.acquire(directory: temp) }
            #expect(error?.kind == .inaccessible)
            #expect(error?.description.contains("every user may write to it (mode 01777)") == true)
            #expect(mode(temp) == 0o1777, "left as it was")
            let store = #expect(throws: StoreError.self) { try StateStore.open(directory: temp) }
            #expect(store?.kind == .inaccessible)
        }
    }

    /// A state file SQLite would make 0644 is made 0600 first; its WAL and shm follow its mode.
    @Test func theFilesAreMadePrivate() throws {
        try withStore { store, directory in
            try store.apply([.savePending(pendingRequest("a"))])
            #expect(mode(directory) == 0o700)
            for name in ["state.sqlite", "state.sqlite-wal", "state.sqlite-shm"] {
                #expect(mode(directory + "/" + name) == 0o600, "\(name)")
            }
        }
    }

    private func mode(_ path: String) -> mode_t {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & 0o7777 : 0
    }
}
