import Foundation
import Testing
import RefreshdCore

/// The `ShardDatabase` contract (issue 24), as checks any implementation must pass: the modelled
/// database runs them here, the PostgreSQL one will run the same function. `make` gives a fresh,
/// empty database of at least 2 shards; `wait` lets database time pass (the modelled database
/// moves its clock; a real one sleeps, so the leases used here are short).
func checkShardDatabaseContract(_ make: () throws -> any ShardDatabase,
                                wait: (Duration) throws -> Void = { Thread.sleep(forTimeInterval: Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18) }) throws {
    let db = try make()
    let lease = Duration.milliseconds(400)
    #expect(db.shardCount >= 2)
    let rows = try db.leases()
    #expect(rows.map(\.shard) == Array(0..<db.shardCount))
    #expect(rows.allSatisfy { $0.owner == nil })

    // Acquire a free shard: owner, a new epoch, an expiry in the database's future.
    let before = try db.now()
    let a1 = try #require(try db.acquire(shard: 0, node: "a", lease: lease))
    #expect(a1.owner == "a" && a1.shard == 0)
    #expect(a1.epoch > rows[0].epoch)
    #expect(a1.expiresAt >= before + lease)
    // Another node cannot take it while it has not expired; its owner takes it back with a new epoch.
    #expect(try db.acquire(shard: 0, node: "b", lease: lease) == nil)
    let a2 = try #require(try db.acquire(shard: 0, node: "a", lease: lease))
    #expect(a2.epoch == a1.epoch + 1)

    // Renew: only the holder at its epoch; never re-acquires.
    #expect(try db.renew(shard: 0, node: "b", epoch: a2.epoch, lease: lease) == nil)
    #expect(try db.renew(shard: 0, node: "a", epoch: a1.epoch, lease: lease) == nil)
    let renewed = try #require(try db.renew(shard: 0, node: "a", epoch: a2.epoch, lease: lease))
    #expect(renewed.epoch == a2.epoch && renewed.expiresAt >= a2.expiresAt)

    // A fenced store commits while the lease is its epoch's and unexpired.
    let record = MachineRecord(table: "contract", key: "k", value: "1")
    let storeA = try db.store(shard: 0, epoch: a2.epoch)
    try storeA.apply([.putRecord(record)])
    #expect(try storeA.records(table: "contract") == [record])
    // A store of an older epoch is refused with ShardFenced, and applies nothing.
    let stale = try db.store(shard: 0, epoch: a1.epoch)
    #expect(throws: ShardFenced.self) { try stale.apply([.putRecord(MachineRecord(table: "contract", key: "stale", value: "1"))]) }
    #expect(try storeA.records(table: "contract").map(\.key) == ["k"])

    // Expired in database time: the holder's commit and renewal are refused; another node takes
    // it with a new epoch and sees what was committed.
    try wait(lease + .milliseconds(200))
    #expect(throws: ShardFenced.self) { try storeA.apply([.putRecord(MachineRecord(table: "contract", key: "late", value: "1"))]) }
    #expect(try db.renew(shard: 0, node: "a", epoch: a2.epoch, lease: lease) == nil)
    let b1 = try #require(try db.acquire(shard: 0, node: "b", lease: lease))
    #expect(b1.owner == "b" && b1.epoch == a2.epoch + 1)
    let storeB = try db.store(shard: 0, epoch: b1.epoch)
    #expect(try storeB.records(table: "contract").map(\.key) == ["k"])
    do {
        try storeA.apply([.putRecord(MachineRecord(table: "contract", key: "zombie", value: "1"))])
        Issue.record("a zombie's commit was accepted")
    } catch let fenced as ShardFenced {
        #expect(fenced.shard == 0 && fenced.epoch == a2.epoch)
        #expect(fenced.current?.owner == "b")
    }

    // Release: another node may take it at once; a release at a stale epoch does nothing.
    try db.release(shard: 0, node: "a", epoch: a2.epoch)
    #expect(try db.acquire(shard: 0, node: "c", lease: lease) == nil)
    try db.release(shard: 0, node: "b", epoch: b1.epoch)
    let c1 = try #require(try db.acquire(shard: 0, node: "c", lease: lease))
    #expect(c1.epoch == b1.epoch + 1)
    // Shards are independent.
    #expect(try db.acquire(shard: 1, node: "a", lease: lease)?.owner == "a")
    #expect(Array(try db.leases().map(\.owner).prefix(2)) == ["c", "a"])

    // Heartbeats: the nodes alive at the database's instant, sorted.
    #expect(try db.heartbeat(node: "b", ttl: lease) == ["b"])
    #expect(try db.heartbeat(node: "a", ttl: lease) == ["a", "b"])
    try wait(lease + .milliseconds(200))
    #expect(try db.heartbeat(node: "b", ttl: lease) == ["b"])

    // Commands by id: queued once, pending until recorded as applied in the shard's state.
    let command = ShardCommand(id: "cmd-1", shard: 1, payload: #"{"v":1,"command":"submit","identifier":"x"}"#)
    #expect(try db.enqueueCommand(command))
    #expect(try !db.enqueueCommand(command))
    #expect(try db.pendingCommands(shard: 1) == [command])
    #expect(try db.pendingCommands(shard: 0).isEmpty)
    let a3 = try #require(try db.acquire(shard: 1, node: "a", lease: lease))
    try db.store(shard: 1, epoch: a3.epoch).apply([.putRecord(MachineRecord(table: ShardCommand.appliedTable, key: "cmd-1", value: "{}"))])
    #expect(try db.pendingCommands(shard: 1).isEmpty)
    #expect(try !db.enqueueCommand(command))
}
