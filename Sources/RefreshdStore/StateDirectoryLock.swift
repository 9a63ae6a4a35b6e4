#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive lock on a state directory, so two daemons never share one.
///
/// `acquire` takes a non-blocking `flock(LOCK_EX)` on an open descriptor of the state
/// DIRECTORY itself (creating it with mode 0700 if missing), not on a file in it: deleting a
/// lock file would let a second daemon lock a new file of the same name and start on the same
/// state, while the directory cannot be deleted from under its state file. The holder's pid is
/// written into `<directory>/lock` (mode 0600) for the error the next daemon reports; that file
/// is only a note, and a missing one costs only the pid in that error. The kernel drops the lock
/// when the process dies, even on kill -9, so there is no stale lock to clean up. The
/// descriptor is close-on-exec: a job that outlives the daemon does not keep the directory
/// locked.
///
/// Acquiring also makes the directory private (`StateDirectory.secure`): `adjustments` lists
/// the modes it tightened, for the log.
///
/// Released by `release()` or on deinit. flock locks belong to the open file description, so a
/// second `acquire` in the same process also fails while the first is held.
package final class StateDirectoryLock: @unchecked Sendable {
    /// The pid file's path (`<directory>/lock`), named in the error a second daemon reports.
    package let path: String
    /// The state directory, whose descriptor carries the lock.
    package let directory: String
    /// Modes `acquire` tightened ("… was 0644, now 0600"), for the daemon's log.
    package let adjustments: [String]
    private var descriptor: Int32

    private init(path: String, directory: String, adjustments: [String], descriptor: Int32) {
        self.path = path
        self.directory = directory
        self.adjustments = adjustments
        self.descriptor = descriptor
    }

    deinit { release() }

    /// Whether the lock is still held by this object.
    package var isHeld: Bool { descriptor >= 0 }

    /// Takes the lock or throws at once: `.locked(holder:)` naming the holder's pid when another
    /// process (or another `StateDirectoryLock`) holds it, `.system` when the directory cannot
    /// be made or opened, `.inaccessible` when it cannot be made private.
    package static func acquire(directory: String) throws(StoreError) -> StateDirectoryLock {
        try StateDirectory.create(directory)
        let path = StateDirectory.path(directory, StateDirectory.lockName)
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw StateDirectory.systemError(directory, "opening the state directory to lock it") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            close(fd)
            if code == EWOULDBLOCK {
                let holder = readPID(path)
                throw StoreError(kind: .locked(holder: holder), path: path,
                                 context: "locking the state directory",
                                 detail: holder.map { "held by pid \($0)" } ?? "held by another process")
            }
            errno = code
            throw StateDirectory.systemError(directory, "locking the state directory")
        }
        // Only the lock holder changes modes or writes the pid.
        let adjustments: [String]
        do {
            adjustments = try StateDirectory.secure(directory)
            try writePID(path)
        } catch {
            close(fd)
            throw error
        }
        return StateDirectoryLock(path: path, directory: directory, adjustments: adjustments, descriptor: fd)
    }

    /// Releases the lock (idempotent). The file and the pid in it stay; the next holder
    /// overwrites the pid.
    package func release() {
        guard descriptor >= 0 else { return }
        flock(descriptor, LOCK_UN)
        close(descriptor)
        descriptor = -1
    }

    /// Replaces the pid file's content with `"<pid>\n"` (mode 0600, not following a link).
    private static func writePID(_ path: String) throws(StoreError) {
        let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StateDirectory.systemError(path, "writing the lock file") }
        defer { close(fd) }
        guard fchmod(fd, 0o600) == 0, ftruncate(fd, 0) == 0 else {
            throw StateDirectory.systemError(path, "writing the lock file")
        }
        let text = "\(getpid())\n"
        _ = text.utf8CString.withUnsafeBufferPointer { buffer in
            pwrite(fd, buffer.baseAddress, buffer.count - 1, 0)
        }
    }

    /// The pid written by the holder, if the pid file holds one.
    private static func readPID(_ path: String) -> Int32? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        let text = String(decoding: buffer[0..<count], as: UTF8.self)
        return Int32(text.prefix { !$0.isWhitespace })
    }
}
