import RefreshdConfig
import RefreshdCore

/// Which assets a day's playlist uses: pure and deterministic for a library, a date and a seed.
///
/// The library is shuffled by a generator seeded from the seed and the date; assets shown in
/// the no-repeat window (the days before `date`, from the playlists already staged) go after
/// every fresh one, least recently shown first. Staging walks this ranking and takes the first
/// assets that render, so an unreadable file costs its place, not the day. When fewer fresh
/// assets exist than a day needs, `shortage` says so and the least recently used repeat.
package struct PlaylistSelector: Sendable {
    package var seed: UInt64
    package var assetsPerDay: Int
    package var noRepeatDays: Int

    package init(seed: UInt64, assetsPerDay: Int, noRepeatDays: Int) {
        self.seed = seed
        self.assetsPerDay = assetsPerDay
        self.noRepeatDays = noRepeatDays
    }

    /// The ranking for one day.
    package struct Ranking: Sendable, Hashable {
        /// Every asset of the library, best first.
        package var order: [String]
        /// How many of `order`'s first assets were not shown within the window.
        package var freshCount: Int
        /// Set when the day needs more assets than are fresh: one line saying so.
        package var shortage: String?
    }

    /// Ranks `library` (asset identifiers, any order, duplicates ignored) for `date`, given the
    /// assets shown on earlier days (`history`; days outside the window are ignored).
    package func rank(library: [String], date: CivilDate, history: [CivilDate: [String]]) -> Ranking {
        var rng = SplitMix64(seed: seed ^ SplitMix64.mix(UInt64(bitPattern: date.dayNumber)))
        var shuffled = Array(Set(library)).sorted()
        if shuffled.count > 1 {
            for i in stride(from: shuffled.count - 1, to: 0, by: -1) {
                let j = Int(rng.next() % UInt64(i + 1))
                shuffled.swapAt(i, j)
            }
        }
        var lastShown: [String: CivilDate] = [:]
        let windowStart = date.adding(days: -noRepeatDays)
        for (day, assets) in history where day >= windowStart && day < date {
            for asset in assets where (lastShown[asset].map { $0 < day } ?? true) { lastShown[asset] = day }
        }
        let fresh = shuffled.filter { lastShown[$0] == nil }
        let position = Dictionary(uniqueKeysWithValues: shuffled.enumerated().map { ($1, $0) })
        let recent = shuffled.filter { lastShown[$0] != nil }.sorted { a, b in
            let da = lastShown[a, default: date], db = lastShown[b, default: date]
            return da != db ? da < db : position[a, default: 0] < position[b, default: 0]
        }
        var shortage: String?
        if fresh.count < assetsPerDay {
            shortage = "library too small: \(fresh.count) of \(shuffled.count) assets not shown in the last "
                + "\(noRepeatDays) days, \(assetsPerDay) needed; repeating the least recently used"
        }
        return Ranking(order: fresh + recent, freshCount: fresh.count, shortage: shortage)
    }
}
