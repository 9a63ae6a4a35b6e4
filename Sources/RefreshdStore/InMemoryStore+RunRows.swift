import DequeModule
import RefreshdCore

/// The in-memory store's run table: rows in run id order in deques, found by id, and the
/// daily prune. Apart from `InMemoryStore+Tables.swift` (the fold of every change) because run
/// rows are kept by id, not by the identifier's slot.
extension InMemoryStore.Tables {
        /// The row of a run, if it exists.
        func run(_ id: Int64) -> RunRecord? { runIndex(id).map { runRows[$0] } }

        /// Where a run's row is: the newest run is checked first (the one most often looked up),
        /// then a binary search.
        ///
        /// Run ids are handed out one by one, so the rows after the last one a prune kept (the
        /// recent ones, which are the ones looked up: a run's process start and its end) are
        /// dense: the id's distance from the newest is its distance in the table, tried before
        /// the search. The search is on the deque itself, not through the generic collection
        /// protocols (unspecialized across modules, it was 5% of a simulated year).
        func runIndex(_ id: Int64) -> Int? {
            guard let last = runOrder.last else { return nil }
            if last == id { return runOrder.count - 1 }
            guard id < last else { return nil }
            let back = last - id
            if back < Int64(runOrder.count) {
                let guess = runOrder.count - 1 - Int(back)
                if runOrder[guess] == id { return guess }
            }
            let low = Self.lowerBound(of: id, in: runOrder)
            return low < runOrder.count && runOrder[low] == id ? low : nil
        }

        /// The first index of `ids` (ascending) not below `id`.
        static func lowerBound(of id: Int64, in ids: Deque<Int64>) -> Int {
            var low = 0, count = ids.count
            while count > 0 {
                let half = count / 2
                if ids[low + half] < id {
                    low += half + 1
                    count -= half + 1
                } else {
                    count = half
                }
            }
            return low
        }

        /// Inserts a new run's row in id order (run ids usually grow, so usually an append).
        mutating func insertOrdered(_ run: RunRecord) {
            if runOrder.last.map({ $0 < run.runID }) ?? true {
                runOrder.append(run.runID)
                runRows.append(run)
                runEnds.append(Self.endKey(run))
            } else {
                let index = Self.lowerBound(of: run.runID, in: runOrder)
                runOrder.insert(run.runID, at: index)
                runRows.insert(run, at: index)
                runEnds.insert(Self.endKey(run), at: index)
            }
        }

        /// A row's entry in `runEnds`.
        static func endKey(_ run: RunRecord) -> Int64 { run.ended?.milliseconds ?? .max }

        /// Drops the runs that ended before `cutoff`, except each identifier's latest (as
        /// SQLite's `DELETE … NOT IN (SELECT MAX(run_id) … GROUP BY identifier)`). Once a day.
        /// The rows that go are nearly always the oldest, a prefix, dropped from the front; any
        /// other (behind a row that stays) is removed on its own.
        mutating func pruneRuns(endedBefore cutoff: Instant, journal: inout [InMemoryStore.Undo]) {
            var going: [Int] = []
            let before = cutoff.milliseconds
            for i in runEnds.indices where runEnds[i] < before {
                let latest = slot(of: runRows[i].identifier, hint: runRows[i].slot).flatMap { latestRun[Int($0)] }
                if latest != runOrder[i] { going.append(i) }
            }
            guard !going.isEmpty else { return }
            var prefix = 0
            while prefix < going.count, going[prefix] == prefix { prefix += 1 }
            let dropped = Array(runRows.prefix(prefix))
            runRows.removeFirst(prefix)
            runOrder.removeFirst(prefix)
            runEnds.removeFirst(prefix)
            var others: [(index: Int, row: RunRecord)] = []
            for index in going[prefix...].reversed() {
                others.append((index - prefix, runRows.remove(at: index - prefix)))
                runOrder.remove(at: index - prefix)
                runEnds.remove(at: index - prefix)
            }
            journal.append(.prunedRuns(dropped, others))
        }
}
