import CLibPQ
import RefreshdCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The PostgreSQL database a cluster's nodes share (issue 24): shard leases in database time,
/// fenced per-shard stores, the nodes' heartbeats and operator commands.
///
/// Opened from a libpq connection string (`postgres://user@host/dbname` or
/// `host=/run/postgresql dbname=refreshd`); opening creates or migrates the `refreshd` schema
/// (`PostgresSchema`) and, at creation, fixes the shard count (default 16) and one lease row
/// per shard. Every lease comparison is made by the database against `clock_timestamp()`, never
/// against a node's clock.
///
/// Calls block the calling thread, each for at most the statement bound (`PostgresTimeouts`),
/// and may be made from several threads at once: each takes a connection from a small pool
/// (opened on demand, one per concurrent caller, at most shardCount + 4 kept idle; a broken one
/// is dropped and the next call reconnects). A node calls it off its loop thread.
package final class PostgresDatabase: ShardDatabase, @unchecked Sendable {
    /// The default shard count of a new database.
    package static let defaultShardCount = 16
    /// The most shards a database may have: each shard's run ids are a range of their own.
    package static let maximumShardCount = 1024

    package let shardCount: Int
    /// `database NAME at HOST[:PORT] as USER`, for messages (never the password).
    package let target: String
    private let conninfo: String
    private let timeouts: PostgresTimeouts
    private let lock = PoolLock()
    private var idle: [PGConnection] = []
    private var closed = false

    /// Opens the database, creating or migrating its schema. `shardCount` nil: the stored count,
    /// or `defaultShardCount` for a new database; a count that differs from the stored one is
    /// refused (`.shardCount`).
    package init(connection conninfo: String, shardCount: Int? = nil,
                timeouts: PostgresTimeouts = .standard) throws(PostgresError) {
        self.target = try PGConnection.describe(conninfo).get()
        self.conninfo = conninfo
        self.timeouts = timeouts
        if let shardCount, !(1...Self.maximumShardCount).contains(shardCount) {
            throw PostgresError(kind: .invalidArgument, target: target, context: "opening the database",
                                detail: "shard count \(shardCount) is outside 1...\(Self.maximumShardCount)")
        }
        let first = try PGConnection(conninfo: conninfo, target: target, timeouts: timeouts)
        self.shardCount = try Self.prepare(first, shardCount: shardCount, target: target)
        idle = [first]
    }

    deinit { close() }

    /// Closes every pooled connection; later calls throw `.closed`.
    package func close() {
        let connections = lock.withLock { () -> [PGConnection] in
            closed = true
            defer { idle = [] }
            return idle
        }
        connections.forEach { $0.close() }
    }

    // MARK: Schema

    /// Creates or migrates the schema in one transaction under the advisory lock; answers the
    /// shard count.
    private static func prepare(_ connection: PGConnection, shardCount asked: Int?, target: String) throws(PostgresError) -> Int {
        let context = "preparing the refreshd schema"
        try connection.execute("BEGIN", context: context)
        do throws(PostgresError) {
            try connection.execute("SELECT pg_advisory_xact_lock($1)", [.int8(PostgresSchema.advisoryLock)], context: context)
            let tables = try connection.execute("""
                SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'refreshd'
                ORDER BY table_name <> 'schema_version', table_name LIMIT 6
                """, context: context)
            let names = (0..<tables.count).map { tables.string($0, 0) }
            var version = 0
            if names.contains("schema_version") {
                let found = try connection.execute("SELECT max(version) FROM refreshd.schema_version", context: context)
                version = found.int(0, 0)
            } else if !names.isEmpty {
                throw PostgresError(kind: .foreignSchema, target: target, context: context,
                                    detail: names.joined(separator: ", "))
            }
            if version > PostgresSchema.version {
                throw PostgresError(kind: .newerSchema(found: version, known: PostgresSchema.version),
                                    target: target, context: context, detail: "schema_version \(version)")
            }
            if version == 0 {
                try connection.execute("CREATE SCHEMA IF NOT EXISTS refreshd", context: context)
                try connection.execute("CREATE TABLE refreshd.schema_version (version integer NOT NULL)", context: context)
                try connection.execute("INSERT INTO refreshd.schema_version (version) VALUES (0)", context: context)
            }
            for (index, migration) in PostgresSchema.migrations.enumerated() where index >= version {
                try connection.executeScript(migration, context: "migrating the refreshd schema to version \(index + 1)")
            }
            if version < PostgresSchema.version {
                try connection.execute("UPDATE refreshd.schema_version SET version = $1",
                                       [.int4(Int32(PostgresSchema.version))], context: context)
            }
            let stored = try connection.execute("SELECT value FROM refreshd.meta WHERE key = 'shard_count'", context: context)
            let count: Int
            if stored.count == 0 {
                count = asked ?? defaultShardCount
                try connection.execute("INSERT INTO refreshd.meta (key, value) VALUES ('shard_count', $1)",
                                       [.text(String(count))], context: context)
                for shard in 0..<count {
                    try connection.execute("INSERT INTO refreshd.leases (shard, instance) VALUES ($1, $2)",
                                           [.int4(Int32(shard)), .text(randomInstanceID())], context: context)
                }
            } else {
                guard let found = Int(stored.string(0, 0)), (1...maximumShardCount).contains(found) else {
                    throw PostgresError(kind: .corrupt, target: target, context: context,
                                        detail: "refreshd.meta shard_count is '\(stored.string(0, 0))'")
                }
                if let asked, asked != found {
                    throw PostgresError(kind: .shardCount(stored: found, asked: asked), target: target,
                                        context: context, detail: "")
                }
                count = found
            }
            try connection.execute("COMMIT", context: context)
            return count
        } catch {
            if connection.inTransaction { _ = try? connection.execute("ROLLBACK", context: context) }
            throw error
        }
    }

    /// 16 random lowercase hex digits: a shard's state identifier (REFRESH_INSTANCE of its runs).
    private static func randomInstanceID() -> String {
        let hex = String(UInt64.random(in: .min ... .max), radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    // MARK: Pool

    /// Runs `body` with a pooled connection (a new one when none is idle); a connection left
    /// broken or inside a transaction is dropped, not pooled.
    ///
    /// After a server restart every pooled connection is dead: each is checked as it is handed
    /// out (`isStale`, no round trip) and a dead one is closed, so the first call after the
    /// restart reconnects instead of failing; and a call that finds the server unreachable
    /// drops every idle connection (they went with the same server). A reconnect waits at most
    /// `timeouts.connect`.
    func withConnection<T>(_ context: String, _ body: (PGConnection) throws(PostgresError) -> T) throws(PostgresError) -> T {
        var stale: [PGConnection] = []
        let pooled = try lock.withLock { () throws(PostgresError) -> PGConnection? in
            if closed { throw PostgresError(kind: .closed, target: target, context: context, detail: "") }
            while let last = idle.popLast() {
                guard last.isStale else { return last }
                stale.append(last)
            }
            return nil
        }
        stale.forEach { $0.close() }
        let connection: PGConnection
        if let pooled {
            connection = pooled
        } else {
            connection = try PGConnection(conninfo: conninfo, target: target, timeouts: timeouts)
        }
        do throws(PostgresError) {
            let result = try body(connection)
            giveBack(connection)
            return result
        } catch {
            giveBack(connection)
            if error.kind == .unreachable || error.kind == .commitUnknown || error.kind == .timeout { dropIdle() }
            throw error
        }
    }

    /// Closes every idle connection (the server they went to is gone or not answering).
    private func dropIdle() {
        let dropped = lock.withLock { () -> [PGConnection] in
            defer { idle = [] }
            return idle
        }
        dropped.forEach { $0.close() }
    }

    /// Runs `body` in one transaction on a pooled connection; any error rolls it back.
    func transaction<T>(_ context: String, readOnly: Bool = false,
                        _ body: (PGConnection) throws(PostgresError) -> T) throws(PostgresError) -> T {
        try withConnection(context) { (connection) throws(PostgresError) -> T in
            if readOnly, let idle = timeouts.idleInTransaction, idle < timeouts.statement {
                // A read locks no lease row, and decoding a large shard's rows between its
                // statements (a restore) may take longer than a cluster's short idle bound:
                // reads keep the statement bound.
                try connection.executeScript("""
                    BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY;
                    SET LOCAL idle_in_transaction_session_timeout = \(PGConnection.milliseconds(timeouts.statement))
                    """, context: context)
            } else {
                try connection.execute(readOnly ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" : "BEGIN", context: context)
            }
            let result: T
            do throws(PostgresError) {
                result = try body(connection)
            } catch {
                if connection.inTransaction { _ = try? connection.execute("ROLLBACK", context: context) }
                throw error
            }
            do throws(PostgresError) {
                try connection.execute("COMMIT", context: context)
            } catch {
                guard !readOnly, error.kind == .unreachable || error.kind == .timeout else { throw error }
                throw PostgresError(kind: .commitUnknown, target: target, context: context, detail: error.detail)
            }
            return result
        }
    }

    private func giveBack(_ connection: PGConnection) {
        guard connection.isReusable else {
            connection.close()
            return
        }
        let keep = lock.withLock { () -> Bool in
            // Room for every shard committing at once, plus the lease and heartbeat calls: a
            // node's steady concurrency never reconnects (a connection is a server process).
            guard !closed, idle.count < shardCount + 4 else { return false }
            idle.append(connection)
            return true
        }
        if !keep { connection.close() }
    }

    func checkShard(_ shard: Int, _ context: String) throws(PostgresError) {
        guard (0..<shardCount).contains(shard) else {
            throw PostgresError(kind: .invalidArgument, target: target, context: context,
                                detail: "shard \(shard) is outside 0..<\(shardCount)")
        }
    }

    // MARK: ShardDatabase

    /// `clock_timestamp()` in whole milliseconds (floor) since the Unix epoch.
    static func milliseconds(_ expression: String) -> String {
        "floor(extract(epoch FROM \(expression)) * 1000)::bigint"
    }

    private static let leaseColumns = "shard, owner, epoch, \(milliseconds("expires_at"))"

    private static func lease(_ result: PGResult, _ row: Int) -> ShardLease {
        ShardLease(shard: result.int(row, 0), owner: result.optionalString(row, 1), epoch: result.int64(row, 2),
                   expiresAt: Instant(milliseconds: result.int64(row, 3)))
    }

    package func now() throws -> Instant {
        try withConnection("reading the database clock") { (c) throws(PostgresError) -> Instant in
            let result = try c.execute("SELECT \(Self.milliseconds("clock_timestamp()"))", context: "reading the database clock")
            return Instant(milliseconds: result.int64(0, 0))
        }
    }

    package func acquire(shard: Int, node: String, lease: Duration) throws -> ShardLease? {
        let context = "acquiring shard \(shard)'s lease for \(node)"
        try checkShard(shard, context)
        return try withConnection(context) { (c) throws(PostgresError) -> ShardLease? in
            // SKIP LOCKED: a row locked by a commit in flight (or by a node paused inside one,
            // until the server ends its idle transaction) is not waited for: the acquire answers
            // "not now" and the next survey tries again, so the node's own renewals never wait
            // behind another node's transaction. It writes nothing, so fencing is untouched.
            let result = try c.execute("""
                UPDATE refreshd.leases
                SET owner = $2, epoch = epoch + 1, expires_at = clock_timestamp() + $3::float8 * interval '1 millisecond'
                WHERE shard = (SELECT shard FROM refreshd.leases WHERE shard = $1 FOR UPDATE SKIP LOCKED)
                AND (owner IS NULL OR owner = $2 OR expires_at <= clock_timestamp())
                RETURNING \(Self.leaseColumns)
                """, [.int4(Int32(shard)), .text(node), .int8(PGConnection.milliseconds(lease))], context: context)
            return result.count == 1 ? Self.lease(result, 0) : nil
        }
    }

    package func renew(shard: Int, node: String, epoch: Int64, lease: Duration) throws -> ShardLease? {
        let context = "renewing shard \(shard)'s lease for \(node) at epoch \(epoch)"
        try checkShard(shard, context)
        return try withConnection(context) { (c) throws(PostgresError) -> ShardLease? in
            let result = try c.execute("""
                UPDATE refreshd.leases SET expires_at = clock_timestamp() + $4::float8 * interval '1 millisecond'
                WHERE shard = $1 AND owner = $2 AND epoch = $3 AND expires_at > clock_timestamp()
                RETURNING \(Self.leaseColumns)
                """, [.int4(Int32(shard)), .text(node), .int8(epoch), .int8(PGConnection.milliseconds(lease))],
                context: context)
            return result.count == 1 ? Self.lease(result, 0) : nil
        }
    }

    package func release(shard: Int, node: String, epoch: Int64) throws {
        let context = "releasing shard \(shard)'s lease for \(node) at epoch \(epoch)"
        try checkShard(shard, context)
        _ = try withConnection(context) { (c) throws(PostgresError) in
            try c.execute("""
                UPDATE refreshd.leases SET expires_at = least(expires_at, clock_timestamp())
                WHERE shard = $1 AND owner = $2 AND epoch = $3
                """, [.int4(Int32(shard)), .text(node), .int8(epoch)], context: context)
        }
    }

    package func leases() throws -> [ShardLease] {
        let context = "reading the leases"
        return try withConnection(context) { (c) throws(PostgresError) -> [ShardLease] in
            let result = try c.execute("SELECT \(Self.leaseColumns) FROM refreshd.leases ORDER BY shard", context: context)
            return (0..<result.count).map { Self.lease(result, $0) }
        }
    }

    package func heartbeat(node: String, ttl: Duration) throws -> [String] {
        let context = "recording \(node)'s heartbeat"
        return try withConnection(context) { (c) throws(PostgresError) -> [String] in
            try c.execute("""
                INSERT INTO refreshd.nodes (node, alive_until)
                VALUES ($1, clock_timestamp() + $2::float8 * interval '1 millisecond')
                ON CONFLICT (node) DO UPDATE SET alive_until = excluded.alive_until
                """, [.text(node), .int8(PGConnection.milliseconds(ttl))], context: context)
            let alive = try c.execute("""
                SELECT node FROM refreshd.nodes WHERE alive_until > clock_timestamp() ORDER BY node COLLATE "C"
                """, context: context)
            return (0..<alive.count).map { alive.string($0, 0) }
        }
    }

    package func store(shard: Int, epoch: Int64) throws -> any StateStoring {
        try checkShard(shard, "opening shard \(shard)'s store")
        return PostgresShardStore(database: self, shard: shard, epoch: epoch)
    }
}

/// A pthread mutex for the pool (the database is shared by a node's threads).
final class PoolLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    init() { pthread_mutex_init(mutex, nil) }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}
