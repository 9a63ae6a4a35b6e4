import CSQLite

/// A value bound to a statement parameter.
enum SQLValue {
    case integer(Int64)
    case text(String)
    case null

    static func int(_ value: Int) -> SQLValue { .integer(Int64(value)) }
    static func bool(_ value: Bool) -> SQLValue { .integer(value ? 1 : 0) }
    static func optional(_ value: Int64?) -> SQLValue { value.map { .integer($0) } ?? .null }
    static func optional(_ value: Int32?) -> SQLValue { value.map { .integer(Int64($0)) } ?? .null }
    static func optional(_ value: String?) -> SQLValue { value.map { .text($0) } ?? .null }
}

/// The current row of a stepped statement; valid only inside the `query` callback.
struct Row {
    let statement: OpaquePointer

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }
    func int(_ column: Int32) -> Int { Int(truncatingIfNeeded: int64(column)) }
    func bool(_ column: Int32) -> Bool { int64(column) != 0 }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }
    func optionalInt64(_ column: Int32) -> Int64? { isNull(column) ? nil : int64(column) }
    func optionalInt32(_ column: Int32) -> Int32? {
        isNull(column) ? nil : Int32(truncatingIfNeeded: int64(column))
    }

    func text(_ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(statement, column) else { return "" }
        let count = Int(sqlite3_column_bytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    func optionalText(_ column: Int32) -> String? { isNull(column) ? nil : text(column) }
}

/// One SQLite connection with a cache of prepared statements, keyed by their SQL text.
///
/// The hot path (`StateStore.apply`) runs the same handful of statements for every event; caching
/// them avoids re-parsing SQL on each commit. Statements are reset and unbound after each use, so
/// none keeps a read transaction open.
final class SQLiteConnection {
    let path: String
    private var handle: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]

    init(path: String, flags: Int32) throws(StoreError) {
        self.path = path
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_close_v2(db)
            throw StoreError.sqlite(rc, message: message, path: path, context: "opening the state file")
        }
        sqlite3_extended_result_codes(db, 1)
        handle = db
    }

    deinit { close() }

    /// Finalizes the cached statements and closes the connection; later calls throw `.closed`.
    func close() {
        for statement in statements.values { sqlite3_finalize(statement) }
        statements.removeAll()
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    var isOpen: Bool { handle != nil }

    /// Whether the connection is inside an explicit transaction.
    var inTransaction: Bool { handle.map { sqlite3_get_autocommit($0) == 0 } ?? false }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { handle.map { Int(sqlite3_changes($0)) } ?? 0 }

    func setBusyTimeout(milliseconds: Int32) {
        if let handle { sqlite3_busy_timeout(handle, milliseconds) }
    }

    /// Whether the main database file SQLite has open was deleted, or another file is at its
    /// path now (`SQLITE_FCNTL_HAS_MOVED`); false when that cannot be asked.
    var hasMoved: Bool {
        guard let handle else { return false }
        var moved: Int32 = 0
        return sqlite3_file_control(handle, "main", SQLITE_FCNTL_HAS_MOVED, &moved) == SQLITE_OK && moved != 0
    }

    /// Whether SQLite opened the main database read-only (for example, a write-protected file).
    var isReadOnly: Bool { handle.map { sqlite3_db_readonly($0, "main") == 1 } ?? true }

    /// An error for result code `rc`, with the connection's current message.
    func error(_ rc: Int32, _ context: String) -> StoreError {
        let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
        return StoreError.sqlite(rc, message: message, path: path, context: context)
    }

    /// Runs a statement to completion and returns the number of rows it changed.
    @discardableResult
    func run(_ sql: String, _ values: [SQLValue] = [], context: String) throws(StoreError) -> Int {
        _ = try query(sql, values, context: context) { _ in () }
        return changes
    }

    /// Runs a statement and maps each result row.
    func query<T>(_ sql: String, _ values: [SQLValue] = [], context: String,
                  _ read: (Row) throws(StoreError) -> T) throws(StoreError) -> [T] {
        let statement = try prepared(sql, context: context)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let rc: Int32
            switch value {
            case let .integer(number): rc = sqlite3_bind_int64(statement, index, number)
            case .null: rc = sqlite3_bind_null(statement, index)
            case let .text(string):
                // SQLITE_TRANSIENT: SQLite copies the bytes before this call returns.
                let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
                rc = sqlite3_bind_text(statement, index, string, Int32(string.utf8.count), transient)
            }
            guard rc == SQLITE_OK else { throw error(rc, context) }
        }
        var rows: [T] = []
        while true {
            let rc = sqlite3_step(statement)
            if rc == SQLITE_ROW {
                rows.append(try read(Row(statement: statement)))
            } else if rc == SQLITE_DONE {
                return rows
            } else {
                throw error(rc, context)
            }
        }
    }

    /// Runs a script of one or more statements without caching them (schema migrations).
    func execute(script: String, context: String) throws(StoreError) {
        guard let handle else {
            throw StoreError(kind: .closed, path: path, context: context, detail: "store closed")
        }
        let rc = sqlite3_exec(handle, script, nil, nil, nil)
        guard rc == SQLITE_OK else { throw error(rc, context) }
    }

    /// The cached prepared statement for `sql`, preparing it on first use.
    private func prepared(_ sql: String, context: String) throws(StoreError) -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        guard let handle else {
            throw StoreError(kind: .closed, path: path, context: context, detail: "store closed")
        }
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard rc == SQLITE_OK, let statement else { throw error(rc, context) }
        statements[sql] = statement
        return statement
    }

    /// Runs `body` in one `BEGIN IMMEDIATE … COMMIT` transaction, rolling back on any error.
    func transaction(context: String, _ body: () throws(StoreError) -> Void) throws(StoreError) {
        try run("BEGIN IMMEDIATE", context: context)
        do {
            try body()
            try run("COMMIT", context: context)
        } catch {
            // A failed COMMIT may have rolled back already; only roll back what is still open.
            if inTransaction { _ = try? run("ROLLBACK", context: context) }
            throw error
        }
    }
}
