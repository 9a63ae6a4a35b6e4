import CLibPQ
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value bound to a statement parameter, sent in PostgreSQL's binary format (never spliced
/// into the SQL text).
enum PGValue {
    case int8(Int64)
    case int4(Int32)
    case bool(Bool)
    /// A `bytea` parameter: the string's UTF-8 bytes, whatever they are (NUL included).
    case bytes(String)
    /// A `text` parameter (UTF-8; PostgreSQL refuses NUL in text).
    case text(String)
    /// NULL, typed by the OID of the column it goes to.
    case null(Oid)

    static let int8Type: Oid = 20, int4Type: Oid = 23, boolType: Oid = 16, byteaType: Oid = 17, textType: Oid = 25

    static func optional(_ value: Int64?) -> PGValue { value.map { .int8($0) } ?? .null(int8Type) }
    static func optional(_ value: Int32?) -> PGValue { value.map { .int8(Int64($0)) } ?? .null(int8Type) }
    static func optionalText(_ value: String?) -> PGValue { value.map { .text($0) } ?? .null(textType) }
    static func optionalBytes(_ value: String?) -> PGValue { value.map { .bytes($0) } ?? .null(byteaType) }

    var type: Oid {
        switch self {
        case .int8: Self.int8Type
        case .int4: Self.int4Type
        case .bool: Self.boolType
        case .bytes: Self.byteaType
        case .text: Self.textType
        case let .null(oid): oid
        }
    }

    /// The binary representation (network byte order for integers), nil for NULL.
    var binary: [UInt8]? {
        switch self {
        case let .int8(v): withUnsafeBytes(of: v.bigEndian) { Array($0) }
        case let .int4(v): withUnsafeBytes(of: v.bigEndian) { Array($0) }
        case let .bool(v): [v ? 1 : 0]
        case let .bytes(s), let .text(s): Array(s.utf8)
        case .null: nil
        }
    }
}

/// One result of a statement, its rows in binary format.
final class PGResult {
    private let result: OpaquePointer

    init(_ result: OpaquePointer) { self.result = result }
    deinit { PQclear(result) }

    var count: Int { Int(PQntuples(result)) }
    /// Rows an INSERT, UPDATE or DELETE changed (PQcmdTuples).
    var changed: Int { Int(String(cString: PQcmdTuples(result))) ?? 0 }

    func isNull(_ row: Int, _ column: Int32) -> Bool { PQgetisnull(result, Int32(row), column) == 1 }

    /// An integer column of any width (int2, int4, int8), 0 for NULL.
    func int64(_ row: Int, _ column: Int32) -> Int64 {
        guard !isNull(row, column), let bytes = PQgetvalue(result, Int32(row), column) else { return 0 }
        let length = Int(PQgetlength(result, Int32(row), column))
        var value: Int64 = 0
        for i in 0..<length { value = value << 8 | Int64(UInt8(bitPattern: bytes[i])) }
        // Sign-extend the narrower widths.
        if length > 0, length < 8 {
            let shift = Int64(64 - 8 * length)
            value = (value << shift) >> shift
        }
        return value
    }

    func int(_ row: Int, _ column: Int32) -> Int { Int(truncatingIfNeeded: int64(row, column)) }
    func optionalInt64(_ row: Int, _ column: Int32) -> Int64? { isNull(row, column) ? nil : int64(row, column) }
    func optionalInt32(_ row: Int, _ column: Int32) -> Int32? {
        isNull(row, column) ? nil : Int32(truncatingIfNeeded: int64(row, column))
    }
    func bool(_ row: Int, _ column: Int32) -> Bool { int64(row, column) != 0 }

    /// A text or bytea column as a string (its bytes as UTF-8), "" for NULL.
    func string(_ row: Int, _ column: Int32) -> String {
        guard !isNull(row, column), let bytes = PQgetvalue(result, Int32(row), column) else { return "" }
        let length = Int(PQgetlength(result, Int32(row), column))
        return bytes.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }

    func optionalString(_ row: Int, _ column: Int32) -> String? { isNull(row, column) ? nil : string(row, column) }
}

