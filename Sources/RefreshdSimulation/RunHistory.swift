import Foundation
import RefreshdCore

/// Every run of a simulation, folded from the batches the store committed, as the store folds
/// them but never pruned: the store keeps a month of finished runs (`pruneRuns`), and a report
/// of a year counts them all.
///
/// Fed through `InMemoryStore.onCommit`, so a batch the store refused is not in it either.
final class RunHistory: @unchecked Sendable {
    private let lock = NSLock()
    /// Runs in run id order (ids are handed out ascending: a new run is an append).
    private var runs: [RunRecord] = []

    func fold(_ changes: [StateChange]) {
        lock.withLock {
            for change in changes {
                switch change {
                case let .runStarted(run):
                    if runs.last.map({ $0.runID < run.runID }) ?? true {
                        runs.append(run)
                    } else {
                        runs.insert(run, at: runs.lowerBound(of: run.runID, by: \.runID))
                    }
                case let .runEnded(runID, _, ended, outcome, exitStatus, signal):
                    guard let index = index(of: runID) else { continue }
                    runs[index].ended = ended
                    runs[index].outcome = outcome
                    runs[index].exitStatus = exitStatus
                    runs[index].signal = signal
                default:
                    break
                }
            }
        }
    }

    /// Every run, oldest id first.
    var all: [RunRecord] { lock.withLock { runs } }

    /// The runs with an id above `runID`.
    func after(_ runID: Int64) -> [RunRecord] {
        lock.withLock { Array(runs[runs.lowerBound(of: runID + 1, by: \.runID)...]) }
    }

    /// Where a run is: the newest first (most ends are of the latest runs), then a search.
    private func index(of runID: Int64) -> Int? {
        if let last = runs.last, last.runID == runID { return runs.count - 1 }
        let index = runs.lowerBound(of: runID, by: \.runID)
        return index < runs.count && runs[index].runID == runID ? index : nil
    }
}
