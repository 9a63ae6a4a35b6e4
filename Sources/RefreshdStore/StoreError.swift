import CSQLite

/// Why the state store could not open, read or write refreshd's durable state.
///
/// Every error names the file it concerns. Errors about an existing file that refreshd cannot use
/// (not a database, damaged, unreadable, written by a newer refreshd) say so plainly and tell the
/// operator what to do: refreshd never deletes or replaces a state file on its own, because that
/// file holds committed requests that must not be lost silently.
package struct StoreError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, for callers that react differently (exit codes, `refreshd status`).
    package enum Kind: Sendable, Hashable {
        /// Read-only open of a state directory that has no state file (or an empty one), or that
        /// does not exist.
        case noState
        /// The file is not an SQLite database (`SQLITE_NOTADB`).
        case notADatabase
        /// The file is an SQLite database but damaged (`SQLITE_CORRUPT`, or `quick_check` failed).
        case corrupt
        /// The file or its directory cannot be read or written (permissions, missing directory).
        case inaccessible
        /// The file is an SQLite database with tables but no refreshd schema version: it belongs
        /// to something else, and refreshd will not add its tables to it.
        case foreignDatabase
        /// The file's schema version (`PRAGMA user_version`) is newer than this refreshd knows.
        case newerSchema(found: Int, known: Int)
        /// Another process holds the state directory's lock; `holder` is the pid it wrote, if any.
        case locked(holder: Int32?)
        /// A state change does not fit the stored state (for example, the end of an unknown run).
        /// The whole batch was rolled back.
        case invalidChange
        /// The store was used after `close()`.
        case closed
        /// Any other SQLite error; `sqliteCode` and `detail` say which.
        case sqlite
        /// An operating-system call failed (creating the directory, the lock file).
        case system
        /// The path is not the kind of file expected: a state directory that is a regular file
        /// (or has one as a parent), a state file that is a directory.
        case wrongType
        /// The state file (or its `-wal` or `-shm`) was deleted, moved or replaced while the
        /// store had it open: commits would go into a file no restart reads back.
        case vanished

        /// A stable name for programs (`refreshd status --json`): `no-state`, `not-a-database`,
        /// `corrupt`, `inaccessible`, `foreign-database`, `newer-schema`, `locked`,
        /// `invalid-change`, `closed`, `sqlite`, `system`, `wrong-type`, `vanished`.
        package var name: String {
            switch self {
            case .noState: "no-state"
            case .notADatabase: "not-a-database"
            case .corrupt: "corrupt"
            case .inaccessible: "inaccessible"
            case .foreignDatabase: "foreign-database"
            case .newerSchema: "newer-schema"
            case .locked: "locked"
            case .invalidChange: "invalid-change"
            case .closed: "closed"
            case .sqlite: "sqlite"
            case .system: "system"
            case .wrongType: "wrong-type"
            case .vanished: "vanished"
            }
        }
    }

    package var kind: Kind
    /// The file (or directory) concerned.
    package var path: String
    /// What refreshd was doing, e.g. `applying state changes`.
    package var context: String
    /// SQLite's message (`sqlite3_errmsg` or `sqlite3_errstr`), the OS error, or what was found.
    package var detail: String
    /// SQLite's extended result code, when SQLite reported the error.
    package var sqliteCode: Int32?

    package init(kind: Kind, path: String, context: String, detail: String, sqliteCode: Int32? = nil) {
        self.kind = kind
        self.path = path
        self.context = context
        self.detail = detail
        self.sqliteCode = sqliteCode
    }

    /// An error from an SQLite result code, classified by its primary code.
    static func sqlite(_ code: Int32, message: String, path: String, context: String) -> StoreError {
        let kind: Kind
        switch code & 0xFF {
        case SQLITE_NOTADB: kind = .notADatabase
        case SQLITE_CORRUPT: kind = .corrupt
        case SQLITE_CANTOPEN, SQLITE_PERM, SQLITE_AUTH: kind = .inaccessible
        default: kind = .sqlite
        }
        return StoreError(kind: kind, path: path, context: context, detail: message, sqliteCode: code)
    }

    /// What an operator can do about an existing file refreshd will not use.
    private var moveAside: String {
        "refreshd will not delete or replace it. Move it aside to start with empty state "
            + "(e.g. `mv \(path) \(path).bad`, and likewise \(path)-wal and \(path)-shm if present), "
            + "or restore it from a backup."
    }

    /// "state file" for the state file, "state directory" for anything else (the directory or
    /// one of its parents).
    private var noun: String {
        path == StateDirectory.databaseName || path.hasSuffix("/" + StateDirectory.databaseName)
            ? "state file" : "state directory"
    }

    package var description: String {
        let code = sqliteCode.map { " (SQLite error \($0))" } ?? ""
        switch kind {
        case .noState:
            return "no refreshd state at \(path): \(detail). The daemon has not run with this "
                + "state directory yet (or uses another one: check --state)."
        case .notADatabase:
            return "refreshd state file \(path) is not an SQLite database (\(detail))\(code) "
                + "while \(context). " + moveAside
        case .corrupt:
            return "refreshd state file \(path) is damaged (\(detail))\(code) while \(context). "
                + moveAside
        case .inaccessible:
            return "refreshd \(noun) \(path) cannot be used: \(detail)\(code) while \(context). "
                + "Check the ownership and permissions of \(path) and of the directories above it; "
                + "refreshd will not replace it."
        case .foreignDatabase:
            return "\(path) is an SQLite database but not a refreshd state file (\(detail)). "
                + moveAside
        case let .newerSchema(found, known):
            return "refreshd state file \(path) has schema version \(found), newer than version "
                + "\(known) that this refreshd understands: it was written by a newer refreshd. "
                + "Run that version instead; " + moveAside
        case let .locked(holder):
            let who = holder.map { "another refreshd (pid \($0))" } ?? "another refreshd"
            return "\(who) holds the state directory lock \(path); two daemons cannot share "
                + "a state directory. Stop it first, or give this one another --state."
        case .invalidChange:
            return "refreshd state \(path): cannot apply state change: \(detail); "
                + "no change of the batch was written."
        case .closed:
            return "refreshd state \(path): the store is closed (\(context))."
        case .sqlite:
            return "refreshd state \(path): \(detail)\(code) while \(context)."
        case .system:
            return "refreshd state \(path): \(detail) while \(context)."
        case .wrongType:
            return "refreshd \(noun) \(path) cannot be used: \(detail) (while \(context)). "
                + "refreshd will not delete or replace it: give --state a directory of its own, "
                + "or move \(path) aside."
        case .vanished:
            return "refreshd state file \(path) was deleted or replaced while refreshd was running "
                + "(\(detail), found while \(context)): what was committed since is in no file a restart "
                + "reads back, so nothing acts on it and refreshd stops. Restore \(path) from a backup, or "
                + "restart refreshd to begin from what is at \(path) now."
        }
    }
}
