import CLibPQ
import Foundation
import RefreshdCore
import RefreshdPostgres
import RefreshdRuntime
import RefreshdSimulation
import Testing
import RefreshdStore

/// The shared database on a real PostgreSQL 15 (a private server the tests start): the contract
/// every `ShardDatabase` keeps, and what only a real server shows (concurrent nodes on separate
/// connections, a server restart, the schema's versions).
@Suite struct PostgresDatabaseTests {
    @Test func keepsTheShardDatabaseContract() throws {
        let server = try PrivateServer.shared.get()
        try checkShardDatabaseContract {
            try PostgresDatabase(connection: try server.freshDatabase(), shardCount: 4)
        }
    }

    /// The same contract on the cluster simulation's modelled database (database time is its
    /// clock, moved instead of slept): what the simulation proves rests on the rules PostgreSQL keeps.
    @Test func theModelledDatabaseKeepsTheSameContract() throws {
        var database: ModelledDatabase?
        try checkShardDatabaseContract(wait: { span in database!.time = database!.time + span }) {
            let made = ModelledDatabase(shardCount: 4, time: Instant(milliseconds: 1_795_000_000_000))
            database = made
            return made
        }
    }

    /// Regression (the fault loop's 10.7 s SIGSTOP takeovers): an acquire does not wait for a
    /// lease row another session holds locked (a node paused inside a commit holds it until the
    /// server ends its idle transaction): it answers nil at once, so the acquiring node's
    /// thread, and its own renewals, never wait behind another node's transaction; once the row
    /// is free the shard is taken.
    @Test func anAcquireSkipsALockedLeaseRowInsteadOfWaitingForIt() throws {
        let server = try PrivateServer.shared.get()
        let conninfo = try server.freshDatabase()
        let db = try PostgresDatabase(connection: conninfo, shardCount: 1)
        defer { db.close() }
        let first = try #require(try db.acquire(shard: 0, node: "a", lease: .milliseconds(100)))
        usleep(200_000)  // a's lease has expired in database time
        let holder = try RawConnection(conninfo)
        try holder.run("BEGIN")
        try holder.run("SELECT epoch FROM refreshd.leases WHERE shard = 0 FOR UPDATE")
        let started = Date()
        let skipped = try db.acquire(shard: 0, node: "b", lease: .seconds(5))
        let waited = Date().timeIntervalSince(started)
        #expect(skipped == nil, "acquired a row another transaction holds: \(String(describing: skipped))")
        #expect(waited < 2, "the acquire waited \(waited) s for the row lock")
        try holder.run("ROLLBACK")
        let taken = try #require(try db.acquire(shard: 0, node: "b", lease: .seconds(5)))
        #expect(taken.owner == "b" && taken.epoch == first.epoch + 1, "\(taken)")
    }

    /// Two nodes (two databases objects: their own connections, their own threads) race to take
    /// one expired shard, many times: exactly one wins each round, and the loser's commits at
    /// its old epoch are fenced.
    @Test func twoNodesRacingForOneShardOneWins() throws {
        let server = try PrivateServer.shared.get()
        let conninfo = try server.freshDatabase()
        let nodes = [try PostgresDatabase(connection: conninfo, shardCount: 2),
                     try PostgresDatabase(connection: conninfo)]
        defer { nodes.forEach { $0.close() } }
        var epoch: Int64 = 0
        for round in 1...20 {
            let winners = Mutexed<[Int: ShardLease]>([:])
            let start = DispatchSemaphore(value: 0)
            let group = DispatchGroup()
            for (index, node) in nodes.enumerated() {
                group.enter()
                Thread.detachNewThread {
                    start.wait()
                    if let lease = try? node.acquire(shard: 1, node: "node-\(index)", lease: .milliseconds(100)) {
                        winners.withLock { $0[index] = lease }
                    }
                    group.leave()
                }
            }
            start.signal()
            start.signal()
            group.wait()
            let won = winners.withLock { $0 }
            #expect(won.count == 1, "round \(round): \(won.count) nodes took the shard: \(won)")
            guard let (winner, lease) = won.first else { continue }
            #expect(lease.epoch == epoch + 1, "round \(round)")
            let loser = 1 - winner
            if epoch > 0 {
                // The loser's store at the previous epoch (it may have led the shard before).
                try expectFenced(try nodes[loser].store(shard: 1, epoch: epoch), shard: 1, epoch: epoch,
                                 [.savePending(contractRequest("round-\(round)"))])
            }
            try nodes[winner].store(shard: 1, epoch: lease.epoch).apply([.savePending(contractRequest("round-\(round)"))])
            epoch = lease.epoch
            try sleepFor(.milliseconds(110))
        }
        #expect(try nodes[0].store(shard: 1, epoch: 0).pendingRequests().count == 20)
    }

