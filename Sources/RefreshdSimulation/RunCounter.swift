import Foundation
import RefreshdCore

/// Runs launched per job, shared with the host's behaviour model.
final class RunCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var jobs = HintedNames()
    private var counts: [Int] = []

    /// The run number of `id`'s next launch (1 for its first): through the launch's slot hint,
    /// comparing one name, or one hash of the identifier.
    func next(_ id: String, hint: SlotHint = .none) -> Int {
        lock.withLock {
            let (job, added) = jobs.number(of: id, hint: hint)
            if added { counts.append(0) }
            counts[Int(job)] += 1
            return counts[Int(job)]
        }
    }
}
