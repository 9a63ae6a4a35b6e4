import Testing
@testable import RefreshdCore

/// `LeaseMachine` as input -> exact effects (issue 24): each step is one event the node engine
/// reports (a tick, a database answer with the monotonic instant its call was sent), followed
/// by exactly what the machine answers. Default settings: lease 10 s, renew every 3.333 s,
/// margin 2 s, so a lease confirmed for a call sent at t is fenced by the node at t + 8 s.
@Suite struct LeaseMachineTests {
    typealias M = LeaseMachine
    static let t0 = Instant(milliseconds: 1_000_000)
    static let db0 = Instant(milliseconds: 1_800_000_000_000)

    static func at(_ seconds: Double) -> Instant { t0 + .milliseconds(Int64(seconds * 1000)) }
    /// The n-th renewal instant (every 3,333 ms).
    static func r(_ n: Int64) -> Instant { t0 + .milliseconds(3333 * n) }

    static func lease(_ shard: Int, _ owner: String?, epoch: Int64 = 1, expires: Instant = db0 + .seconds(10)) -> ShardLease {
        ShardLease(shard: shard, owner: owner, epoch: epoch, expiresAt: expires)
    }

    static func free(_ count: Int) -> [ShardLease] {
        (0..<count).map { ShardLease(shard: $0, owner: nil, epoch: 0, expiresAt: db0) }
    }

    /// A machine of `node` that has acquired and leads `shards` (all at epoch 1, sent at t0).
    static func leading(_ node: String = "a", shards: [Int], of count: Int, live: [String]) -> M {
        var m = M(node: node, shardCount: count)
        _ = m.handle(.tick, at: t0)
        _ = m.handle(.surveyed(live: live, leases: free(count), databaseNow: db0), at: t0)
        for shard in m.shards.keys.sorted() where !shards.contains(shard) {
            _ = m.handle(.acquired(shard: shard, lease: nil, sentAt: t0), at: t0)
        }
        for shard in shards {
            _ = m.handle(.acquired(shard: shard, lease: lease(shard, node), sentAt: t0), at: t0)
        }
        return m
    }