    /// A node keeps committing while its lease runs out and another node takes the shard: every
    /// commit the first node saw succeed is in what the second restores, and every later one is
    /// fenced (the lease row's lock orders each commit against the acquire).
    @Test func commitsRacingATakeoverAreEitherRestoredOrFenced() throws {
        let server = try PrivateServer.shared.get()
        let conninfo = try server.freshDatabase()
        let old = try PostgresDatabase(connection: conninfo, shardCount: 4)
        let new = try PostgresDatabase(connection: conninfo)
        defer {
            old.close()
            new.close()
        }
        // One takeover per shard: each falls at another point of the old node's commits.
        for shard in 0..<4 {
            let lease = try #require(try old.acquire(shard: shard, node: "old", lease: .milliseconds(300)))
            let store = try old.store(shard: shard, epoch: lease.epoch)
            let committed = Mutexed<[Int64]>([])
            let fenced = Mutexed<Int>(0)
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                defer { done.signal() }
                var runID: Int64 = 1
                // Until two refusals in a row: the takeover happened and holds. Batches of 40
                // runs, so that a commit lasts long enough for an acquire to fall inside it.
                while fenced.withLock({ $0 }) < 2 {
                    let ids = Array(runID..<(runID + 40))
                    do {
                        try store.apply(ids.map { .runStarted(contractRun($0, "job-\($0)")) })
                        committed.withLock { $0.append(contentsOf: ids) }
                        fenced.withLock { $0 = 0 }
                    } catch is ShardFenced {
                        fenced.withLock { $0 += 1 }
                    } catch {
                        Issue.record("shard \(shard), commit \(runID): \(error)")
                        return
                    }
                    runID += 40
                }
            }
            var taken: ShardLease?
            while taken == nil {
                taken = try new.acquire(shard: shard, node: "new", lease: .seconds(60))
                if taken == nil { try sleepFor(.milliseconds(1)) }
            }
            let restored = try new.store(shard: shard, epoch: taken!.epoch).restoredState()
            done.wait()
            let seen = Set(restored.unfinishedRuns.map(\.runID))
            let succeeded = committed.withLock { $0 }
            #expect(!succeeded.isEmpty)
            let difference = Set(succeeded).symmetricDifference(seen).sorted()
            #expect(Set(succeeded) == seen, "shard \(shard): committed \(succeeded.count), restored \(seen.count): \(difference)")
        }
    }

    /// The server stops (immediately, as in a crash) while a node uses it: calls fail with an
    /// error naming the database, then work again once it is back (the pool reconnects), and
    /// nothing committed is lost.
    @Test func aServerRestartFailsCallsThenTheyWorkAndNothingIsLost() throws {
        let server = try PrivateServer()
        defer { server.shutDown() }
        let conninfo = try server.freshDatabase()
        let db = try PostgresDatabase(connection: conninfo, shardCount: 2,
                                      timeouts: PostgresTimeouts(connect: .seconds(2), statement: .seconds(3)))
        defer { db.close() }
        let lease = try #require(try db.acquire(shard: 0, node: "a", lease: .seconds(60)))
        let store = try db.store(shard: 0, epoch: lease.epoch)
        try store.apply([.savePending(contractRequest("before")), .runStarted(contractRun(1, "before"))])

        try server.stop(crash: true)
        for call in ["apply", "renew", "now"] {
            let error = #expect(throws: PostgresError.self, "\(call) while the server is down") {
                switch call {
                case "apply": try store.apply([.savePending(contractRequest("during"))])
                case "renew": _ = try db.renew(shard: 0, node: "a", epoch: lease.epoch, lease: .seconds(60))
                default: _ = try db.now()
                }
            }
            #expect(error?.kind == .unreachable, "\(call): \(String(describing: error))")
            let text = error.map(String.init(describing:)) ?? ""
            #expect(text.contains("database test_") && text.contains(server.folder), "\(call): \(text)")
        }

        try server.start()
        #expect(try db.renew(shard: 0, node: "a", epoch: lease.epoch, lease: .seconds(60)) != nil)
        try store.apply([.savePending(contractRequest("after"))])
        let restored = try store.restoredState()
        #expect(restored.pending.map(\.identifier).sorted() == ["after", "before"])
        #expect(restored.unfinishedRuns.map(\.runID) == [1])

        // A server that stops answering (every process of it stopped, as a partition looks from
        // the node): the call returns within the statement bound, not never.
        let frozen = serverProcesses(under: server.folder)
        #expect(!frozen.isEmpty)
        frozen.forEach { kill($0, SIGSTOP) }
        let began = Date()
        let hung = #expect(throws: PostgresError.self) {
            try store.apply([.savePending(contractRequest("frozen"))])
        }
        let waited = Date().timeIntervalSince(began)
        frozen.forEach { kill($0, SIGCONT) }
        #expect(hung?.kind == .timeout, "\(String(describing: hung))")
        #expect(waited >= 2.9 && waited < 6, "the call waited \(waited) s for a 3 s bound")
        try store.apply([.savePending(contractRequest("thawed"))])
        #expect(try store.pendingRequests().map(\.identifier).sorted() == ["after", "before", "thawed"])
    }

    /// Instances (which the random batches do not make) fold as in memory: restored in the order
    /// they were added, a replaced one keeping its place, per shard.
    @Test func instancesFoldAsInMemory() throws {
        let server = try PrivateServer.shared.get()
        let db = try PostgresDatabase(connection: try server.freshDatabase(), shardCount: 2)
        defer { db.close() }
        let lease = try #require(try db.acquire(shard: 1, node: "a", lease: .seconds(60)))
        let store = try db.store(shard: 1, epoch: lease.epoch)
        let memory = InMemoryStore()
        let batches: [[StateChange]] = [
            [.saveInstance(InstanceRecord(template: "feed", key: "b", values: ["user": "b"])),
             .saveInstance(InstanceRecord(template: "feed", key: "a", values: ["user": "a", "region": "eu"]))],
            [.saveInstance(InstanceRecord(template: "mail", key: "z", values: [:])),
             .saveInstance(InstanceRecord(template: "feed", key: "b", values: ["user": "b2"]))],
            [.deleteInstance(template: "feed", key: "a"), .deleteInstance(template: "none", key: "x"),
             .saveInstance(InstanceRecord(template: "feed", key: "a", values: ["user": "a&=%"]))],
        ]
        for batch in batches {
            try store.apply(batch)
            try memory.apply(batch)
            #expect(try store.restoredState().instances == memory.restoredState().instances, "after \(batch)")
        }
        #expect(try store.restoredState().instances.map(\.key) == ["b", "z", "a"])
        #expect(try db.store(shard: 0, epoch: 0).restoredState().instances.isEmpty)
    }

    /// A commit's saved instances and pending requests go out many rows a statement: past the
    /// statement's 1,000 rows, with one row saved twice in a batch (sent before the second), and
    /// a delete between two saves of one request, they fold as in memory, in order.
    @Test func rowsSentManyAStatementFoldAsInMemory() throws {
        let server = try PrivateServer.shared.get()
        let db = try PostgresDatabase(connection: try server.freshDatabase(), shardCount: 1)
        defer { db.close() }
        let lease = try #require(try db.acquire(shard: 0, node: "a", lease: .seconds(60)))
        let store = try db.store(shard: 0, epoch: lease.epoch)
        let memory = InMemoryStore()
        let t0 = Instant(milliseconds: 1_800_000_000_000)
        func request(_ id: String, _ sequence: UInt64, at seconds: Int64 = 60) -> PendingRequest {
            PendingRequest(identifier: id, namespace: "feed", kind: .appRefresh, earliest: t0 + .seconds(seconds), submitted: t0,
                           sequence: sequence)
        }
        var batch: [StateChange] = []
        for i in 0..<2_500 {
            let key = "user\(i)"
            batch.append(.saveInstance(InstanceRecord(template: "feed", key: key, values: ["user": key])))
            batch.append(.savePending(request("feed[\(key)]", UInt64(i))))
        }
        batch += [.saveInstance(InstanceRecord(template: "feed", key: "user7", values: ["user": "seven"])),
                  .savePending(request("feed[user7]", 9_000, at: 120)),
                  .saveInstance(InstanceRecord(template: "feed", key: "user7", values: ["user": "7"])),
                  .savePending(request("feed[user7]", 9_002, at: 150)),
                  .deletePending(identifier: "feed[user8]"),
                  .savePending(request("feed[user8]", 9_001, at: 180))]
        try store.apply(batch)
        try memory.apply(batch)
        let restored = try store.restoredState(), expected = try memory.restoredState()
        #expect(restored.instances == expected.instances)
        #expect(restored.pending.sorted { $0.identifier < $1.identifier } == expected.pending.sorted { $0.identifier < $1.identifier })
        #expect(restored.instances.count == 2_500 && restored.instances[7].key == "user7", "\(restored.instances[7])")
        #expect(restored.pending.first { $0.identifier == "feed[user8]" }?.sequence == 9_001)
        #expect(restored.pending.first { $0.identifier == "feed[user7]" }?.sequence == 9_002)
    }

    /// A schema made by a newer refreshd is refused with a clear error; a database created with
    /// one shard count refuses another; a bad connection string and an unreachable server say
    /// what was expected, and never show the password.
    @Test func schemaVersionsShardCountsAndConnectionErrors() throws {
        let server = try PrivateServer.shared.get()
        let conninfo = try server.freshDatabase()
        let db = try PostgresDatabase(connection: conninfo)
        #expect(db.shardCount == PostgresDatabase.defaultShardCount)
        db.close()
        #expect(try PostgresDatabase(connection: conninfo).shardCount == 16, "reopened with the stored count")
        let count = #expect(throws: PostgresError.self) { try PostgresDatabase(connection: conninfo, shardCount: 8) }
        #expect(count?.kind == .shardCount(stored: 16, asked: 8))
        #expect(String(describing: count!).contains("created with 16 shards, not 8"))

        try PrivateServer.execute("UPDATE refreshd.schema_version SET version = 99", on: conninfo)
        let newer = #expect(throws: PostgresError.self) { try PostgresDatabase(connection: conninfo) }
        #expect(newer?.kind == .newerSchema(found: 99, known: 4))
        #expect(String(describing: newer!).contains("newer than version 4"))

        let foreign = try server.freshDatabase()
        try PrivateServer.execute("CREATE SCHEMA refreshd; CREATE TABLE refreshd.jobs (id int)", on: foreign)
        let refused = #expect(throws: PostgresError.self) { try PostgresDatabase(connection: foreign) }
        #expect(refused?.kind == .foreignSchema)

        let bad = #expect(throws: PostgresError.self) { try PostgresDatabase(connection: "host=/x nonsense") }
        #expect(bad?.kind == .badConnectionString)
        let gone = #expect(throws: PostgresError.self) {
            try PostgresDatabase(connection: "postgres://refreshd:s3cret@/nowhere?host=\(server.folder)/missing",
                                 timeouts: PostgresTimeouts(connect: .seconds(2)))
        }
        let text = gone.map(String.init(describing:)) ?? ""
        #expect(gone?.kind == .unreachable && text.contains("database nowhere") && !text.contains("s3cret"), "\(text)")
    }

    /// Nodes opening a new database at once create its schema once (the advisory lock).
    @Test func nodesCreatingTheSchemaAtOnce() throws {
        let server = try PrivateServer.shared.get()
        let conninfo = try server.freshDatabase()
        let opened = Mutexed<[Int]>([])
        let group = DispatchGroup()
        for _ in 0..<4 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                do {
                    let db = try PostgresDatabase(connection: conninfo, shardCount: 3)
                    opened.withLock { $0.append(db.shardCount) }
                    db.close()
                } catch {
                    Issue.record("open: \(error)")
                }
            }
        }
        group.wait()
        #expect(opened.withLock { $0 } == [3, 3, 3, 3])
        let db = try PostgresDatabase(connection: conninfo)
        defer { db.close() }
        #expect(try db.leases().count == 3)
    }
}

