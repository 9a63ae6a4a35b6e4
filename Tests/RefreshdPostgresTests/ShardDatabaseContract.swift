import RefreshdCore
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// The contract of `ShardDatabase` (RefreshdCore/Cluster/ShardDatabase.swift), checked on any
/// implementation: PostgreSQL and the cluster simulation's modelled database run the same
/// checks (the modelled one passes its own `wait`: it advances its database clock, no sleep).
///
/// `make` opens a fresh, empty database with at least 2 shards. `lease` is the lease the checks
/// take (short: they wait for leases to expire); `wait` lets at least that much database time
/// pass. Every expiry is judged by the database's clock (`now()`), never this process's.
func checkShardDatabaseContract(lease: Duration = .milliseconds(300),
                                wait: (Duration) throws -> Void = { try sleepFor($0) },
                                _ make: () throws -> any ShardDatabase) throws {
    let db = try make()
    let shard = 1
    let leaseMilliseconds = lease.components.seconds * 1000 + lease.components.attoseconds / 1_000_000_000_000_000

    // A new database: every shard, unheld, epoch 0.
    let fresh = try db.leases()
    #expect(db.shardCount >= 2)
    #expect(fresh.map(\.shard) == Array(0..<db.shardCount), "one lease row per shard, by shard")
    #expect(fresh.allSatisfy { $0.owner == nil && $0.epoch == 0 }, "\(fresh)")
    #expect(try db.pendingCommands(shard: shard).isEmpty)

    // Acquire: epoch 1, expiry = database now + lease.
    let before = try db.now()
    let a1 = try #require(try db.acquire(shard: shard, node: "a", lease: lease))
    let after = try db.now()
    #expect(a1.shard == shard && a1.owner == "a" && a1.epoch == 1)
    #expect(a1.expiresAt >= before + lease && a1.expiresAt <= after + lease + .milliseconds(1),
            "expiry \(a1.expiresAt) is not database now (\(before)...\(after)) + \(leaseMilliseconds) ms")
    // Held: nobody else takes it.
    #expect(try db.acquire(shard: shard, node: "b", lease: lease) == nil)
    #expect(try db.leases()[shard] == a1)
    // Another shard is independent.
    let other = try #require(try db.acquire(shard: 0, node: "b", lease: .seconds(60)))
    #expect(other.epoch == 1 && other.owner == "b")

    // Renew: only by the holder at its epoch, and it moves the expiry forward.
    #expect(try db.renew(shard: shard, node: "b", epoch: 1, lease: lease) == nil)
    #expect(try db.renew(shard: shard, node: "a", epoch: 2, lease: lease) == nil)
    let renewed = try #require(try db.renew(shard: shard, node: "a", epoch: 1, lease: lease))
    #expect(renewed.epoch == 1 && renewed.owner == "a" && renewed.expiresAt >= a1.expiresAt)

    // The holder's fenced store commits and reads back.
    let storeA = try db.store(shard: shard, epoch: 1)
    try storeA.apply([.savePending(contractRequest("kept")), .runStarted(contractRun(1, "kept"))])
    #expect(try storeA.pendingRequests().map(\.identifier) == ["kept"])
    // A store at an epoch never acquired is fenced, and writes nothing.
    let wrong = try db.store(shard: shard, epoch: 7)
    try expectFenced(wrong, shard: shard, epoch: 7, [.savePending(contractRequest("ghost"))])
    #expect(try storeA.pendingRequests().map(\.identifier) == ["kept"])
    // Another shard's state is its own.
    #expect(try db.store(shard: 0, epoch: 1).pendingRequests().isEmpty)

    // Expired (database time): renew refuses and never re-acquires; the holder's own commit is
    // refused and leaves nothing.
    try wait(lease + .milliseconds(50))
    #expect(try db.now() > renewed.expiresAt)
    #expect(try db.renew(shard: shard, node: "a", epoch: 1, lease: lease) == nil)
    #expect(try db.leases()[shard].epoch == 1)
    try expectFenced(storeA, shard: shard, epoch: 1, [
        .savePending(contractRequest("late")), .deletePending(identifier: "kept"),
    ])
    #expect(try storeA.pendingRequests().map(\.identifier) == ["kept"], "an expired lease's commit left something")

    // Takeover: b gets epoch 2, sees everything a committed, and a stays fenced.
    let b2 = try #require(try db.acquire(shard: shard, node: "b", lease: .seconds(60)))
    #expect(b2.epoch == 2 && b2.owner == "b")
    let storeB = try db.store(shard: shard, epoch: 2)
    let restored = try storeB.restoredState()
    #expect(restored.pending.map(\.identifier) == ["kept"])
    #expect(restored.unfinishedRuns.map(\.runID) == [1])
    let fence = try expectFenced(storeA, shard: shard, epoch: 1, [.deletePending(identifier: "kept")])
    #expect(fence?.current?.epoch == 2 && fence?.current?.owner == "b", "the refusal names the lease as it is")
    try storeB.apply([.deletePending(identifier: "kept")])
    #expect(try storeB.pendingRequests().isEmpty)

    // Release: only the holder at its epoch; then another node takes it at once, epoch + 1.
    try db.release(shard: shard, node: "a", epoch: 2)
    try db.release(shard: shard, node: "b", epoch: 1)
    #expect(try db.acquire(shard: shard, node: "a", lease: lease) == nil, "a release by others freed the lease")
    try db.release(shard: shard, node: "b", epoch: 2)
    let released = try db.leases()[shard]
    let releasedAt = try db.now()
    #expect(released.epoch == 2 && released.expiresAt <= releasedAt)
    try expectFenced(storeB, shard: shard, epoch: 2, [.savePending(contractRequest("after release"))])
    let a3 = try #require(try db.acquire(shard: shard, node: "a", lease: lease))
    #expect(a3.epoch == 3 && a3.owner == "a")

    // A node taking back its own expired lease gets a new epoch: what it led before is fenced.
    try wait(lease + .milliseconds(50))
    let a4 = try #require(try db.acquire(shard: shard, node: "a", lease: .seconds(60)))
    #expect(a4.epoch == 4)
    try expectFenced(try db.store(shard: shard, epoch: 3), shard: shard, epoch: 3, [.savePending(contractRequest("x"))])
    try db.store(shard: shard, epoch: 4).apply([.savePending(contractRequest("x"))])

    // Heartbeats: the nodes alive at the database's instant, sorted.
    #expect(try db.heartbeat(node: "n2", ttl: .seconds(60)) == ["n2"])
    #expect(try db.heartbeat(node: "n1", ttl: lease) == ["n1", "n2"])
    try wait(lease + .milliseconds(50))
    #expect(try db.heartbeat(node: "n3", ttl: .seconds(60)) == ["n2", "n3"], "an expired heartbeat still counts")

    // Commands: idempotent by id, per shard, oldest first; applied (in a fenced commit) leaves the queue.
    let c1 = ShardCommand(id: "cmd-1", shard: shard, payload: #"{"submit":"feed"}"#)
    let c2 = ShardCommand(id: "cmd-2", shard: shard, payload: #"{"cancel":"feed"}"#)
    #expect(try db.enqueueCommand(c1))
    #expect(try db.enqueueCommand(c2))
    #expect(try !db.enqueueCommand(c1), "a retried command was queued twice")
    #expect(try db.enqueueCommand(ShardCommand(id: "cmd-3", shard: 0, payload: "{}")))
    #expect(try db.pendingCommands(shard: shard) == [c1, c2])
    #expect(try db.pendingCommands(shard: 0).map(\.id) == ["cmd-3"])
    let applied = StateChange.putRecord(MachineRecord(table: ShardCommand.appliedTable, key: c1.id, value: "{}"))
    try expectFenced(try db.store(shard: shard, epoch: 3), shard: shard, epoch: 3, [applied])
    #expect(try db.pendingCommands(shard: shard) == [c1, c2], "a fenced commit applied a command")
    try db.store(shard: shard, epoch: 4).apply([applied])
    #expect(try db.pendingCommands(shard: shard) == [c2])
    #expect(try !db.enqueueCommand(c1), "an applied command was queued again")
    // Several at once (one transaction where the database has them): the same rule for each.
    let c4 = ShardCommand(id: "cmd-4", shard: shard, payload: "{}"), c5 = ShardCommand(id: "cmd-5", shard: 0, payload: "{}")
    #expect(try db.enqueueCommands([c1, c2, c4, c5]) == ["cmd-4", "cmd-5"], "a batch queued a command already queued or applied")
    #expect(try db.pendingCommands(shard: shard) == [c2, c4])
    #expect(try db.pendingCommands(shard: 0).map(\.id) == ["cmd-3", "cmd-5"])

    // A node taking back its own unexpired lease (a restarted node with the same name) gets a
    // new epoch at once, so whatever its previous life still holds is fenced.
    let held = try #require(try db.leases().first { $0.owner == "b" && $0.shard == 0 })
    let oldStore = try db.store(shard: 0, epoch: held.epoch)
    let again = try #require(try db.acquire(shard: 0, node: "b", lease: .seconds(60)))
    #expect(again.owner == "b" && again.epoch == held.epoch + 1)
    try expectFenced(oldStore, shard: 0, epoch: held.epoch, [.savePending(contractRequest("previous life"))])
    // A release at a stale epoch does nothing.
    try db.release(shard: 0, node: "b", epoch: held.epoch)
    #expect(try db.leases()[0] == again)

    // Shards outside the range are refused.
    #expect(throws: (any Error).self) { try db.acquire(shard: db.shardCount, node: "a", lease: lease) }
    #expect(throws: (any Error).self) { try db.store(shard: -1, epoch: 1) }
}

/// Applies `changes` to `store` and expects `ShardFenced` for `shard` at `epoch`.
@discardableResult
func expectFenced(_ store: any StateStoring, shard: Int, epoch: Int64, _ changes: [StateChange],
                  sourceLocation: SourceLocation = #_sourceLocation) throws -> ShardFenced? {
    do {
        try store.apply(changes)
        Issue.record("shard \(shard)'s commit at epoch \(epoch) was not fenced", sourceLocation: sourceLocation)
        return nil
    } catch let fenced as ShardFenced {
        #expect(fenced.shard == shard && fenced.epoch == epoch, "\(fenced)", sourceLocation: sourceLocation)
        return fenced
    }
}

func sleepFor(_ duration: Duration) throws {
    let (seconds, attoseconds) = duration.components
    var time = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
    var remaining = timespec()
    while nanosleep(&time, &remaining) != 0 { time = remaining }
}

func contractRequest(_ identifier: String, earliest: Instant = Instant(milliseconds: 1_795_000_000_000)) -> PendingRequest {
    PendingRequest(identifier: identifier, namespace: "ns", kind: .processing, earliest: earliest, submitted: earliest,
                   sequence: 1, requiresExternalPower: false, requiresNetworkConnectivity: false, origin: .submitted)
}

func contractRun(_ runID: Int64, _ identifier: String) -> RunRecord {
    let start = Instant(milliseconds: 1_795_000_000_000)
    return RunRecord(runID: runID, identifier: identifier, kind: .processing, submitted: start, earliest: start,
                     started: start, deadline: start + .seconds(30))
}
