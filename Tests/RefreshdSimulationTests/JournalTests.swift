import Testing
import RefreshdCore
@testable import RefreshdSimulation

/// The journal's record of slots run keeps an ascending array instead of a set: it must answer
/// exactly as a set would, in any order of arrival.
@Suite struct JournalTests {
    @Test func theSortedSlotListAnswersAsASetWould() {
        var random = SplitMix64(seed: 42)
        for round in 0..<200 {
            var sorted: [Int64] = []
            var set: Set<Int64> = []
            for _ in 0..<(round % 50 + 1) {
                // Mostly ascending, as run dates are; sometimes back, sometimes a repeat.
                let value: Int64 = switch random.next() % 4 {
                case 0: Int64(random.next() % 100)
                case 1: sorted.last ?? 0
                default: (sorted.last ?? 0) + Int64(random.next() % 5)
                }
                #expect(Journal.insert(value, into: &sorted) == set.insert(value).inserted)
                #expect(sorted == set.sorted())
            }
        }
    }
}