/// The fixture itself: whatever happens to the process that owns a private server, no postgres
/// process and no folder is left behind.
@Suite struct PrivateServerTests {
    /// The owner of the control pipe is killed with SIGKILL (here a `sleep` that holds the only
    /// write end, standing for the test process): the watchdog reads end-of-file, stops the
    /// server and removes the folder.
    @Test func killingTheOwnerStopsTheServerAndRemovesTheFolder() throws {
        let (folder, asUser) = try makeFolder()
        let spawned = try PrivateServer.spawnWatchdog(folder: folder, asUser: asUser)
        let holder = try spawnHolding(spawned.control)
        close(spawned.control)
        let answers = FileHandle(fileDescriptor: spawned.answers, closeOnDealloc: true)
        #expect(String(decoding: answers.readData(ofLength: 8), as: UTF8.self) == "started\n")
        try waitFor("the server to run") { PQping("host=\(folder) dbname=postgres user=refreshd") == PQPING_OK }
        #expect(processes(under: folder).count >= 3, "watchdog, postmaster and its helpers")

        kill(holder, SIGKILL)
        var status: Int32 = 0
        waitpid(holder, &status, 0)
        waitpid(spawned.pid, &status, 0)
        try waitFor("every process of the server to end") { processes(under: folder).isEmpty }
        #expect(!FileManager.default.fileExists(atPath: folder), "the folder outlived its owner")
    }

