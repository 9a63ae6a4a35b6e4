import Foundation

/// The simulation's model of the shared container's staged playlists: which dates have a
/// complete playlist (switch times and asset identifiers, never bytes). A modelled staging run
/// puts its dates in as pending when it starts; they count as staged only when the run is seen
/// to finish successfully (an expired, killed or stopped run leaves the container as it was,
/// as the real stager's rename-last writes do).
///
/// Shared by the modelled staging action and the modelled playlist provider, behind one lock.
final class ContainerModel: @unchecked Sendable {
    /// One staged day: its switch times (minutes after local midnight, sorted) and assets.
    struct Day: Sendable, Hashable {
        var switches: [Int]
        var assets: [String]
    }

    private let lock = NSLock()
    private var staged: [String: Day] = [:]
    private var pending: [Int64: [String: Day]] = [:]

    /// A staging run started: its days become staged if it finishes successfully.
    func begin(runID: Int64, days: [String: Day]) { lock.withLock { pending[runID] = days } }

    /// A run finished: on success its days are staged ("playlist for date D staged").
    func finish(runID: Int64, success: Bool) {
        lock.withLock {
            guard let days = pending.removeValue(forKey: runID), success else { return }
            for (date, day) in days { staged[date] = day }
        }
    }

    /// The staged day of `date` (`YYYY-MM-DD`), if any.
    func day(_ date: String) -> Day? { lock.withLock { staged[date] } }

    /// Every staged date, sorted.
    var stagedDates: [String] { lock.withLock { staged.keys.sorted() } }
}
