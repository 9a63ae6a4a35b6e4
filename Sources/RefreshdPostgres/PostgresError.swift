/// Why refreshd could not use the PostgreSQL database its nodes share.
///
/// Every error names the database (`target`: its host or socket folder, port and database name,
/// never the password) and what refreshd was doing, and says what was expected. Only
/// `ShardFenced` (thrown by a store's `apply`, not this type) means a lease is gone; these mean
/// the call failed and may work again later (`.unreachable`, `.timeout`, `.server`) or that the
/// database cannot be used as it is (`.newerSchema`, `.foreignSchema`, `.shardCount`).
package struct PostgresError: Error, Sendable, CustomStringConvertible {
    package enum Kind: Sendable, Hashable {
        /// The connection string could not be parsed.
        case badConnectionString
        /// No connection could be made, or it broke during the call (server down, partition).
        case unreachable
        /// The server did not answer within the call's bound; the connection was dropped.
        case timeout
        /// The server refused a statement; `sqlState` says why.
        case server
        /// A COMMIT was sent but its answer never came: the batch may or may not be committed.
        case commitUnknown
        /// The schema was made by a newer refreshd.
        case newerSchema(found: Int, known: Int)
        /// The `refreshd` schema holds tables but no refreshd version table.
        case foreignSchema
        /// The shard count asked for differs from the one the database was created with.
        case shardCount(stored: Int, asked: Int)
        /// A state change does not fit the stored state (the whole batch was rolled back).
        case invalidChange
        /// A shard outside 0..<shardCount, or another argument refreshd cannot store.
        case invalidArgument
        /// Stored data refreshd cannot read back (an unknown enumeration value, a used-up run id).
        case corrupt
        /// The database object was closed.
        case closed
    }

    package var kind: Kind
    /// The database, as `database NAME at HOST[:PORT]` (never the password).
    package var target: String
    /// What refreshd was doing.
    package var context: String
    /// The server's or libpq's message, or what was found.
    package var detail: String
    /// The server's SQLSTATE, when the server reported the error.
    package var sqlState: String?

    package init(kind: Kind, target: String, context: String, detail: String, sqlState: String? = nil) {
        self.kind = kind
        self.target = target
        self.context = context
        self.detail = detail
        self.sqlState = sqlState
    }

    package var description: String {
        let state = sqlState.map { " (SQLSTATE \($0))" } ?? ""
        switch kind {
        case .badConnectionString:
            return "refreshd cannot use the database connection string: \(detail). Expected a libpq URL "
                + "(postgres://user@host:5432/dbname) or key=value pairs (host=/run/postgresql dbname=refreshd)."
        case .unreachable:
            return "refreshd \(target): cannot reach the database while \(context): \(detail). "
                + "Expected a running PostgreSQL server there; the call can be retried."
        case .timeout:
            return "refreshd \(target): no answer within \(detail) while \(context); the connection was "
                + "dropped and the call can be retried."
        case .server:
            return "refreshd \(target): the server refused \(context): \(detail)\(state)."
        case .commitUnknown:
            return "refreshd \(target): the connection broke after COMMIT was sent while \(context) "
                + "(\(detail)): the batch may or may not be committed, so nothing acts on it."
        case let .newerSchema(found, known):
            return "refreshd \(target): the refreshd schema is at version \(found), newer than version \(known) "
                + "that this refreshd understands: it was made by a newer refreshd. Run that version instead."
        case .foreignSchema:
            return "refreshd \(target): schema \"refreshd\" holds tables (\(detail)) but no refreshd version "
                + "table: it belongs to something else, and refreshd will not add its tables to it."
        case let .shardCount(stored, asked):
            return "refreshd \(target): the database was created with \(stored) shards, not \(asked); the shard "
                + "count is fixed at creation (omit it to use the stored one)."
        case .invalidChange:
            return "refreshd \(target): cannot apply state change: \(detail); no change of the batch was written."
        case .invalidArgument:
            return "refreshd \(target): \(detail) while \(context)."
        case .corrupt:
            return "refreshd \(target): stored data cannot be read while \(context): \(detail)."
        case .closed:
            return "refreshd \(target): the database was closed (\(context))."
        }
    }
}
