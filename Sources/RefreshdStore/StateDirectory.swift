#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The few file-system calls the store and the lock make directly, without Foundation.
///
/// The state directory is created with mode 0700: it holds what jobs ran and when, which is
/// nobody else's business, and the lock file that keeps two daemons apart.
enum StateDirectory {
    /// The state file's name inside the state directory.
    static let databaseName = "state.sqlite"
    /// The lock file's name inside the state directory.
    static let lockName = "lock"

    /// `directory/name`, without doubling a trailing slash.
    static func path(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    /// Creates `directory` and any missing parents with mode 0700; an existing directory is kept
    /// as it is (its mode is not changed).
    static func create(_ directory: String) throws(StoreError) {
        guard !directory.isEmpty else {
            throw StoreError(kind: .system, path: directory, context: "creating the state directory",
                             detail: "the state directory path is empty")
        }
        if isDirectory(directory) { return }
        var prefix = directory.hasPrefix("/") ? "/" : ""
        for component in directory.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += component
            if !isDirectory(prefix) {
                if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
                    throw systemError(prefix, "creating the state directory")
                }
                guard isDirectory(prefix) else {
                    throw StoreError(kind: .system, path: prefix, context: "creating the state directory",
                                     detail: "it exists and is not a directory")
                }
            }
            prefix += "/"
        }
    }

    /// Whether something exists at `path` (without following a final symlink's absence).
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// Checks that an existing file can be read (and written, unless `readOnly`), so that a
    /// permission problem is reported as such rather than as SQLite's generic "unable to open".
    static func checkAccess(_ path: String, readOnly: Bool) throws(StoreError) {
        if access(path, R_OK) != 0 {
            throw systemError(path, "opening the state file for reading", kind: .inaccessible)
        }
        if !readOnly && access(path, W_OK) != 0 {
            throw systemError(path, "opening the state file for writing", kind: .inaccessible)
        }
    }

    /// The current `errno` as an error about `path`.
    static func systemError(_ path: String, _ context: String, kind: StoreError.Kind = .system) -> StoreError {
        let code = errno
        return StoreError(kind: kind, path: path, context: context,
                          detail: String(cString: strerror(code)) + " (errno \(code))")
    }
}
