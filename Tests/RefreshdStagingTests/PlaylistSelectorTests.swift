import RefreshdConfig
import Testing
@testable import RefreshdStaging

@Suite struct PlaylistSelectorTests {
    let library = (1...20).map { "img\($0).jpg" }
    let day = CivilDate("2026-11-24")!

    @Test func sameLibraryDateAndSeedGiveTheSameRanking() {
        let selector = PlaylistSelector(seed: 7, assetsPerDay: 4, noRepeatDays: 3)
        let a = selector.rank(library: library, date: day, history: [:])
        let b = selector.rank(library: library.reversed(), date: day, history: [:])
        #expect(a == b)
        #expect(a.order.count == 20 && Set(a.order) == Set(library))
        #expect(selector.rank(library: library, date: day.adding(days: 1), history: [:]).order != a.order)
        #expect(PlaylistSelector(seed: 8, assetsPerDay: 4, noRepeatDays: 3).rank(library: library, date: day, history: [:]).order != a.order)
    }

    @Test func noAssetRepeatsWithinTheWindow() {
        let selector = PlaylistSelector(seed: 1, assetsPerDay: 4, noRepeatDays: 3)
        var history: [CivilDate: [String]] = [:]
        for offset in 0..<30 {
            let date = day.adding(days: offset)
            let ranking = selector.rank(library: library, date: date, history: history)
            #expect(ranking.shortage == nil)
            let chosen = Array(ranking.order.prefix(4))
            for back in 1...3 {
                let earlier = history[date.adding(days: -back)] ?? []
                #expect(Set(chosen).isDisjoint(with: earlier), "day \(offset) repeats day \(offset - back)")
            }
            history[date] = chosen
        }
    }

    @Test func aSmallLibrarySaysSoAndRepeatsTheLeastRecentlyUsed() {
        let small = ["a.jpg", "b.jpg", "c.jpg", "d.jpg", "e.jpg"]
        let selector = PlaylistSelector(seed: 1, assetsPerDay: 3, noRepeatDays: 2)
        let history: [CivilDate: [String]] = [
            day.adding(days: -1): ["a.jpg", "b.jpg"],
            day.adding(days: -2): ["c.jpg", "a.jpg"],
            day.adding(days: -5): ["d.jpg"],          // outside the window: fresh again
        ]
        let ranking = selector.rank(library: small, date: day, history: history)
        #expect(ranking.freshCount == 2)
        #expect(Set(ranking.order.prefix(2)) == ["d.jpg", "e.jpg"])
        #expect(ranking.order[2] == "c.jpg")           // shown two days ago, before a and b (yesterday)
        #expect(Set(ranking.order.suffix(2)) == ["a.jpg", "b.jpg"])
        #expect(ranking.shortage == "library too small: 2 of 5 assets not shown in the last 2 days, 3 needed; repeating the least recently used")
    }
}
