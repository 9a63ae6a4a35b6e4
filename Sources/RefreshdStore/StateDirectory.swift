#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The few file-system calls the store and the lock make directly, without Foundation.
///
/// The state directory is mode 0700 and every file refreshd makes in it (`state.sqlite`, its
/// `-wal` and `-shm`, `lock`) mode 0600, whatever the umask: the state holds job output
/// tails, results and activity content, which are nobody else's business. An existing
/// directory or file with wider modes is tightened at start (`secure`), and the change is
/// reported for the log; a directory every user may write to (`/tmp`) is refused, since
/// refreshd cannot make it private without taking it from them.
///
/// Errors say what is really wrong with a path (it does not exist, it is a file where a
/// directory is expected or the reverse, permission is denied), never SQLite's generic
/// "unable to open database file" or "disk I/O error" for a problem the file system can name.
package enum StateDirectory {
    /// The state file's name inside the state directory.
    static let databaseName = "state.sqlite"
    /// The lock file's name inside the state directory.
    static let lockName = "lock"

    /// `directory/name`, without doubling a trailing slash.
    static func path(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    /// The state file's companions SQLite makes beside it in WAL mode.
    static let companionSuffixes = ["-wal", "-shm"]

    /// Creates `directory` and any missing parents with mode 0700 (set with `chmod`, so the
    /// umask cannot widen or narrow it); an existing directory is kept as it is (`secure`
    /// checks and tightens its mode).
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
                if mkdir(prefix, 0o700) == 0 {
                    // The umask may have taken bits away (0o277 would leave no write access).
                    if chmod(prefix, 0o700) != 0 { throw systemError(prefix, "creating the state directory") }
                } else if errno != EEXIST {
                    throw systemError(prefix, "creating the state directory")
                }
                guard isDirectory(prefix) else {
                    throw StoreError(kind: .wrongType, path: prefix, context: "creating the state directory",
                                     detail: "it is \(typeName(prefix)), not a directory")
                }
            }
            prefix += "/"
        }
    }

    /// Makes an existing state directory and the files refreshd keeps in it private: the
    /// directory to mode 0700 (group and other bits removed), `state.sqlite`, `-wal`, `-shm` and
    /// `lock` to 0600. Returns one note per mode it changed, for the log ("… was 0644, now
    /// 0600"). Throws for a directory every user may write to, or with the sticky bit (`/tmp`:
    /// a shared directory, not refreshd's to take), and when a mode cannot be changed (a file
    /// of another user). A group-writable directory (umask 002 with per-user groups) is
    /// tightened like a readable one. Symbolic links are not followed.
    @discardableResult
    static func secure(_ directory: String) throws(StoreError) -> [String] {
        let context = "making the state directory private"
        var notes: [String] = []
        var info = stat()
        guard stat(directory, &info) == 0 else { throw systemError(directory, context) }
        let mode = info.st_mode & 0o7777
        if mode & (0o002 | S_ISVTX) != 0 {
            throw StoreError(kind: .inaccessible, path: directory, context: context,
                             detail: "every user may write to it (mode \(octal(mode))); refreshd keeps its state "
                                 + "in a private directory (0700): give --state a directory of its own, or "
                                 + "`chmod 700 \(directory)` if it is refreshd's")
        }
        if mode & 0o077 != 0 {
            guard chmod(directory, mode & ~0o077) == 0 else { throw systemError(directory, context) }
            notes.append("state directory \(directory) was mode \(octal(mode)), now \(octal(mode & ~0o077))")
        }
        let database = path(directory, databaseName)
        for file in [database] + companionSuffixes.map({ database + $0 }) + [path(directory, lockName)] {
            guard lstat(file, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            let fileMode = info.st_mode & 0o7777
            guard fileMode & 0o7177 != 0 else { continue }
            guard chmod(file, 0o600) == 0 else { throw systemError(file, context) }
            notes.append("\(file) was mode \(octal(fileMode)), now 0600")
        }
        return notes
    }

    /// Creates an empty `state.sqlite` with mode 0600 if there is none, so that SQLite (which
    /// creates files 0644 less the umask, and gives `-wal` and `-shm` the state file's mode)
    /// never makes a file other users can read. `O_EXCL | O_NOFOLLOW`: an existing file or
    /// link is left to the checks that follow.
    static func createPrivateFile(_ file: String) throws(StoreError) {
        let fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if fd < 0 {
            if errno == EEXIST { return }
            throw systemError(file, "creating the state file")
        }
        defer { close(fd) }
        if fchmod(fd, 0o600) != 0 { throw systemError(file, "creating the state file") }
    }

    /// `0644`, `01777`: a mode as `ls -l` users and chmod read it.
    static func octal(_ mode: mode_t) -> String {
        let digits = String(mode, radix: 8)
        return digits.count >= 4 ? "0" + digits : String(repeating: "0", count: 4 - digits.count) + digits
    }

    /// Whether something exists at `path` (without following a final symlink's absence), or may
    /// exist: only "no such file" counts as absent. A path that cannot be looked up for another
    /// reason (a parent without search permission, a parent that is a file) counts as present,
    /// so that `checkAccess` reports that reason instead of "the file does not exist".
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 || errno != ENOENT
    }

    /// What is at `path`, in words: `a directory`, `a regular file`, `a symbolic link`, ...;
    /// `nothing` if it cannot be looked up. Follows symbolic links.
    static func typeName(_ path: String) -> String {
        var info = stat()
        guard stat(path, &info) == 0 else { return "nothing" }
        switch info.st_mode & S_IFMT {
        case S_IFDIR: return "a directory"
        case S_IFREG: return "a regular file"
        case S_IFLNK: return "a symbolic link"
        case S_IFIFO: return "a named pipe"
        case S_IFSOCK: return "a socket"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        default: return "not a regular file"
        }
    }

    /// Checks, without opening or creating anything, that `directory` is a readable state
    /// directory holding a readable state file, as `refreshd status` needs it, and throws an
    /// error that says what is wrong otherwise:
    ///
    /// - `.noState`: the directory does not exist, or has no `state.sqlite`;
    /// - `.wrongType`: the directory (or a parent of it) is not a directory, or `state.sqlite`
    ///   is not a regular file;
    /// - `.inaccessible`: permission denied (or another OS error), naming the path concerned.
    ///
    /// What is inside the file (a database, damaged, foreign) is `StateStore.open`'s to check.
    package static func checkReadable(_ directory: String) throws(StoreError) {
        let context = "reading the state directory"
        guard !directory.isEmpty else {
            throw StoreError(kind: .system, path: directory, context: context,
                             detail: "the state directory path is empty")
        }
        var info = stat()
        if stat(directory, &info) != 0 {
            let code = errno
            switch code {
            case ENOENT:
                throw StoreError(kind: .noState, path: directory, context: context,
                                 detail: "the state directory does not exist")
            case ENOTDIR:
                let parent = firstNonDirectory(above: directory) ?? directory
                throw StoreError(kind: .wrongType, path: parent, context: context,
                                 detail: "it is \(typeName(parent)), not a directory, so the state directory "
                                     + "\(directory) cannot be inside it")
            default:
                errno = code
                throw systemError(directory, context, kind: .inaccessible)
            }
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw StoreError(kind: .wrongType, path: directory, context: context,
                             detail: "it is \(typeName(directory)), not a directory")
        }
        if access(directory, R_OK | X_OK) != 0 {
            throw systemError(directory, context, kind: .inaccessible)
        }
        let file = path(directory, databaseName)
        if stat(file, &info) != 0 {
            if errno == ENOENT {
                throw StoreError(kind: .noState, path: file, context: "opening the state file",
                                 detail: "the state directory has no \(databaseName)")
            }
            throw systemError(file, "opening the state file", kind: .inaccessible)
        }
        try checkAccess(file, readOnly: true)
    }

    /// The first prefix of `path` (from the root down) that exists and is not a directory.
    static func firstNonDirectory(above path: String) -> String? {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += component
            var info = stat()
            if stat(prefix, &info) == 0 && (info.st_mode & S_IFMT) != S_IFDIR { return prefix }
            prefix += "/"
        }
        return nil
    }

    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// Checks that an existing file can be read (and written, unless `readOnly`), so that a
    /// permission problem is reported as such rather than as SQLite's generic "unable to open".
    /// Also checks that it is a regular file (a directory named `state.sqlite` would otherwise
    /// surface as SQLite's "disk I/O error").
    static func checkAccess(_ path: String, readOnly: Bool) throws(StoreError) {
        var info = stat()
        if stat(path, &info) != 0 {
            throw systemError(path, "opening the state file", kind: .inaccessible)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw StoreError(kind: .wrongType, path: path, context: "opening the state file",
                             detail: "it is \(typeName(path)), not a regular file; expected the SQLite state file")
        }
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
