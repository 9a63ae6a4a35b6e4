import Testing
@testable import RefreshdCore

/// `SchedulerCore.inKeyOrder`, the walk the invariant checker uses instead of sorting its tables
/// after every step, reports exactly what a sorted walk reports, in the same order.
@Suite struct InvariantKeyOrderTests {
    /// A check that finds zero, one or two violations per entry, depending on its value.
    static func check(_ key: String, _ value: Int, _ found: inout [InvariantViolation]) {
        if value % 3 == 0 { found.append(.init(.failureStreakNotPositive, identifier: key, "first \(value)")) }
        if value % 5 == 0 { found.append(.init(.heldPastRelease, identifier: key, "second \(value)")) }
    }

    @Test func sameViolationsInTheSameOrderAsASortedWalk() {
        var generator = SplitMix64(seed: 41)
        for _ in 0..<2_000 {
            let count = Int(generator.next() % 7)
            var table: [String: Int] = [:]
            for _ in 0..<count { table["id\(generator.next() % 20)"] = Int(generator.next() % 16) }
            var expected: [InvariantViolation] = [.init(.tooManyRuns, "already there")]
            for (key, value) in table.sorted(by: { $0.key < $1.key }) { Self.check(key, value, &expected) }
            var actual: [InvariantViolation] = [.init(.tooManyRuns, "already there")]
            SchedulerCore.inKeyOrder(table, into: &actual, Self.check)
            #expect(actual == expected, "\(table)")
        }
    }

    @Test func anEmptyOrCleanTableAddsNothing() {
        var found: [InvariantViolation] = []
        SchedulerCore.inKeyOrder([String: Int](), into: &found, Self.check)
        SchedulerCore.inKeyOrder(["a": 1, "b": 2, "c": 4], into: &found, Self.check)
        #expect(found.isEmpty)
    }
}