/// How long libpq may wait, so that a partition or a dead server cannot hang a call for long.
package struct PostgresTimeouts: Sendable, Hashable {
    /// Opening a connection (libpq's `connect_timeout`, whole seconds, at least 2).
    package var connect: Duration
    /// One statement from send to its last result: past it the connection is dropped (the server
    /// also cancels it by `statement_timeout`), and the call throws `.timeout`.
    package var statement: Duration
    /// TCP: unacknowledged data, and keepalive probes of an idle connection (TCP only; a unix
    /// socket fails at once when the server goes).
    package var tcp: Duration

    /// How long the server lets a session sit idle INSIDE a transaction before it ends the
    /// session (PostgreSQL's `idle_in_transaction_session_timeout`, measured by the server): a
    /// node paused or cut off mid-commit holds its shard's lease row lock, which every acquirer
    /// of the shard needs, until then. nil: the statement bound.
    package var idleInTransaction: Duration?

    package init(connect: Duration = .seconds(5), statement: Duration = .seconds(10), tcp: Duration = .seconds(10),
                 idleInTransaction: Duration? = nil) {
        self.connect = connect
        self.statement = statement
        self.tcp = tcp
        self.idleInTransaction = idleInTransaction
    }

    package static let standard = PostgresTimeouts()

    /// A cluster node's bounds for a lease renewed every `renewEvery`: the standard ones, and a
    /// transaction idle for a renewal interval is ended by the server, so a node paused inside
    /// a commit releases its shard's lease row before the lease itself expires (lease ≥ 3 ×
    /// renewEvery) and the shard is taken over within lease + renewal interval + restore, as
    /// for any pause (ARCHITECTURE.md, "A pause inside a commit"). Refreshd's transactions send
    /// their statements back to back, so a live node is never idle that long inside one; one
    /// that is (a thread stalled past a renewal interval) loses the commit, which fences the
    /// shard as any refused commit does.
    package static func cluster(renewEvery: Duration) -> PostgresTimeouts {
        PostgresTimeouts(idleInTransaction: max(.milliseconds(100), renewEvery))
    }
}

/// One libpq connection in non-blocking mode, driven synchronously with a deadline per statement
/// (`PQsendQueryParams`, then `poll` on its socket): every call returns or throws within
/// `timeouts.statement`. Not thread-safe: the database's pool hands it to one caller at a time.
final class PGConnection {
    let target: String
    private var handle: OpaquePointer?
    private let timeouts: PostgresTimeouts

    /// Connects with the given parameters; the caller's connection string wins over refreshd's
    /// defaults for anything it sets.
    init(conninfo: String, target: String, timeouts: PostgresTimeouts) throws(PostgresError) {
        self.target = target
        self.timeouts = timeouts
        let tcpMilliseconds = Self.milliseconds(timeouts.tcp)
        let statementMilliseconds = Self.milliseconds(timeouts.statement)
        let idleMilliseconds = Self.milliseconds(timeouts.idleInTransaction ?? timeouts.statement)
        let keepaliveIdle = max(1, tcpMilliseconds / 3000)
        let defaults: [(String, String)] = [
            ("connect_timeout", String(max(2, Self.milliseconds(timeouts.connect) / 1000))),
            ("keepalives", "1"), ("keepalives_idle", String(keepaliveIdle)),
            ("keepalives_interval", String(keepaliveIdle)), ("keepalives_count", "2"),
            ("tcp_user_timeout", String(tcpMilliseconds)),
            ("application_name", "refreshd"),
            // Server side: a statement past the bound is cancelled; a session left idle inside a
            // transaction (its node paused or cut off) is ended, so it cannot hold a lease row's
            // lock for longer than that; every commit waits for the WAL flush whatever the
            // server's default.
            ("options", "-c statement_timeout=\(statementMilliseconds) "
                + "-c idle_in_transaction_session_timeout=\(idleMilliseconds) -c synchronous_commit=on"),
            ("dbname", conninfo),
        ]
        let keywords = defaults.map { strdup($0.0) } + [nil]
        let values = defaults.map { strdup($0.1) } + [nil]
        defer {
            keywords.forEach { free($0) }
            values.forEach { free($0) }
        }
        let connection = keywords.map { UnsafePointer($0) }.withUnsafeBufferPointer { k in
            values.map { UnsafePointer($0) }.withUnsafeBufferPointer { v in
                PQconnectdbParams(k.baseAddress, v.baseAddress, 1)
            }
        }
        guard let connection else {
            throw PostgresError(kind: .unreachable, target: target, context: "connecting", detail: "libpq is out of memory")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = Self.message(connection)
            PQfinish(connection)
            throw PostgresError(kind: .unreachable, target: target, context: "connecting", detail: message)
        }
        PQsetnonblocking(connection, 1)
        handle = connection
    }

