import Foundation
@_spi(Benchmarks) import RefreshdCore

/// Runs launched per job, shared with the host's behaviour model.
final class RunCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var indexes: [String: Int32] = [:]
    private var names: [String] = []
    private var counts: [Int] = []
    private var hints = HintCache()

    /// The run number of `id`'s next launch (1 for its first): through the launch's slot hint,
    /// comparing one name, or one hash of the identifier.
    func next(_ id: String, hint: SlotHint = .none) -> Int {
        lock.withLock {
            let index: Int32
            if let found = hints.index(for: hint, matching: { names[$0] == id }) {
                index = found
            } else {
                if let known = indexes[id] {
                    index = known
                } else {
                    index = Int32(names.count)
                    indexes[id] = index
                    names.append(id)
                    counts.append(0)
                }
                hints.learn(hint, index)
            }
            counts[Int(index)] += 1
            return counts[Int(index)]
        }
    }
}
