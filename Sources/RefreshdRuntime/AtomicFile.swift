import Glibc

/// Writes a file so that a reader sees the old complete file or the new complete one: the bytes
/// go to a temporary file beside it, are flushed (`fsync`), renamed over the target, and the
/// directory is flushed so the rename survives a power cut.
///
/// Used for everything refreshd shows to readers in the shared container (widget entries,
/// live activities). Missing parent directories are created.
public enum AtomicFile {
    /// Why a write failed: the path and the system's reason.
    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "\(path): \(reason)" }
    }

    /// Replaces `path` with `contents` atomically.
    public static func write(_ contents: some Collection<UInt8>, to path: String) throws(Failure) {
        let directory = parent(of: path)
        try makeDirectories(directory)
        let temporary = "\(directory)/.\(basename(of: path)).\(getpid()).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw failure(temporary, "cannot create") }
        var ok = true
        let bytes = Array(contents)
        var written = 0
        while ok, written < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, bytes.count - written) }
            if n > 0 { written += n } else if n < 0, errno == EINTR { continue } else { ok = false }
        }
        let code = errno
        if ok, fsync(fd) != 0 { ok = false }
        close(fd)
        guard ok else {
            unlink(temporary)
            throw Failure(path: path, reason: "write failed: \(String(cString: strerror(code)))")
        }
        guard rename(temporary, path) == 0 else {
            let error = failure(path, "cannot rename into place")
            unlink(temporary)
            throw error
        }
        syncDirectory(directory)
    }

    /// Writes text as UTF-8.
    public static func write(_ text: String, to path: String) throws(Failure) {
        try write(Array(text.utf8), to: path)
    }

    /// Removes `path` (no error if it does not exist) and flushes its directory.
    public static func remove(_ path: String) throws(Failure) {
        if unlink(path) != 0, errno != ENOENT { throw failure(path, "cannot remove") }
        syncDirectory(parent(of: path))
    }

    /// `mkdir -p`.
    public static func makeDirectories(_ path: String) throws(Failure) {
        var built = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            built += "/\(part)"
            if mkdir(built, 0o755) != 0, errno != EEXIST { throw failure(built, "cannot create directory") }
        }
    }

    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    static func basename(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }

    private static func syncDirectory(_ directory: String) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }

    private static func failure(_ path: String, _ what: String) -> Failure {
        Failure(path: path, reason: "\(what): \(String(cString: strerror(errno)))")
    }
}