    /// The owner dies while a test has the server frozen (SIGSTOP, as the frozen-server test
    /// does): the watchdog thaws it before stopping it, so the shutdown still ends. (It once
    /// waited forever on a stopped backend, leaving the server and its folder behind.)
    @Test func aServerFrozenWhenItsOwnerDiesIsStillStopped() throws {
        let (folder, asUser) = try makeFolder()
        let spawned = try PrivateServer.spawnWatchdog(folder: folder, asUser: asUser)
        let holder = try spawnHolding(spawned.control)
        close(spawned.control)
        let answers = FileHandle(fileDescriptor: spawned.answers, closeOnDealloc: true)
        #expect(String(decoding: answers.readData(ofLength: 8), as: UTF8.self) == "started\n")
        try waitFor("the server to run") { PQping("host=\(folder) dbname=postgres user=refreshd") == PQPING_OK }
        let connection = PQconnectdb("host=\(folder) dbname=postgres user=refreshd")
        defer { PQfinish(connection) }
        #expect(PQstatus(connection) == CONNECTION_OK)
        let frozen = processes(under: folder).filter { $0 != spawned.pid }
        frozen.forEach { kill($0, SIGSTOP) }

        kill(holder, SIGKILL)
        var status: Int32 = 0
        waitpid(holder, &status, 0)
        var ended = false
        defer {  // should the watchdog hang after all, leave nothing behind
            if !ended {
                frozen.forEach { kill($0, SIGCONT) }
                kill(spawned.pid, SIGKILL)
                waitpid(spawned.pid, &status, 0)
                try? FileManager.default.removeItem(atPath: folder)
            }
        }
        try waitFor("the watchdog to stop the server and end") {
            ended = waitpid(spawned.pid, &status, WNOHANG) == spawned.pid
            return ended
        }
        try waitFor("every process of the server to end") { processes(under: folder).isEmpty }
        #expect(!FileManager.default.fileExists(atPath: folder), "the folder outlived its owner")
    }

