import Testing
@testable import RefreshdCore

/// The binary searches the run table, the simulation's history and the journal's slot lists
/// share, against linear scans.
@Suite struct SortedSearchTests {
    @Test func searchesAgreeWithLinearScansOnRandomAscendingArrays() {
        var random = SplitMix64(seed: 11)
        for _ in 0..<300 {
            var values: [Int64] = []
            var next: Int64 = Int64(random.next() % 5)
            for _ in 0..<Int(random.next() % 40) {
                values.append(next)
                next += 1 + Int64(random.next() % 4)
            }
            for probe in -1...(next + 1) {
                #expect(values.lowerBound(of: probe) == (values.firstIndex { $0 >= probe } ?? values.endIndex))
                let pairs = values.map { (id: $0, name: "r\($0)") }
                #expect(pairs.lowerBound(of: probe, by: \.id) == values.lowerBound(of: probe), "\(probe) in \(values)")
            }
        }
    }

    @Test func aValueAboveEveryElementBelongsAtTheEnd() {
        #expect([Int64]().lowerBound(of: 3) == 0)
        #expect([Int64](arrayLiteral: 1, 2).lowerBound(of: 3) == 2)
    }
}
