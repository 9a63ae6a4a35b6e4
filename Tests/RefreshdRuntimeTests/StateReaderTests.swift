import RefreshdCore
import RefreshdRuntime
import Testing
import RefreshdStore

/// The state as a reader sees it across a cluster's shards (issue 32): `status` pages the runs
/// newest start first across shards (a cluster's run ids say their shard, so ordering by id
/// showed the highest shard's runs first), every run once over the pages, with its output.
@Suite struct StateReaderTests {
    /// Two shards' stores; shard s's runs have ids from s × span + 1, started every 10 s,
    /// interleaved between the shards (shard 0 at 0 s, 20 s…; shard 1 at 10 s, 30 s…).
    func twoShards(runsEach: Int) throws -> StateReader {
        let stores = [InMemoryStore(), InMemoryStore()]
        for (shard, store) in stores.enumerated() {
            var changes: [StateChange] = []
            for n in 0..<runsEach {
                let id = Int64(shard) * ShardMap.runIDSpan + Int64(n) + 1
                let started = Instant(milliseconds: 1_000_000 + Int64(n * 20 + shard * 10) * 1000)
                changes.append(.runStarted(RunRecord(runID: id, identifier: "job\(shard)", kind: .processing, submitted: started,
                                                     earliest: started, started: started, deadline: started + .seconds(5))))
                changes.append(.runEnded(runID: id, identifier: "job\(shard)", ended: started + .seconds(1), outcome: .success,
                                         exitStatus: 0, signal: nil))
                changes.append(.runOutput(runID: id, output: RunOutput(lines: ["run \(id)"], earlier: 0, results: [])))
            }
            try store.apply(changes)
        }
        return StateReader(stores: stores, jobs: [])
    }

    @Test func statusPagesRunsNewestStartFirstAcrossShardsEachOnce() throws {
        let reader = try twoShards(runsEach: 7)
        var seen: [Int64] = []
        var before: Int64?
        var pages = 0
        repeat {
            let status = try reader.status(runs: 3, days: 7, before: before)
            seen += status.runs.map(\.runID)
            #expect(status.runs.allSatisfy { $0.output == ["run \($0.runID)"] }, "each run with its kept output")
            before = status.nextBefore
            pages += 1
        } while before != nil && pages < 10
        // Newest start first: the shards' runs alternate, 1's last (130 s), 0's last (120 s)...
        let span = ShardMap.runIDSpan
        let expected = (0..<7).reversed().flatMap { n in [span + Int64(n) + 1, Int64(n) + 1] }
        #expect(seen == expected, "\(seen)")
    }

    @Test func oneStoreIsReadAsItself() throws {
        let store = InMemoryStore()
        let started = Instant(milliseconds: 5_000_000)
        try store.apply([.runStarted(RunRecord(runID: 1, identifier: "solo", kind: .processing, submitted: started,
                                               earliest: started, started: started, deadline: started + .seconds(5)))])
        let reader = StateReader(stores: [store], jobs: [])
        #expect(try reader.status(runs: 20, days: 7) == StatusReport(store: store, runs: 20, days: 7))
        #expect(try reader.recentRuns(limit: 5).map(\.runID) == [1])
    }
}