    @Test func startSurveysThenAcquiresItsShareAndLeadsOnlyWhenConfirmed() {
        var m = M(node: "a", shardCount: 4)
        let renew = Self.at(10.0 / 3)
        #expect(m.handle(.tick, at: Self.t0) == [.survey, .armTimer(at: renew)])
        #expect(m.handle(.surveyed(live: ["a"], leases: Self.free(4), databaseNow: Self.db0), at: Self.t0)
            == [.acquire(shard: 0), .acquire(shard: 1), .acquire(shard: 2), .acquire(shard: 3), .armTimer(at: renew)])
        #expect(m.led.isEmpty)  // nothing is led before its acquire is confirmed
        #expect(!m.mayLaunch(shard: 0, at: Self.t0))
        // Confirmed 100 ms later, for a call sent at t0: the self-fence is at t0 + 8 s.
        #expect(m.handle(.acquired(shard: 0, lease: Self.lease(0, "a"), sentAt: Self.t0), at: Self.at(0.1))
            == [.lead(shard: 0, epoch: 1), .armTimer(at: renew)])
        #expect(m.handle(.acquired(shard: 1, lease: nil, sentAt: Self.t0), at: Self.at(0.1)) == [.armTimer(at: renew)])
        #expect(m.led == [0: 1])
        #expect(m.mayLaunch(shard: 0, at: Self.at(7.999)))
        #expect(!m.mayLaunch(shard: 0, at: Self.at(8)))
    }

    @Test func renewsEveryThirdOfTheLeaseAndMovesTheSelfFenceToTheSendInstant() {
        var m = Self.leading(shards: [0, 1], of: 2, live: ["a"])
        #expect(m.handle(.tick, at: Self.at(3)) == [.armTimer(at: Self.at(10.0 / 3))])  // not due yet
        let sent = Self.at(10.0 / 3)
        #expect(m.handle(.tick, at: sent)
            == [.survey, .renew(shard: 0, epoch: 1), .renew(shard: 1, epoch: 1), .armTimer(at: Self.at(20.0 / 3))])
        // Shard 0's renewal confirmed 1.5 s after it was sent: its deadline is send + 8 s,
        // not answer + 8 s.
        _ = m.handle(.renewed(shard: 0, epoch: 1, lease: Self.lease(0, "a"), sentAt: sent), at: sent + .milliseconds(1500))
        #expect(m.shards[0] == .leading(epoch: 1, confirmed: sent))
        // Shard 1's renewal failed (database unreachable): its deadline stays t0 + 8 s.
        #expect(m.handle(.renewFailed(shard: 1, epoch: 1), at: sent + .seconds(2)) == [.armTimer(at: Self.at(20.0 / 3))])
        #expect(m.shards[1] == .leading(epoch: 1, confirmed: Self.t0))
    }

    @Test func selfFenceAtSendPlusLeaseMinusMarginIsItsOwnTimer() {
        var m = Self.leading(shards: [0], of: 1, live: ["a"])
        let r1 = Self.at(10.0 / 3), r2 = Self.at(20.0 / 3)
        #expect(m.handle(.tick, at: r1) == [.survey, .renew(shard: 0, epoch: 1), .armTimer(at: r2)])
        _ = m.handle(.renewFailed(shard: 0, epoch: 1), at: r1)
        #expect(m.handle(.tick, at: r2) == [.survey, .renew(shard: 0, epoch: 1), .armTimer(at: Self.at(8))])
        _ = m.handle(.renewFailed(shard: 0, epoch: 1), at: r2)
        // At t0 + 8 s the timer fires: fenced by the node itself, before the database's expiry
        // (at least t0 + 10 s in database time).
        #expect(m.handle(.tick, at: Self.at(8))
            == [.fence(shard: 0, epoch: 1, reason: .renewalNotConfirmed(deadline: Self.at(8))), .armTimer(at: Self.r(3))])
        #expect(m.led.isEmpty)
        // A late confirmation of the lost lease changes nothing.
        #expect(m.handle(.renewed(shard: 0, epoch: 1, lease: Self.lease(0, "a"), sentAt: r2), at: Self.at(8.1)) == [.armTimer(at: Self.r(3))])
        #expect(m.led.isEmpty)
    }

    /// A publication's gate (issue 32): a term may write while it holds its shard at its epoch
    /// (led or being handed over) and before its self-fence instant; never after, never for an
    /// older epoch, never once released.
    @Test func aTermMayWriteOnlyWhileItsLeaseHoldsAtItsEpoch() {
        var m = Self.leading(shards: [0, 1], of: 2, live: ["a"])
        #expect(m.mayWrite(shard: 0, epoch: 1, at: Self.at(7.9)))
        #expect(!m.mayWrite(shard: 0, epoch: 1, at: Self.at(8)), "at the self-fence instant (sent + lease - margin)")
        #expect(!m.mayWrite(shard: 0, epoch: 2, at: Self.at(1)), "another epoch's term")
        // A node paused past its lease writes nothing at resume, even before its next event.
        #expect(!m.mayWrite(shard: 1, epoch: 1, at: Self.at(30)))
        // Handed over: still held (renewed while its runs end), so its runs' results may land.
        _ = m.handle(.surveyed(live: ["a", "b"], leases: [Self.lease(0, "a"), Self.lease(1, "a")], databaseNow: Self.db0), at: Self.at(1))
        #expect(!m.mayLaunch(shard: 1, at: Self.at(1)) && m.mayWrite(shard: 1, epoch: 1, at: Self.at(1)))
        _ = m.handle(.drained(shard: 1), at: Self.at(2))
        #expect(!m.mayWrite(shard: 1, epoch: 1, at: Self.at(2)), "released")
    }

    @Test func aPausePastTheLeaseFencesEveryShardFirstAtTheNextEvent() {
        var m = Self.leading(shards: [0, 1], of: 2, live: ["a"])
        // SIGSTOP for 30 s: the next event, whatever it is (here a late renewal answer), fences
        // both shards before anything else is done.
        let resumed = Self.at(30)
        #expect(m.handle(.renewed(shard: 0, epoch: 1, lease: Self.lease(0, "a"), sentAt: Self.at(3)), at: resumed)
            == [.fence(shard: 0, epoch: 1, reason: .renewalNotConfirmed(deadline: Self.at(8))),
                .fence(shard: 1, epoch: 1, reason: .renewalNotConfirmed(deadline: Self.at(8))),
                .armTimer(at: Self.at(10.0 / 3))])
        #expect(m.led.isEmpty)
        // The tick then surveys again and the shards are acquired anew (new epochs).
        #expect(m.handle(.tick, at: resumed) == [.survey, .armTimer(at: resumed + .milliseconds(3333))])
    }

    @Test func aRefusedRenewalOrARefusedCommitFencesThatShardOnly() {
        var m = Self.leading(shards: [0, 1], of: 2, live: ["a"])
        #expect(m.handle(.renewed(shard: 0, epoch: 1, lease: nil, sentAt: Self.at(1)), at: Self.at(1))
            == [.fence(shard: 0, epoch: 1, reason: .renewalRefused), .armTimer(at: Self.at(10.0 / 3))])
        #expect(m.handle(.commitFailed(shard: 1, epoch: 1, reason: "fenced"), at: Self.at(2))
            == [.fence(shard: 1, epoch: 1, reason: .commitRefused("fenced")), .armTimer(at: Self.at(10.0 / 3))])
        // A stale commit failure of an older epoch is ignored.
        var n = Self.leading(shards: [0], of: 1, live: ["a"])
        #expect(n.handle(.commitFailed(shard: 0, epoch: 0, reason: "old"), at: Self.at(2)) == [.armTimer(at: Self.at(10.0 / 3))])
        #expect(n.led == [0: 1])
    }

    @Test func sharesSpreadOverOneTwoAndThreeNodes() {
        // 16 shards: one node takes all, two take 8 each, three take 6, 6 and 4.
        func acquires(_ node: String, live: [String], leases: [ShardLease]) -> [Int] {
            var m = M(node: node, shardCount: 16)
            _ = m.handle(.tick, at: Self.t0)
            return m.handle(.surveyed(live: live, leases: leases, databaseNow: Self.db0), at: Self.t0).compactMap {
                if case let .acquire(shard) = $0 { shard } else { nil }
            }
        }
        #expect(acquires("a", live: ["a"], leases: Self.free(16)) == Array(0..<16))
        #expect(acquires("a", live: ["a", "b"], leases: Self.free(16)) == Array(0..<8))
        #expect(acquires("b", live: ["a", "b"], leases: Self.free(16)) == Array(8..<16))
        let a3 = acquires("a", live: ["a", "b", "c"], leases: Self.free(16))
        let b3 = acquires("b", live: ["a", "b", "c"], leases: Self.free(16))
        #expect(a3 == Array(0..<6))
        #expect(b3 == Array(5..<11))  // from its own starting point; the database settles 5
        // The third node, after a and b took theirs, takes what is left: 4 shards.
        var taken = Self.free(16)
        for s in 0..<6 { taken[s] = Self.lease(s, "a") }
        for s in 6..<12 { taken[s] = Self.lease(s, "b") }
        #expect(acquires("c", live: ["a", "b", "c"], leases: taken) == [12, 13, 14, 15])
    }

    @Test func aDeadNodesShardsAreTriedAndAnExpiredLeaseIsTaken() {
        var m = M(node: "b", shardCount: 2)
        _ = m.handle(.tick, at: Self.t0)
        // a held both; a's heartbeat is gone (not live) and shard 1's lease has expired.
        let leases = [Self.lease(0, "a", expires: Self.db0 + .seconds(5)), Self.lease(1, "a", expires: Self.db0 - .seconds(1))]
        #expect(m.handle(.surveyed(live: ["b"], leases: leases, databaseNow: Self.db0), at: Self.t0)
            == [.acquire(shard: 0), .acquire(shard: 1), .armTimer(at: Self.at(10.0 / 3))])
        // The database refuses shard 0 (unexpired in its time) and grants shard 1 at epoch 2.
        _ = m.handle(.acquired(shard: 0, lease: nil, sentAt: Self.t0), at: Self.t0)
        #expect(m.handle(.acquired(shard: 1, lease: Self.lease(1, "b", epoch: 2), sentAt: Self.t0), at: Self.t0)
            == [.lead(shard: 1, epoch: 2), .armTimer(at: Self.at(10.0 / 3))])
        // With a live owner and an unexpired lease, nothing is tried.
        var n = M(node: "b", shardCount: 1)
        _ = n.handle(.tick, at: Self.t0)
        #expect(n.handle(.surveyed(live: ["a", "b"], leases: [Self.lease(0, "a")], databaseNow: Self.db0), at: Self.t0)
            == [.armTimer(at: Self.at(10.0 / 3))])
    }

    @Test func aJoiningNodeGetsShardsBackGracefully() {
        // a leads all 4; b joins: the share becomes 2, a hands over its two highest shards,
        // keeps renewing them while their runs end, and releases each when drained.
        var m = Self.leading(shards: [0, 1, 2, 3], of: 4, live: ["a"])
        let leases = (0..<4).map { Self.lease($0, "a") }
        let renew = Self.at(10.0 / 3)
        #expect(m.handle(.surveyed(live: ["a", "b"], leases: leases, databaseNow: Self.db0), at: Self.at(1))
            == [.handOver(shard: 3, epoch: 1), .handOver(shard: 2, epoch: 1), .armTimer(at: renew)])
        #expect(m.led == [0: 1, 1: 1])
        #expect(!m.mayLaunch(shard: 3, at: Self.at(1)))
        #expect(m.handle(.tick, at: renew)
            == [.survey, .renew(shard: 0, epoch: 1), .renew(shard: 1, epoch: 1), .renew(shard: 2, epoch: 1),
                .renew(shard: 3, epoch: 1), .armTimer(at: Self.at(20.0 / 3))])
        #expect(m.handle(.drained(shard: 3), at: Self.at(4)) == [.release(shard: 3, epoch: 1), .armTimer(at: Self.at(20.0 / 3))])
        // A second survey before shard 2 drains hands nothing more over.
        #expect(m.handle(.surveyed(live: ["a", "b"], leases: leases, databaseNow: Self.db0), at: Self.at(4))
            == [.armTimer(at: Self.at(20.0 / 3))])
        #expect(m.handle(.drained(shard: 2), at: Self.at(5)) == [.release(shard: 2, epoch: 1), .armTimer(at: Self.at(20.0 / 3))])
        // The other side: b takes the released shards at its next survey.
        var b = M(node: "b", shardCount: 4)
        _ = b.handle(.tick, at: Self.t0)
        var after = leases
        after[2].expiresAt = Self.db0
        after[3].expiresAt = Self.db0
        #expect(b.handle(.surveyed(live: ["a", "b"], leases: after, databaseNow: Self.db0 + .seconds(5)), at: Self.t0)
            == [.acquire(shard: 2), .acquire(shard: 3), .armTimer(at: Self.at(10.0 / 3))])
    }

    @Test func aLeavingNodesSharesAreTakenByTheOthers() {
        // b and c each lead 2 of 6; a left (no heartbeat) and its 2 leases expired: b's share
        // becomes 3 and it takes one of them.
        var b = Self.leading("b", shards: [2, 3], of: 6, live: ["a", "b", "c"])
        var leases = [Self.lease(0, "a", expires: Self.db0 - .seconds(1)), Self.lease(1, "a", expires: Self.db0 - .seconds(1)),
                      Self.lease(2, "b"), Self.lease(3, "b"), Self.lease(4, "c"), Self.lease(5, "c")]
        #expect(b.handle(.surveyed(live: ["b", "c"], leases: leases, databaseNow: Self.db0), at: Self.at(1))
            == [.acquire(shard: 0), .armTimer(at: Self.at(10.0 / 3))])
        leases[0] = Self.lease(0, "b", epoch: 2)
        _ = b.handle(.acquired(shard: 0, lease: leases[0], sentAt: Self.at(1)), at: Self.at(1))
        // A share already held is kept: nothing more, nothing handed over.
        #expect(b.handle(.surveyed(live: ["b", "c"], leases: leases, databaseNow: Self.db0), at: Self.at(2))
            == [.armTimer(at: Self.at(10.0 / 3))])
    }

    @Test func anAcquireConfirmedPastItsSelfFenceIsGivenBackNotLed() {
        var m = M(node: "a", shardCount: 1)
        _ = m.handle(.tick, at: Self.t0)
        _ = m.handle(.surveyed(live: ["a"], leases: Self.free(1), databaseNow: Self.db0), at: Self.t0)
        #expect(m.handle(.acquired(shard: 0, lease: Self.lease(0, "a"), sentAt: Self.t0), at: Self.at(9))
            == [.release(shard: 0, epoch: 1), .armTimer(at: Self.at(10.0 / 3))])
        #expect(m.led.isEmpty)
    }

    /// Issue 32: a stop signal reaches every shard's runtime (its rule decides what it means),
    /// the node withdraws its heartbeat, surveys and takes nothing more (an acquire in flight is
    /// given back unused), renews what it still holds, releases each shard as it drains, and has
    /// left once it holds none; a second signal reaches the runtimes again.
    @Test func aStopSignalStopsEveryShardTakesNothingAndLeavesWhenNoneIsHeld() {
        // Leads 0 and 1; the acquire of 2 is on its way.
        var m = M(node: "a", shardCount: 3)
        _ = m.handle(.tick, at: Self.t0)
        _ = m.handle(.surveyed(live: ["a"], leases: Self.free(3), databaseNow: Self.db0), at: Self.t0)
        for shard in [0, 1] { _ = m.handle(.acquired(shard: shard, lease: Self.lease(shard, "a"), sentAt: Self.t0), at: Self.t0) }
        #expect(m.shards[2] == .acquiring)
        #expect(m.handle(.stopSignal("SIGTERM"), at: Self.at(1))
            == [.withdraw, .stopShard(shard: 0, epoch: 1, signal: "SIGTERM"), .stopShard(shard: 1, epoch: 1, signal: "SIGTERM"),
                .armTimer(at: Self.at(10.0 / 3))])
        #expect(m.led.isEmpty)  // no launch from now on
        // The acquire sent before the signal is answered: given back, not led.
        #expect(m.handle(.acquired(shard: 2, lease: Self.lease(2, "a"), sentAt: Self.t0), at: Self.at(1.5))
            == [.release(shard: 2, epoch: 1), .armTimer(at: Self.at(10.0 / 3))])
        // Renewals go on (a run may still be ending), the survey does not.
        #expect(m.handle(.tick, at: Self.at(10.0 / 3))
            == [.renew(shard: 0, epoch: 1), .renew(shard: 1, epoch: 1), .armTimer(at: Self.at(20.0 / 3))])
        // A survey answered anyway takes nothing, though every shard is free.
        #expect(m.handle(.surveyed(live: ["a"], leases: Self.free(3), databaseNow: Self.db0), at: Self.at(3.5))
            == [.armTimer(at: Self.at(20.0 / 3))])
        // A second signal reaches the runtimes again (theirs to decide: at once).
        #expect(m.handle(.stopSignal("SIGINT"), at: Self.at(4))
            == [.stopShard(shard: 0, epoch: 1, signal: "SIGINT"), .stopShard(shard: 1, epoch: 1, signal: "SIGINT"),
                .armTimer(at: Self.at(20.0 / 3))])
        #expect(m.handle(.drained(shard: 0), at: Self.at(4.5)) == [.release(shard: 0, epoch: 1), .armTimer(at: Self.at(20.0 / 3))])
        #expect(m.handle(.drained(shard: 1), at: Self.at(5)) == [.release(shard: 1, epoch: 1), .left])
        #expect(m.hasLeft)
        // A node that left is not called again: nothing answers.
        #expect(m.handle(.tick, at: Self.at(20)) == [])
    }

    /// A stopping node cut off from the database leaves by its self-fence deadline, however
    /// long its runs would take to end.
    @Test func aStoppingNodeCutOffLeavesAtItsSelfFenceDeadline() {
        var m = Self.leading(shards: [0], of: 1, live: ["a"])
        _ = m.handle(.stopSignal("SIGTERM"), at: Self.at(1))
        _ = m.handle(.tick, at: Self.at(10.0 / 3))
        _ = m.handle(.renewFailed(shard: 0, epoch: 1), at: Self.at(6))
        #expect(m.handle(.tick, at: Self.at(8))
            == [.fence(shard: 0, epoch: 1, reason: .renewalNotConfirmed(deadline: Self.at(8))), .left])
    }
}
