import CSQLite
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import RefreshdCore

/// refreshd's durable state: pending requests, run history, failure streaks, seed specs and
/// per-day counters, in one SQLite file `state.sqlite` inside the state directory.
///
/// The daemon opens it read-write and commits every event's `StateChange`s in one transaction
/// (`apply`) before acting on them. The file is in WAL mode with `synchronous=FULL`, so every
/// commit is on disk (the WAL is fsynced) when `apply` returns: a committed request survives
/// kill -9 and power loss. `refreshd status` opens it read-only while the daemon runs.
///
/// Opening checks the file (`PRAGMA quick_check`, schema version) and throws a `StoreError` that
/// names the file and says what to do when it cannot be used; it never deletes or recreates an
/// existing file.
///
/// A writer checks, after every commit, that the files it writes are still the ones at the
/// paths (`checkFilesInPlace`): `state.sqlite`, `-wal` or `-shm` deleted or replaced while the
/// daemon runs would otherwise take every later commit into an unlinked file, lost at the next
/// start. Then `apply` throws `.vanished`, and the runtime stops without acting on the batch.
///
/// Files are private: the directory 0700, `state.sqlite` created 0600 before SQLite opens it
/// (SQLite gives `-wal` and `-shm` the state file's mode), wider modes tightened at open.
///
/// Threading: one connection, not thread-safe by itself. It is `@unchecked Sendable` so that the
/// daemon can hand it to the one thread or actor that uses it; the caller must serialise all
/// calls (never two at once, and never from two threads without a happens-before edge).
package final class StateStore: @unchecked Sendable {
    /// The state file's path.
    package let path: String
    /// Whether the store was opened with `readOnly: true` (then `apply` and the setters throw).
    package let isReadOnly: Bool
    let connection: SQLiteConnection
    /// Device and inode of `-wal` and `-shm` as opened (read-write only), checked after commits.
    private var companions: [(path: String, device: UInt64, inode: UInt64)] = []

    /// How long a statement waits for another connection's lock before failing with SQLITE_BUSY.
    static let busyTimeoutMilliseconds: Int32 = 5000

    private init(connection: SQLiteConnection, readOnly: Bool) {
        self.path = connection.path
        self.isReadOnly = readOnly
        self.connection = connection
    }

    /// Opens (and, unless `readOnly`, creates and migrates) `directory/state.sqlite`.
    ///
    /// Read-write: creates the directory (mode 0700) if missing, sets WAL mode,
    /// `synchronous=FULL`, `foreign_keys=ON`, and migrates the schema. Read-only: throws
    /// `.noState` if the file does not exist, and works while the daemon holds the file open.
    /// Both check the file first and throw for a file that is not a database, is damaged,
    /// cannot be read, or has a newer schema version.
    package static func open(directory: String, readOnly: Bool = false) throws(StoreError) -> StateStore {
        let path = StateDirectory.path(directory, StateDirectory.databaseName)
        if readOnly {
            // Names what is wrong with the directory itself first (missing, a file, no access).
            try StateDirectory.checkReadable(directory)
            guard StateDirectory.exists(path) else {
                throw StoreError(kind: .noState, path: path, context: "opening the state file",
                                 detail: "the file does not exist")
            }
        } else {
            try StateDirectory.create(directory)
            try StateDirectory.secure(directory)
            try StateDirectory.createPrivateFile(path)
        }
        if StateDirectory.exists(path) {
            try StateDirectory.checkAccess(path, readOnly: readOnly)
        }
        let flags = readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        let connection = try SQLiteConnection(path: path, flags: flags)
        let store = StateStore(connection: connection, readOnly: readOnly)
        do {
            try store.prepareFile()
        } catch {
            connection.close()
            throw error
        }
        return store
    }

    /// Checks the file, then configures the connection and (read-write) migrates the schema.
    private func prepareFile() throws(StoreError) {
        connection.setBusyTimeout(milliseconds: Self.busyTimeoutMilliseconds)
        // The first read of the header: SQLITE_NOTADB / SQLITE_CORRUPT surface here.
        let version = try Schema.userVersion(connection)
        if !isReadOnly && connection.isReadOnly {
            throw StoreError(kind: .inaccessible, path: path, context: "opening the state file",
                             detail: "SQLite could open it only read-only (write-protected file)")
        }
        if version > Schema.version {
            throw StoreError(kind: .newerSchema(found: version, known: Schema.version), path: path,
                             context: "opening the state file", detail: "user_version \(version)")
        }
        try quickCheck()
        if version == 0 {
            let tables = try connection.query(
                "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name LIMIT 5",
                context: "reading the schema") { row in row.text(0) }
            if !tables.isEmpty {
                throw StoreError(kind: .foreignDatabase, path: path, context: "opening the state file",
                                 detail: "it has tables \(tables.joined(separator: ", ")) and no refreshd "
                                     + "schema version")
            }
            if isReadOnly {
                throw StoreError(kind: .noState, path: path, context: "opening the state file",
                                 detail: "the file has no refreshd tables yet")
            }
        }
        if isReadOnly { return }
        let mode = try connection.query("PRAGMA journal_mode = WAL", context: "enabling WAL mode") { row in
            row.text(0)
        }.first
        guard mode?.lowercased() == "wal" else {
            throw StoreError(kind: .sqlite, path: path, context: "enabling WAL mode",
                             detail: "SQLite kept journal mode \(mode ?? "unknown") instead of WAL")
        }
        // In WAL mode, FULL fsyncs the WAL on every commit: durable on power loss, not only kill -9.
        try connection.execute(script: "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON",
                               context: "configuring the connection")
        try Schema.migrate(connection, from: version)
        // The WAL and the shared-memory index exist from here until the connection closes.
        companions = StateDirectory.companionSuffixes.compactMap { suffix in
            var info = stat()
            guard stat(path + suffix, &info) == 0 else { return nil }
            return (path + suffix, UInt64(info.st_dev), UInt64(info.st_ino))
        }
    }

    /// Throws `.vanished` when the state file SQLite writes is no longer the one at `path`
    /// (SQLite's own `SQLITE_FCNTL_HAS_MOVED`: deleted, or another inode at the path), or when
    /// `-wal` or `-shm` is not the file opened. A few `stat` calls: cheap beside a commit's fsync.
    func checkFilesInPlace(_ context: String) throws(StoreError) {
        guard !isReadOnly, connection.isOpen else { return }
        if connection.hasMoved {
            throw StoreError(kind: .vanished, path: path, context: context,
                             detail: StateDirectory.exists(path) ? "another file is at its path now"
                                 : "it no longer exists")
        }
        for companion in companions {
            var info = stat()
            if stat(companion.path, &info) != 0 {
                throw StoreError(kind: .vanished, path: path, context: context,
                                 detail: "\(companion.path) no longer exists")
            }
            if UInt64(info.st_dev) != companion.device || UInt64(info.st_ino) != companion.inode {
                throw StoreError(kind: .vanished, path: path, context: context,
                                 detail: "another file is at \(companion.path) now")
            }
        }
    }

    /// `PRAGMA quick_check`: O(size) structural check of every page, without index comparisons.
    private func quickCheck() throws(StoreError) {
        let context = "checking the state file (PRAGMA quick_check)"
        let findings = try connection.query("PRAGMA quick_check(5)", context: context) { row in row.text(0) }
        guard findings != ["ok"] else { return }
        let lines = findings.flatMap { $0.split(whereSeparator: \.isNewline) }.filter { !$0.hasPrefix("***") }
        let detail = lines.isEmpty ? "returned nothing" : lines.joined(separator: "; ")
        throw StoreError(kind: .corrupt, path: path, context: context, detail: "quick_check: " + detail)
    }

    /// Closes the connection (the last connection to close checkpoints and removes the WAL).
    /// Later calls throw `.closed`. Also done on deinit.
    package func close() {
        connection.close()
    }

    /// Throws unless the store may write.
    func requireWritable(_ context: String) throws(StoreError) {
        guard !isReadOnly else {
            throw StoreError(kind: .sqlite, path: path, context: context,
                             detail: "the store was opened read-only")
        }
    }
}
