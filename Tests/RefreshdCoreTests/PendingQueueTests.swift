import Testing
@testable import RefreshdCore

@Suite struct PendingQueueTests {
    func request(_ id: String, _ ms: Int64, seq: UInt64, kind: TaskKind = .processing, ns: String = "default",
                 origin: PendingRequest.Origin = .retry) -> PendingRequest {
        PendingRequest(identifier: id, namespace: ns, kind: kind, earliest: Instant(milliseconds: ms),
                       submitted: Instant(milliseconds: 1), sequence: seq, requiresExternalPower: true,
                       requiresNetworkConnectivity: false, origin: origin)
    }

    @Test func compactRecordsRoundTripEveryField() {
        var q = PendingQueue()
        let r = request("a.b", 5_000, seq: 7, kind: .appRefresh, ns: "other", origin: .resubmit)
        q.insert(r)
        #expect(q["a.b"] == r)
        #expect(q.pendingCount(namespace: "other", kind: .appRefresh) == 1)
        #expect(q.pendingCount(namespace: "other", kind: .processing) == 0)
        #expect(q.pendingCount(namespace: "default", kind: .appRefresh) == 0)
    }

    @Test func replacingAndRemovingKeepCountsAndSkipStaleEntries() {
        var q = PendingQueue()
        q.insert(request("x", 100, seq: 1))
        q.insert(request("x", 300, seq: 2))  // replaces: the entry at 100 is stale
        q.insert(request("y", 200, seq: 3))
        #expect(q.count == 2)
        #expect(q.pendingCount(namespace: "default", kind: .processing) == 2)
        let now = Instant(milliseconds: 1_000)
        #expect(q.popDue(at: now).map(q.identifier(of:)) == "y")
        #expect(q.popDue(at: now).map(q.identifier(of:)) == "x")
        #expect(q.popDue(at: now) == nil)
        q.remove("x")
        #expect(q.count == 1)
        #expect(q.pendingCount(namespace: "default", kind: .processing) == 1)
    }

    @Test func compactionKeepsOrderAndDropsStaleEntries() {
        var q = PendingQueue()
        for round in 0..<3 {
            for i in 0..<1000 { q.insert(request("id.\(i)", Int64(10_000 - i), seq: UInt64(round * 1000 + i))) }
        }
        #expect(q.count == 1000)
        var popped: [Int64] = []
        while let e = q.popDue(at: Instant(milliseconds: 20_000)) { popped.append(e.due) }
        #expect(popped.count == 1000)
        #expect(popped == popped.sorted())
    }

    /// A request's wake-up is kept in its record (issue 33: the light snapshot reads it there)
    /// without growing the records' array: 32 bytes a slot, as before.
    @Test func theRecordKeepsItsStrideOf32Bytes() {
        #expect(MemoryLayout<PendingQueue.Record?>.stride == 32)
    }

    /// The record's wake-up is its entry's, whether it fits the record's 32 bits past the
    /// earliest date or goes to the overflow table, through replacements and removals.
    @Test func theRecordsWakeUpIsItsEntrysNearAndFar() {
        var q = PendingQueue()
        let far = Int64(UInt32.max) + 5_000  // past what the record's 32 bits hold
        q.insert(request("x", 1_000, seq: 1), wake: 1_000 + far)
        #expect(q.wake(at: q.slots["x"]!) == 1_000 + far)
        #expect(q.liveHeapEntries.map(\.due) == [1_000 + far])
        q.insert(request("x", 2_000, seq: 2), wake: 2_500)  // replaced: a near one
        #expect(q.wake(at: q.slots["x"]!) == 2_500)
        q.insert(request("y", 3_000, seq: 3), wake: 3_000 + Int64(UInt32.max) - 1)  // the largest that fits
        #expect(q.wake(at: q.slots["y"]!) == 3_000 + Int64(UInt32.max) - 1)
        q.insert(request("y", 3_000, seq: 4), wake: 3_000 + Int64(UInt32.max))  // the first that does not
        #expect(q.wake(at: q.slots["y"]!) == 3_000 + Int64(UInt32.max))
        q.insert(request("z", 4_000, seq: 5), wake: 100)  // before earliest: wakes at earliest
        #expect(q.wake(at: q.slots["z"]!) == 4_000)
        q.remove("y")
        #expect(q.wake(at: q.slots["y"]!) == nil)
        q.insert(request("y", 6_000, seq: 6))
        #expect(q.wake(at: q.slots["y"]!) == 6_000)
        for entry in q.liveHeapEntries { #expect(q.wake(at: entry.slot) == entry.due) }
    }
}
