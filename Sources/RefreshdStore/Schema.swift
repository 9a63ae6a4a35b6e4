/// The state file's schema, as an ordered list of migrations.
///
/// `PRAGMA user_version` holds the number of migrations applied. Opening a file runs the missing
/// ones in one transaction; a file with a higher version than `Schema.version` was written by a
/// newer refreshd and is refused rather than guessed at. Never edit a shipped migration: append.
///
/// Times are INTEGER milliseconds since the Unix epoch (UTC), like `Instant`. Enumerations are
/// stored as their raw TEXT values (`app-refresh`, `success`, `retry`) so the file reads well in
/// the sqlite3 shell.
enum Schema {
    /// Migration `i` takes the file from version `i` to `i + 1`.
    static let migrations: [String] = [
        // Version 1.
        """
        CREATE TABLE pending (
            identifier TEXT PRIMARY KEY NOT NULL,
            namespace TEXT NOT NULL,
            kind TEXT NOT NULL,
            earliest INTEGER NOT NULL,
            submitted INTEGER NOT NULL,
            sequence INTEGER NOT NULL,
            requires_power INTEGER NOT NULL DEFAULT 0,
            requires_network INTEGER NOT NULL DEFAULT 0,
            origin TEXT NOT NULL
        );
        CREATE TABLE runs (
            run_id INTEGER PRIMARY KEY NOT NULL,
            identifier TEXT NOT NULL,
            kind TEXT NOT NULL,
            submitted INTEGER NOT NULL,
            earliest INTEGER NOT NULL,
            started INTEGER NOT NULL,
            deadline INTEGER NOT NULL,
            attempt INTEGER NOT NULL DEFAULT 1,
            ended INTEGER,
            outcome TEXT,
            exit_status INTEGER,
            signal INTEGER,
            process_group INTEGER,
            process_start_ticks INTEGER
        );
        CREATE INDEX runs_by_identifier ON runs(identifier, run_id);
        CREATE INDEX runs_unfinished ON runs(ended) WHERE ended IS NULL;
        CREATE TABLE job_state (
            identifier TEXT PRIMARY KEY NOT NULL,
            failure_streak INTEGER NOT NULL DEFAULT 0,
            seed_spec TEXT
        );
        CREATE TABLE daily_counters (
            day TEXT NOT NULL,
            identifier TEXT NOT NULL,
            launches INTEGER NOT NULL DEFAULT 0,
            successes INTEGER NOT NULL DEFAULT 0,
            failures INTEGER NOT NULL DEFAULT 0,
            expired INTEGER NOT NULL DEFAULT 0,
            crashed INTEGER NOT NULL DEFAULT 0,
            interrupted INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (day, identifier)
        ) WITHOUT ROWID;
        """,
        // Version 2: calendar slots that passed unrun.
        """
        ALTER TABLE daily_counters ADD COLUMN missed INTEGER NOT NULL DEFAULT 0;
        """,
        // Version 3: a random identifier of this state, carried by every run's processes
        // (REFRESH_INSTANCE) so a restart finds them even before their process group is recorded.
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) WITHOUT ROWID;
        INSERT INTO meta (key, value) VALUES ('instance', lower(hex(randomblob(8))));
        """,
        // Version 4: the records of the machines beside the scheduler core (widget timelines and
        // their reload budgets, live activities), kept as JSON text by (table, key), so a machine
        // persists its state without a migration of its own.
        """
        CREATE TABLE records (
            table_name TEXT NOT NULL,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            PRIMARY KEY (table_name, key)
        ) WITHOUT ROWID;
        """,
        // Version 5 (issue 23): the instances of templates, each its key and parameter values
        // (`region=eu&user=alice`). A rowid table: a restore declares them in the order they
        // were added. An instance's request, streak and runs are in the other tables, under its
        // identifier `template[key]`.
        """
        CREATE TABLE instances (
            template TEXT NOT NULL,
            key TEXT NOT NULL,
            parameter_values TEXT NOT NULL,
            UNIQUE (template, key)
        );
        """,
        // Version 6 (issue 35): why a run ended so when its outcome does not say it ("memory
        // limit"), and what it used: CPU time in microseconds, peak memory in bytes (NULL where
        // not measured).
        """
        ALTER TABLE runs ADD COLUMN reason TEXT;
        ALTER TABLE runs ADD COLUMN cpu_usec INTEGER;
        ALTER TABLE runs ADD COLUMN peak_memory INTEGER;
        """,
        // Version 7 (issue 33): what is kept of a run's output (`RunOutput`), written with its
        // end and pruned with its row: the last lines, each ended by a newline (NULL: none),
        // how many were printed before them, and the accepted results lines, likewise.
        """
        ALTER TABLE runs ADD COLUMN output TEXT;
        ALTER TABLE runs ADD COLUMN output_earlier INTEGER;
        ALTER TABLE runs ADD COLUMN results TEXT;
        """,
        // Version 8 (issue 33): indexes for search (`StateStore+Search`). A template's instances
        // in identifier order (`TEMPLATE[KEY]`, so by `KEY]`: the order of the identifier-keyed
        // tables a state filter reads); the failing identifiers (a streak above zero) apart from
        // the many rows of streak 0; runs by start, of all and of one identifier (run ids follow
        // launches, not starts, and say their shard on a cluster), with the outcome, so a search
        // by outcome is counted and paged without reading rows.
        """
        CREATE INDEX instances_in_identifier_order ON instances(template, key || ']');
        CREATE INDEX job_state_failing ON job_state(identifier) WHERE failure_streak > 0;
        CREATE INDEX runs_by_start ON runs(started, run_id, outcome);
        CREATE INDEX runs_by_identifier_start ON runs(identifier, started, run_id, outcome);
        """,
        // Version 9 (issue 33): the pending requests that are not an instance's own (`T[K]`)
        // among the identifiers with a `[`: a provider's (`T[K]#family`), or any that does not
        // end in `]`. A template's pending instances are counted as the rows of its range less
        // and plus these few (`StateStore.pendingCount`), not by a test of each of a million rows.
        """
        CREATE INDEX pending_not_own ON pending(identifier)
        WHERE identifier GLOB '*[[]*' AND (identifier NOT GLOB '*]' OR identifier GLOB '*]#*');
        """,
    ]

    /// The condition of `pending_not_own` (version 9), written the same in the queries that read
    /// it: SQLite uses a partial index for a query whose WHERE holds its condition as a term.
    static let pendingNotOwn = "identifier GLOB '*[[]*' AND (identifier NOT GLOB '*]' OR identifier GLOB '*]#*')"

    /// The version this refreshd writes and understands.
    static var version: Int { migrations.count }

    /// Brings the file from `current` to `version` in one transaction.
    static func migrate(_ connection: SQLiteConnection, from current: Int) throws(StoreError) {
        guard current < version else { return }
        let context = "migrating the schema from version \(current) to \(version)"
        try connection.transaction(context: context) { () throws(StoreError) in
            // Re-read inside the write lock: another opener may have migrated meanwhile.
            let found = try userVersion(connection)
            guard found < version else { return }
            for migration in migrations[found...] {
                try connection.execute(script: migration, context: context)
            }
            try connection.execute(script: "PRAGMA user_version = \(version)", context: context)
        }
    }

    static func userVersion(_ connection: SQLiteConnection) throws(StoreError) -> Int {
        try connection.query("PRAGMA user_version", context: "reading the schema version") { row in
            row.int(0)
        }.first ?? 0
    }
}
