#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive lock on a state directory, so two daemons never share one.
///
/// `acquire` takes a non-blocking `flock(LOCK_EX)` on `<directory>/lock` (creating the directory
/// with mode 0700 and the file with mode 0600 if missing) and writes the holder's pid into the
/// file, for the error the next daemon reports. The kernel drops the lock when the process dies,
/// even on kill -9, so there is no stale lock to clean up. The descriptor is close-on-exec: a job
/// that outlives the daemon does not keep the directory locked. The lock file is never deleted
/// (deleting it would let two processes lock two different files of the same name).
///
/// Released by `release()` or on deinit. flock locks belong to the open file description, so a
/// second `acquire` in the same process also fails while the first is held.
public final class StateDirectoryLock: @unchecked Sendable {
    /// The lock file's path.
    public let path: String
    private var descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit { release() }

    /// Whether the lock is still held by this object.
    public var isHeld: Bool { descriptor >= 0 }

    /// Takes the lock or throws at once: `.locked(holder:)` naming the holder's pid when another
    /// process (or another `StateDirectoryLock`) holds it, `.system` when the file cannot be made.
    public static func acquire(directory: String) throws(StoreError) -> StateDirectoryLock {
        try StateDirectory.create(directory)
        let path = StateDirectory.path(directory, StateDirectory.lockName)
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StateDirectory.systemError(path, "opening the lock file") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            if code == EWOULDBLOCK {
                let holder = readPID(fd)
                close(fd)
                throw StoreError(kind: .locked(holder: holder), path: path,
                                 context: "locking the state directory",
                                 detail: holder.map { "held by pid \($0)" } ?? "held by another process")
            }
            let error = StateDirectory.systemError(path, "locking the state directory")
            close(fd)
            throw error
        }
        writePID(fd)
        return StateDirectoryLock(path: path, descriptor: fd)
    }

    /// Releases the lock (idempotent). The file and the pid in it stay; the next holder
    /// overwrites the pid.
    public func release() {
        guard descriptor >= 0 else { return }
        flock(descriptor, LOCK_UN)
        close(descriptor)
        descriptor = -1
    }

    /// Replaces the file's content with `"<pid>\n"`; best effort (the lock matters, not the text).
    private static func writePID(_ fd: Int32) {
        let text = "\(getpid())\n"
        guard ftruncate(fd, 0) == 0 else { return }
        _ = text.utf8CString.withUnsafeBufferPointer { buffer in
            pwrite(fd, buffer.baseAddress, buffer.count - 1, 0)
        }
    }

    /// The pid written by the holder, if the file holds one.
    private static func readPID(_ fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        let text = String(decoding: buffer[0..<count], as: UTF8.self)
        return Int32(text.prefix { !$0.isWhitespace })
    }
}
