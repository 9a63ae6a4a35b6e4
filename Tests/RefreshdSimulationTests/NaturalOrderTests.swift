import Testing
@testable import RefreshdSimulation

/// The Simulate page and report list activities as a person counts them (issue 33: lanes came
/// as 1, 10, 11, ..., 2): digits by value, the rest by bytes, the same on every machine.
@Suite struct NaturalOrderTests {
    @Test func digitsSortByValueTheRestByBytes() {
        let ids = ["delivery 10", "delivery 2", "delivery 1", "delivery 11", "bus 3", "delivery 02", "Zed", "é1", "delivery"]
        #expect(ids.sorted(by: NaturalOrder.less)
            == ["Zed", "bus 3", "delivery", "delivery 1", "delivery 2", "delivery 02", "delivery 10", "delivery 11", "é1"])
        let numbers = (1...12).map(String.init).shuffled()
        #expect(numbers.sorted(by: NaturalOrder.less) == (1...12).map(String.init))
        #expect(!NaturalOrder.less("a", "a") && NaturalOrder.less("a", "a1") && !NaturalOrder.less("a1", "a"))
        #expect(NaturalOrder.less("99999999999999999999998", "99999999999999999999999"))  // no overflow
    }
}
