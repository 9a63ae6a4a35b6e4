import Foundation
import RefreshdCore
import RefreshdPostgres
import Testing

/// PostgreSQL restarts under a node (issue 24): its pooled connections die with the server, and
/// a COMMIT may be cut off with its outcome unknown.
@Suite struct PostgresRestartTests {
    /// The node had several connections pooled (its shards commit at once) when the server
    /// restarted (fast, as `pg_ctl restart`, or immediate, as `pg_ctl restart -m immediate` or a
    /// crash): every call after the restart works at once. It used to fail once per connection
    /// pooled before the restart (each a fenced shard or a missed renewal in a node).
    @Test(arguments: [false, true]) func everyCallWorksAtOnceAfterTheServerRestarts(immediate: Bool) throws {
        let server = try PrivateServer()
        defer { server.shutDown() }
        let conninfo = try server.freshDatabase()
        let db = try PostgresDatabase(connection: conninfo, shardCount: 4,
                                      timeouts: PostgresTimeouts(connect: .seconds(2), statement: .seconds(5)))
        defer { db.close() }
        let lease = try #require(try db.acquire(shard: 0, node: "a", lease: .seconds(60)))
        let store = try db.store(shard: 0, epoch: lease.epoch)
        try store.apply([.savePending(contractRequest("before"))])
        let pooled = try fillPool(db, conninfo: conninfo, connections: 4)
        #expect(pooled >= 4, "the pool holds \(pooled) connections")

        try server.stop(crash: immediate)
        try server.start()
        // Each call once, in the order a node makes them after a restart: none may fail.
        _ = try db.heartbeat(node: "a", ttl: .seconds(60))
        #expect(try db.leases().count == 4)
        _ = try db.now()
        #expect(try db.renew(shard: 0, node: "a", epoch: lease.epoch, lease: .seconds(60)) != nil)
        try store.apply([.savePending(contractRequest("after"))])
        #expect(try db.acquire(shard: 1, node: "a", lease: .seconds(60)) != nil)
        #expect(try store.pendingRequests().map(\.identifier).sorted() == ["after", "before"])
    }

    /// A COMMIT whose answer never comes (the node's bound passed; here the server is slow to
    /// commit): `.commitUnknown`, and the transaction DID commit a second later. What keeps this
    /// safe (ARCHITECTURE.md, "A commit whose outcome is unknown"): the node acts on nothing of
    /// it, and the commit holds the shard's lease row lock until it lands, so the next owner's
    /// acquire waits for it and its restore finds the run (unfinished: interrupted, not run
    /// again); the old epoch's next commit is refused.
    @Test func aCommitWhoseAnswerIsLostIsSeenByTheNextOwnersRestore() throws {
        let server = try PrivateServer.shared.get()
        let base = try server.freshDatabase()
        let old = try PostgresDatabase(connection: base, shardCount: 2)
        // The node's side gives up after 1 s; the server's own statement bound is lifted for this
        // node's sessions (the caller's options win), so the server goes on committing.
        let slow = try PostgresDatabase(connection: base + " options='-c statement_timeout=0'",
                                        timeouts: PostgresTimeouts(connect: .seconds(2), statement: .seconds(1)))
        defer {
            old.close()
            slow.close()
        }
        // A commit that takes 2.5 s: a deferred trigger sleeps at COMMIT.
        try PrivateServer.execute("""
            CREATE FUNCTION public.slow_commit() RETURNS trigger LANGUAGE plpgsql AS
            $$ BEGIN PERFORM pg_sleep(2.5); RETURN NULL; END $$;
            CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON refreshd.runs
            DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.slow_commit();
            """, on: base)
        let lease = try #require(try slow.acquire(shard: 0, node: "a", lease: .milliseconds(1500)))
        let store = try slow.store(shard: 0, epoch: lease.epoch)
        let began = Date()
        let error = #expect(throws: PostgresError.self) {
            try store.apply([.deletePending(identifier: "job"), .runStarted(contractRun(1, "job"))])
        }
        #expect(error?.kind == .commitUnknown, "\(String(describing: error))")
        #expect((error.map { "\($0)" } ?? "").contains("may or may not be committed"))
        #expect(Date().timeIntervalSince(began) < 2.4, "the node waited for the slow commit")

        // Another node takes the shard once the lease has expired in database time: its acquire
        // waits for the lost commit's row lock, and its restore sees the run.
        var taken: ShardLease?
        let deadline = Date().addingTimeInterval(10)
        while taken == nil, Date() < deadline {
            taken = try old.acquire(shard: 0, node: "b", lease: .seconds(60))
            if taken == nil { try sleepFor(.milliseconds(50)) }
        }
        let newLease = try #require(taken)
        #expect(Date().timeIntervalSince(began) >= 2.4, "the acquire did not wait for the commit in flight")
        let restored = try old.store(shard: 0, epoch: newLease.epoch).restoredState()
        #expect(restored.unfinishedRuns.map(\.runID) == [1], "the new owner's restore: \(restored.unfinishedRuns)")
        // The old epoch commits nothing more.
        try expectFenced(store, shard: 0, epoch: lease.epoch, [.savePending(contractRequest("late"))])
    }

    /// Makes `connections` calls wait at once (each on its own connection: another session
    /// holds the leases table locked), so the pool keeps that many; answers the server's count
    /// of this database's sessions afterwards.
    private func fillPool(_ db: PostgresDatabase, conninfo: String, connections: Int) throws -> Int {
        let blocker = try RawConnection(conninfo)
        try blocker.run("BEGIN")
        try blocker.run("LOCK TABLE refreshd.leases IN ACCESS EXCLUSIVE MODE")
        let group = DispatchGroup()
        for _ in 0..<connections {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                do { _ = try db.leases() } catch { Issue.record("leases: \(error)") }
            }
        }
        let monitor = try RawConnection(conninfo)
        let waiting = "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()"
        let deadline = Date().addingTimeInterval(10)
        while try monitor.integer(waiting) < connections, Date() < deadline { usleep(20_000) }
        try blocker.run("COMMIT")
        group.wait()
        blocker.close()
        let sessions = try monitor.integer("""
            SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
            """)
        monitor.close()
        return sessions
    }
}
