import Foundation

/// The simulation's model of the shared container's staged playlists: which dates have a
/// complete playlist (switch times and asset identifiers, never bytes), folder by folder, as the
/// real stager writes `<folder>/playlists/<date>.json`. A modelled staging run puts its dates in
/// as pending when it starts; they count as staged only when the run is seen to finish
/// successfully (an expired, killed or stopped run leaves the container as it was, as the real
/// stager's rename-last writes do).
///
/// Keyed by folder (issue 23): each instance of a staging template stages into its own folder
/// (`wallpaper-{user}`) and its widget reads that folder, so one user's staging never makes
/// another user's widget look staged; a user whose staging failed sees their own fallback.
///
/// Shared by the modelled staging action and the modelled playlist provider, behind one lock.
final class ContainerModel: @unchecked Sendable {
    /// One staged day: its switch times (minutes after local midnight, sorted) and assets.
    struct Day: Sendable, Hashable {
        var switches: [Int]
        var assets: [String]
    }

    private let lock = NSLock()
    /// Folder -> date -> staged day.
    private var staged: [String: [String: Day]] = [:]
    private var pending: [Int64: (folder: String, days: [String: Day])] = [:]

    /// A staging run started: its days become staged in `folder` if it finishes successfully.
    func begin(runID: Int64, folder: String, days: [String: Day]) { lock.withLock { pending[runID] = (folder, days) } }

    /// A run finished: on success its days are staged ("playlist for date D staged").
    func finish(runID: Int64, success: Bool) {
        lock.withLock {
            guard let run = pending.removeValue(forKey: runID), success else { return }
            for (date, day) in run.days { staged[run.folder, default: [:]][date] = day }
        }
    }

    /// The staged day of `date` (`YYYY-MM-DD`) in `folder`, if any.
    func day(_ date: String, folder: String) -> Day? { lock.withLock { staged[folder]?[date] } }

    /// Every staged date of `folder`, sorted.
    func stagedDates(folder: String) -> [String] { lock.withLock { staged[folder]?.keys.sorted() ?? [] } }
}