    deinit { close() }

    func close() {
        if let handle { PQfinish(handle) }
        handle = nil
    }

    /// Whether the connection can take another statement (open, not broken, not in a failed
    /// or unfinished transaction).
    var isReusable: Bool {
        guard let handle, PQstatus(handle) == CONNECTION_OK else { return false }
        return PQtransactionStatus(handle) == PQTRANS_IDLE
    }

    /// Whether an idle pooled connection is dead without knowing it yet: a server that stopped
    /// or restarted (any shutdown mode) has closed its end, so the socket reads end-of-file (or
    /// the server's last FATAL message). A zero-timeout `poll`, no round trip: the pool checks
    /// each connection it hands out, so a restarted server costs no failed call per connection
    /// it pooled before the restart (each such call would have fenced a shard or missed a
    /// renewal).
    var isStale: Bool {
        guard let handle, PQstatus(handle) == CONNECTION_OK else { return true }
        var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, 0) > 0 else { return false }
        // Readable while idle: the server's goodbye, its end-of-file, or a notification (kept by
        // libpq for whoever listens). Only a broken connection is stale.
        return PQconsumeInput(handle) == 0 || PQstatus(handle) != CONNECTION_OK
            || descriptor.revents & Int16(POLLHUP | POLLERR) != 0
    }

    var inTransaction: Bool {
        guard let handle else { return false }
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR
    }

    /// Runs a script of several statements without parameters (the schema's migrations), with
    /// libpq's simple query protocol (the extended one takes one statement).
    func executeScript(_ sql: String, context: String) throws(PostgresError) {
        try execute(sql, [], context: context, script: true)
    }

    /// Runs one statement with `parameters` ($1, $2, … in the SQL) and returns its result (rows
    /// in binary format). Throws `.server` for an error the server reported, `.unreachable` when
    /// the connection breaks, `.timeout` past the statement bound (the connection is closed).
    @discardableResult
    func execute(_ sql: String, _ parameters: [PGValue] = [], context: String,
                 script: Bool = false) throws(PostgresError) -> PGResult {
        guard let handle else {
            throw PostgresError(kind: .unreachable, target: target, context: context, detail: "the connection was dropped")
        }
        let deadline = Self.nowMilliseconds() + Self.milliseconds(timeouts.statement)
        let types = parameters.map(\.type)
        let binaries = parameters.map(\.binary)
        let lengths = binaries.map { Int32($0?.count ?? 0) }
        let formats = [Int32](repeating: 1, count: parameters.count)
        // Copies that live across the call: libpq reads them while sending.
        let buffers: [UnsafeMutablePointer<CChar>?] = binaries.map { bytes in
            guard let bytes else { return nil }
            let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: max(1, bytes.count))
            bytes.withUnsafeBufferPointer { source in
                source.withMemoryRebound(to: CChar.self) { buffer.update(from: $0.baseAddress!, count: bytes.count) }
            }
            return buffer
        }
        defer { buffers.forEach { $0?.deallocate() } }
        let sent = script ? PQsendQuery(handle, sql) : buffers.map { UnsafePointer($0) }.withUnsafeBufferPointer { values in
            PQsendQueryParams(handle, sql, Int32(parameters.count), types, values.baseAddress, lengths, formats, 1)
        }
        guard sent == 1 else { throw broken(context) }
        // Send everything (non-blocking mode: a full socket buffer returns 1).
        while true {
            let flushed = PQflush(handle)
            if flushed == 0 { break }
            if flushed < 0 { throw broken(context) }
            try wait(for: Int16(POLLOUT | POLLIN), until: deadline, context)
            if PQconsumeInput(handle) == 0 { throw broken(context) }
        }
        var kept: OpaquePointer?
        var failure: PostgresError?
        while true {
            while PQisBusy(handle) == 1 {
                try wait(for: Int16(POLLIN), until: deadline, context)
                if PQconsumeInput(handle) == 0 {
                    if let kept { PQclear(kept) }
                    throw broken(context)
                }
            }
            guard let result = PQgetResult(handle) else { break }
            let status = PQresultStatus(result)
            if status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK {
                if let kept { PQclear(kept) }
                kept = result
            } else {
                if failure == nil { failure = serverError(result, context) }
                PQclear(result)
            }
        }
        if let failure {
            if let kept { PQclear(kept) }
            throw failure
        }
        guard let kept else { throw broken(context) }
        return PGResult(kept)
    }

    /// Waits until the socket is ready or the deadline passes (then the connection is closed).
    private func wait(for events: Int16, until deadline: Int64, _ context: String) throws(PostgresError) {
        guard let handle else { throw broken(context) }
        while true {
            let remaining = deadline - Self.nowMilliseconds()
            guard remaining > 0 else {
                close()
                throw PostgresError(kind: .timeout, target: target, context: context,
                                    detail: "\(Self.milliseconds(timeouts.statement)) ms")
            }
            var descriptor = pollfd(fd: PQsocket(handle), events: events, revents: 0)
            let ready = poll(&descriptor, 1, Int32(min(remaining, 1000)))
            if ready > 0 { return }
            if ready < 0, errno != EINTR { throw broken(context) }
        }
    }

    /// The connection's error, the connection closed when it is gone.
    private func broken(_ context: String) -> PostgresError {
        let detail = handle.map(Self.message) ?? "the connection was dropped"
        if let handle, PQstatus(handle) != CONNECTION_OK { close() }
        return PostgresError(kind: .unreachable, target: target, context: context,
                             detail: detail.isEmpty ? "the connection broke" : detail)
    }

    private func serverError(_ result: OpaquePointer, _ context: String) -> PostgresError {
        let field = { (code: Character) -> String? in
            PQresultErrorField(result, Int32(code.asciiValue!)).map { String(cString: $0) }
        }
        let state = field("C")
        let message = field("M") ?? String(cString: PQresultErrorMessage(result))
        let detail = field("D").map { message + " (\($0))" } ?? message
        // Class 08: the connection failed; 57P0x: the server is shutting down or restarting.
        if state == nil || state!.hasPrefix("08") || state!.hasPrefix("57P0") {
            if let handle, PQstatus(handle) != CONNECTION_OK { close() }
            return PostgresError(kind: .unreachable, target: target, context: context,
                                 detail: detail.trimmingWhitespace, sqlState: state)
        }
        return PostgresError(kind: .server, target: target, context: context, detail: detail.trimmingWhitespace,
                             sqlState: state)
    }

    private static func message(_ connection: OpaquePointer) -> String {
        String(cString: PQerrorMessage(connection)).trimmingWhitespace
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    static func nowMilliseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }

    /// "database NAME at HOST[:PORT] as USER" from a connection string, without the password;
    /// nil with libpq's message when it cannot be parsed.
    static func describe(_ conninfo: String) -> Result<String, PostgresError> {
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(conninfo, &error) else {
            let detail = error.map { String(cString: $0).trimmingWhitespace } ?? "libpq could not parse it"
            if let error { PQfreemem(error) }
            return .failure(PostgresError(kind: .badConnectionString, target: "", context: "reading the connection string",
                                          detail: detail))
        }
        defer { PQconninfoFree(options) }
        var fields: [String: String] = [:]
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val { fields[String(cString: keyword)] = String(cString: value) }
            option += 1
        }
        let host = fields["host"] ?? fields["hostaddr"] ?? "the default socket"
        let port = fields["port"].map { ":" + $0 } ?? ""
        let user = fields["user"].map { " as " + $0 } ?? ""
        return .success("database \(fields["dbname"] ?? "(default)") at \(host)\(port)\(user)")
    }
}

extension String {
    var trimmingWhitespace: String {
        var scalars = Substring(self)
        while let last = scalars.last, last.isWhitespace { scalars = scalars.dropLast() }
        while let first = scalars.first, first.isWhitespace { scalars = scalars.dropFirst() }
        return String(scalars)
    }
}
