import Glibc

/// Writes a file so that a reader sees the old complete file or the new complete one: the bytes
/// go to a temporary file beside it, are flushed (`fsync`), renamed over the target, and the
/// directory is flushed so the rename survives a power cut.
///
/// Used for everything refreshd shows to readers in the shared container (widget entries, live
/// activities, staged playlists). Other users may write into that container, so nothing a path
/// names is trusted below its root: every folder is opened with `openat(O_NOFOLLOW|O_DIRECTORY)`
/// from the one above (a folder that is a symlink is refused, naming it), the temporary file has
/// an unpredictable name and is created with `O_EXCL|O_NOFOLLOW` (a planted file or symlink at
/// that name makes the write fail, never redirects it), and the rename and the flush go through
/// the folder's descriptor, so a folder swapped after it was opened changes nothing.
package enum AtomicFile {
    /// Why a write failed: the path and the system's reason.
    package struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        package var path: String
        package var reason: String
        /// The path (or a folder on it) does not exist.
        package var isMissing: Bool
        package var description: String { "\(path): \(reason)" }

        package init(path: String, reason: String, isMissing: Bool = false) {
            self.path = path
            self.reason = reason
            self.isMissing = isMissing
        }
    }

    /// A folder opened under a trusted root without following symlinks: its descriptor and, for
    /// messages, the path it was reached by. Closed when the value goes away.
    package final class Directory: @unchecked Sendable {
        package let descriptor: Int32
        package let path: String

        init(descriptor: Int32, path: String) {
            self.descriptor = descriptor
            self.path = path
        }

        deinit { close(descriptor) }

        /// The path of an entry of this folder, for messages.
        package func path(of name: String) -> String { path.hasSuffix("/") ? path + name : path + "/" + name }

        /// The sub-folder `name`, created when `create` and missing; a symlink is refused.
        package func subdirectory(_ name: String, create: Bool) throws(Failure) -> Directory {
            guard AtomicFile.isPlainName(name) else {
                throw Failure(path: path(of: name), reason: "not a plain folder name")
            }
            var fd = openat(descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            if fd < 0, errno == ENOENT, create {
                if mkdirat(descriptor, name, 0o755) != 0, errno != EEXIST {
                    throw AtomicFile.failure(path(of: name), "cannot create directory")
                }
                fd = openat(descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            }
            guard fd >= 0 else {
                let code = errno
                var status = stat()
                if fstatat(descriptor, name, &status, AT_SYMLINK_NOFOLLOW) == 0, (status.st_mode & S_IFMT) == S_IFLNK {
                    throw Failure(path: path(of: name), reason: "is a symlink; refusing to write through it "
                        + "(a folder of the shared container must be a real folder)")
                }
                errno = code
                throw AtomicFile.failure(path(of: name), code == ENOTDIR ? "is not a folder" : "cannot open folder")
            }
            return Directory(descriptor: fd, path: path(of: name))
        }

        /// Creates a new empty file with an unpredictable name starting with `prefix`, with
        /// `O_EXCL|O_NOFOLLOW`: returns its descriptor (open for writing) and its name.
        package func createTemporary(prefix: String) throws(Failure) -> (descriptor: Int32, name: String) {
            for _ in 0..<8 {
                let name = "\(prefix).\(AtomicFile.randomSuffix()).tmp"
                let fd = openat(descriptor, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
                if fd >= 0 { return (fd, name) }
                if errno != EEXIST { throw AtomicFile.failure(path(of: name), "cannot create") }
            }
            throw Failure(path: path(of: prefix), reason: "cannot create a temporary file: every name tried exists")
        }

        /// Renames `temporary` over `name` in this folder and flushes the folder.
        package func commit(_ temporary: String, as name: String) throws(Failure) {
            guard renameat(descriptor, temporary, descriptor, name) == 0 else {
                let error = AtomicFile.failure(path(of: name), "cannot rename into place")
                unlinkat(descriptor, temporary, 0)
                throw error
            }
            sync()
        }

        /// Writes `name` atomically in this folder. `gate`, asked after the data is on disk and
        /// right before the rename, may still refuse the write (a cluster shard's lease lapsed).
        package func write(_ contents: some Collection<UInt8>, to name: String, gate: (() -> Bool)? = nil) throws(Failure) {
            guard AtomicFile.isPlainName(name) else { throw Failure(path: path(of: name), reason: "not a plain file name") }
            let (fd, temporary) = try createTemporary(prefix: "." + name)
            let bytes = Array(contents)
            var written = 0
            var ok = true
            while ok, written < bytes.count {
                let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, bytes.count - written) }
                if n > 0 { written += n } else if n < 0, errno == EINTR { continue } else { ok = false }
            }
            let code = errno
            if ok, fsync(fd) != 0 { ok = false }
            close(fd)
            guard ok else {
                unlinkat(descriptor, temporary, 0)
                throw Failure(path: path(of: name), reason: "write failed: \(String(cString: strerror(code)))")
            }
            if let gate, !gate() {
                unlinkat(descriptor, temporary, 0)
                throw Failure(path: path(of: name), reason: AtomicFile.gateClosed)
            }
            try commit(temporary, as: name)
        }

        /// Removes the file `name` (never what a symlink points to; no error if it is missing).
        package func remove(_ name: String) throws(Failure) {
            if unlinkat(descriptor, name, 0) != 0, errno != ENOENT { throw AtomicFile.failure(path(of: name), "cannot remove") }
            sync()
        }

        /// Removes the empty folder `name`; false when it is not empty (or missing).
        @discardableResult
        package func removeFolder(_ name: String) -> Bool {
            guard unlinkat(descriptor, name, AT_REMOVEDIR) == 0 else { return false }
            sync()
            return true
        }

        /// Flushes the folder, so renames and removals in it survive a power cut.
        package func sync() { _ = fsync(descriptor) }
    }

    /// Opens the folder `root` (trusted: the configured container, created if missing) and then
    /// each component of `relative` below it without following symlinks.
    package static func directory(root: String, relative: String, create: Bool) throws(Failure) -> Directory {
        if create { try makeDirectories(root) }
        let fd = open(root.isEmpty ? "." : root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw failure(root, "cannot open folder") }
        var directory = Directory(descriptor: fd, path: root)
        for part in relative.split(separator: "/") {
            directory = try directory.subdirectory(String(part), create: create)
        }
        return directory
    }

    /// Replaces `relative` under the trusted folder `root` with `contents` atomically; missing
    /// folders below `root` are created, symlinked ones refused.
    package static func write(_ contents: some Collection<UInt8>, root: String, relative: String,
                              gate: (() -> Bool)? = nil) throws(Failure) {
        let (folder, name) = split(relative)
        try directory(root: root, relative: folder, create: true).write(contents, to: name, gate: gate)
    }

    /// Why a gated write was not made (`write(_:root:relative:gate:)`).
    package static let gateClosed = "not written: this node no longer leads the shard (its lease lapsed)"

    /// Removes `relative` under `root` (no error if it or its folder does not exist); `gate`
    /// may refuse it as it may a write.
    package static func remove(root: String, relative: String, gate: (() -> Bool)? = nil) throws(Failure) {
        if let gate, !gate() { throw Failure(path: root + "/" + relative, reason: gateClosed) }
        let (folder, name) = split(relative)
        let directory: Directory
        do {
            directory = try self.directory(root: root, relative: folder, create: false)
        } catch where error.isMissing {
            return
        }
        try directory.remove(name)
    }

    /// Replaces `path` with `contents` atomically, trusting the folder that holds it.
    package static func write(_ contents: some Collection<UInt8>, to path: String) throws(Failure) {
        try write(contents, root: parent(of: path), relative: basename(of: path))
    }

    /// Writes text as UTF-8.
    package static func write(_ text: String, to path: String) throws(Failure) {
        try write(Array(text.utf8), to: path)
    }

    /// Removes `path` (no error if it does not exist) and flushes its directory.
    package static func remove(_ path: String) throws(Failure) {
        try remove(root: parent(of: path), relative: basename(of: path))
    }

    /// `mkdir -p`.
    package static func makeDirectories(_ path: String) throws(Failure) {
        var built = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            built += "/\(part)"
            if mkdir(built, 0o755) != 0, errno != EEXIST { throw failure(built, "cannot create directory") }
        }
    }

    /// One path component: not empty, `.` or `..`, no `/` or NUL.
    package static func isPlainName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && !name.utf8.contains(UInt8(ascii: "/")) && !name.utf8.contains(0)
    }

    /// 16 hex digits from the system's random source (`SystemRandomNumberGenerator`, i.e.
    /// `getrandom` on Linux): unpredictable to other users.
    package static func randomSuffix() -> String {
        let value = UInt64.random(in: 0...UInt64.max)
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    static func split(_ relative: String) -> (folder: String, name: String) {
        guard let slash = relative.lastIndex(of: "/") else { return ("", relative) }
        return (String(relative[..<slash]), String(relative[relative.index(after: slash)...]))
    }

    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    static func basename(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }

    static func failure(_ path: String, _ what: String) -> Failure {
        Failure(path: path, reason: "\(what): \(String(cString: strerror(errno)))", isMissing: errno == ENOENT)
    }
}
