/// The shared database's schema, as an ordered list of migrations, in the PostgreSQL schema
/// `refreshd` (so it can live in a database other programs use).
///
/// `refreshd.schema_version` holds the number of migrations applied. Opening runs the missing
/// ones in one transaction under an advisory lock (nodes starting together migrate once); a
/// higher version than `PostgresSchema.version` was made by a newer refreshd and is refused.
/// Never edit a shipped migration: append.
///
/// Every state table carries the shard, so each shard's state is its own (the fold of its
/// changes, exactly as the SQLite store folds them). Times are `bigint` milliseconds since the
/// Unix epoch like `Instant`, except the lease, node and command times, which are the database's
/// own `timestamptz` (database time, compared only with `clock_timestamp()`). Strings refreshd
/// stores for its users (identifiers, specs, records, instance keys) are `bytea`: compared and
/// ordered by their UTF-8 bytes whatever the database's encoding and collation (SQLite's BINARY
/// collation, which the in-memory store copies), and NUL is kept, as SQLite keeps it.
enum PostgresSchema {
    static let migrations: [String] = [
        // Version 1 (issue 24).
        """
        CREATE TABLE refreshd.meta (key text PRIMARY KEY, value text NOT NULL);
        CREATE TABLE refreshd.leases (
            shard integer PRIMARY KEY,
            owner text,
            epoch bigint NOT NULL DEFAULT 0,
            expires_at timestamptz NOT NULL DEFAULT 'epoch',
            instance text NOT NULL
        );
        CREATE TABLE refreshd.nodes (node text PRIMARY KEY, alive_until timestamptz NOT NULL);
        CREATE TABLE refreshd.commands (
            id text PRIMARY KEY,
            shard integer NOT NULL,
            payload text NOT NULL,
            position bigint GENERATED ALWAYS AS IDENTITY,
            queued_at timestamptz NOT NULL DEFAULT clock_timestamp(),
            applied boolean NOT NULL DEFAULT false
        );
        CREATE INDEX commands_pending ON refreshd.commands (shard, position) WHERE NOT applied;
        CREATE TABLE refreshd.pending (
            shard integer NOT NULL,
            identifier bytea NOT NULL,
            namespace bytea NOT NULL,
            kind text NOT NULL,
            earliest bigint NOT NULL,
            submitted bigint NOT NULL,
            sequence bigint NOT NULL,
            requires_power boolean NOT NULL,
            requires_network boolean NOT NULL,
            origin text NOT NULL,
            position bigint GENERATED ALWAYS AS IDENTITY,
            PRIMARY KEY (shard, identifier)
        );
        CREATE TABLE refreshd.runs (
            shard integer NOT NULL,
            run_id bigint NOT NULL,
            identifier bytea NOT NULL,
            kind text NOT NULL,
            submitted bigint NOT NULL,
            earliest bigint NOT NULL,
            started bigint NOT NULL,
            deadline bigint NOT NULL,
            attempt bigint NOT NULL,
            ended bigint,
            outcome text,
            exit_status bigint,
            signal bigint,
            process_group bigint,
            process_start_ticks bigint,
            PRIMARY KEY (shard, run_id)
        );
        CREATE INDEX runs_by_identifier ON refreshd.runs (shard, identifier, run_id);
        CREATE INDEX runs_unfinished ON refreshd.runs (shard, run_id) WHERE ended IS NULL;
        CREATE TABLE refreshd.job_state (
            shard integer NOT NULL,
            identifier bytea NOT NULL,
            failure_streak bigint NOT NULL DEFAULT 0,
            seed_spec bytea,
            PRIMARY KEY (shard, identifier)
        );
        CREATE TABLE refreshd.daily_counters (
            shard integer NOT NULL,
            day text COLLATE "C" NOT NULL,
            identifier bytea NOT NULL,
            launches bigint NOT NULL,
            successes bigint NOT NULL,
            failures bigint NOT NULL,
            expired bigint NOT NULL,
            crashed bigint NOT NULL,
            interrupted bigint NOT NULL,
            missed bigint NOT NULL,
            PRIMARY KEY (shard, day, identifier)
        );
        CREATE TABLE refreshd.records (
            shard integer NOT NULL,
            table_name bytea NOT NULL,
            key bytea NOT NULL,
            value bytea NOT NULL,
            PRIMARY KEY (shard, table_name, key)
        );
        CREATE TABLE refreshd.instances (
            shard integer NOT NULL,
            template bytea NOT NULL,
            key bytea NOT NULL,
            parameter_values bytea NOT NULL,
            position bigint GENERATED ALWAYS AS IDENTITY,
            PRIMARY KEY (shard, template, key)
        );
        """,
        // Version 2 (issue 35), as the SQLite store's version 6: why a run ended so when its
        // outcome does not say it ("memory limit", refreshd's words: text), and what it used.
        """
        ALTER TABLE refreshd.runs ADD COLUMN reason text;
        ALTER TABLE refreshd.runs ADD COLUMN cpu_usec bigint;
        ALTER TABLE refreshd.runs ADD COLUMN peak_memory bigint;
        """,
        // Version 3 (issue 33), as the SQLite store's version 7: what is kept of a run's output
        // (bytea: a job's line may hold a NUL), how many lines came before it, its results lines.
        """
        ALTER TABLE refreshd.runs ADD COLUMN output bytea;
        ALTER TABLE refreshd.runs ADD COLUMN output_earlier bigint;
        ALTER TABLE refreshd.runs ADD COLUMN results bytea;
        """,
        // Version 4 (issue 33), as the SQLite store's version 8: indexes for search (a
        // template's instances in identifier order, by `KEY]`; runs by start, of all and of one
        // identifier). No index of the failing identifiers: the restore reads the streaks in
        // the heap's order, which the in-memory store's row order matches, and an index of
        // them would become the order of that read; the failing filter reads the template's
        // range of the primary key.
        """
        CREATE INDEX instances_in_identifier_order ON refreshd.instances (shard, template, (key || '\\x5d'::bytea));
        CREATE INDEX runs_by_start ON refreshd.runs (shard, started, run_id) INCLUDE (outcome);
        CREATE INDEX runs_by_identifier_start ON refreshd.runs (shard, identifier, started, run_id) INCLUDE (outcome);
        """,
    ]

    /// The version this refreshd writes and understands.
    static var version: Int { migrations.count }

    /// Serialises schema changes between nodes that open the database at once.
    static let advisoryLock: Int64 = 0x7265_6672_6573_6864  // "refreshd"
}
