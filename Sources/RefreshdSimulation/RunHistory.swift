import Foundation
import RefreshdCore

/// Every run of a simulation, folded from the batches the store committed, as the store folds
/// them but never pruned: the store keeps a month of finished runs (`pruneRuns`), and a report
/// of a year counts them all.
///
/// Fed through `InMemoryStore.onCommit`, so a batch the store refused is not in it either. Kept
/// as the report reads it (a job by number, a run by its instants and outcome): a year of a
/// per-minute job is half a million runs, about 40 bytes each here against 150 as `RunRecord`s.
final class RunHistory: @unchecked Sendable {
    /// One run, its job by number (an index into `identifiers`).
    struct Entry: Sendable, Equatable {
        var job: Int32
        var run: SimulationReport.Run
    }

    private let lock = NSLock()
    /// Runs in run id order (ids are handed out ascending: a new run is an append).
    private var entries: [Entry] = []
    /// Job numbers by identifier (through the runs' slot hints).
    private var jobs = HintedNames()
    /// The number given last: runs of one job usually follow each other.
    private var lastNumber: Int32?

    func fold(_ changes: [StateChange]) {
        lock.withLock {
            for change in changes {
                switch change {
                case let .runStarted(record):
                    let entry = Entry(job: number(of: record.identifier, hint: record.slot),
                                      run: .init(runID: record.runID, earliest: record.earliest, started: record.started,
                                                 ended: record.ended, outcome: record.outcome))
                    if entries.last.map({ $0.run.runID < record.runID }) ?? true {
                        entries.append(entry)
                    } else {
                        entries.insert(entry, at: entries.lowerBound(of: record.runID, by: \.run.runID))
                    }
                case let .runEnded(runID, _, ended, outcome, _, _, _, _, _):
                    guard let index = index(of: runID) else { continue }
                    entries[index].run.ended = ended
                    entries[index].run.outcome = outcome
                default:
                    break
                }
            }
        }
    }

    /// Every run, oldest id first, and the identifiers the runs' job numbers stand for.
    func contents() -> (entries: [Entry], identifiers: [String]) {
        lock.withLock { (entries, jobs.names) }
    }

    /// The identifiers of the runs with an id above `runID`.
    func identifiers(after runID: Int64) -> Set<String> {
        lock.withLock {
            Set(entries[entries.lowerBound(of: runID + 1, by: \.run.runID)...].map { jobs.names[Int($0.job)] })
        }
    }

    /// Under `lock`: an identifier's number, given at its first run.
    private func number(of identifier: String, hint: SlotHint) -> Int32 {
        if let last = lastNumber, jobs.names[Int(last)] == identifier { return last }
        let number = jobs.number(of: identifier, hint: hint).number
        lastNumber = number
        return number
    }

    /// Where a run is: the newest first (most ends are of the latest runs), then where it is
    /// when no id is missing between it and the newest (ids are handed out one by one), then a
    /// search.
    private func index(of runID: Int64) -> Int? {
        guard let last = entries.last?.run.runID else { return nil }
        if last == runID { return entries.count - 1 }
        if runID < last, last - runID < Int64(entries.count) {
            let guess = entries.count - 1 - Int(last - runID)
            if entries[guess].run.runID == runID { return guess }
        }
        let index = entries.lowerBound(of: runID, by: \.run.runID)
        return index < entries.count && entries[index].run.runID == runID ? index : nil
    }
}