    /// The watchdog itself is killed with SIGKILL: the server's parent-death signal stops it.
    @Test func killingTheWatchdogStopsTheServer() throws {
        let (folder, asUser) = try makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let spawned = try PrivateServer.spawnWatchdog(folder: folder, asUser: asUser)
        defer { close(spawned.control) }
        let answers = FileHandle(fileDescriptor: spawned.answers, closeOnDealloc: true)
        #expect(String(decoding: answers.readData(ofLength: 8), as: UTF8.self) == "started\n")
        try waitFor("the server to run") { PQping("host=\(folder) dbname=postgres user=refreshd") == PQPING_OK }
        kill(spawned.pid, SIGKILL)
        var status: Int32 = 0
        waitpid(spawned.pid, &status, 0)
        try waitFor("every process of the server to end") { processes(under: folder).isEmpty }
    }

    private func makeFolder() throws -> (String, String) {
        var template = Array((NSTemporaryDirectory() + "refreshd-pg-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw PrivateServer.Failure("mkdtemp") }
        let folder = String(cString: made)
        guard geteuid() == 0 else { return (folder, "") }
        let account = try #require(getpwnam("postgres"))
        chown(folder, account.pointee.pw_uid, account.pointee.pw_gid)
        return (folder, "setpriv --reuid=postgres --regid=postgres --init-groups")
    }

    /// A `sleep` that holds `fd` (as its stdout) and nothing else of ours.
    private func spawnHolding(_ fd: Int32) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fd, 1)
        let words: [String] = ["/bin/sleep", "600"]
        let argv = words.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, "/bin/sleep", &actions, nil, argv, environ) == 0 else {
            throw PrivateServer.Failure("posix_spawn sleep")
        }
        return pid
    }

    private func waitFor(_ what: String, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(20)
        while !condition() {
            guard Date() < deadline else { throw PrivateServer.Failure("timed out waiting for \(what)") }
            usleep(20_000)
        }
    }
}

/// A value behind a lock, for the tests' threads.
final class Mutexed<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()

    init(_ value: Value) { self.value = value }

    func withLock<T>(_ body: (inout Value) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
