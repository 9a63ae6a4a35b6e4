import Foundation
import RefreshdCore
import RefreshdRuntime
@testable import RefreshdDashboard
@testable import RefreshdWeb
import Testing

/// The dashboard checks the scheduler's invariants at most once a minute (a full check reads
/// every pending request: about 1 s of the loop at 1,000,000 instances), on an instant source
/// of the test's own: a gather within the minute shows the last check's findings without
/// checking, one a minute after the check checks again.
@Suite struct InvariantsCadenceTests {
    /// An instant the test moves.
    final class Hands: @unchecked Sendable {
        private let lock = Lock()
        private var instant = ContinuousClock.now
        var now: ContinuousClock.Instant { lock.withLock { instant } }
        func advance(_ by: Duration) { lock.withLock { instant += by } }
    }

    struct Facts { var violations: [InvariantViolation] }

    @Test func aGatherWithinTheMinuteDoesNotCheckAgain() async {
        let hands = Hands()
        let cadence = InvariantsCadence(now: { hands.now })
        let found = InvariantViolation(.pendingUnplaced, identifier: "a.job", "in no place")
        var checks: [Bool] = []
        // What a gather on the loop returns: the check's findings when told to check.
        func gather() async -> Facts {
            await cadence.gather(\.violations) { check in
                checks.append(check)
                return Facts(violations: check ? [found] : [])
            }
        }
        #expect(await gather().violations == [found])
        hands.advance(.seconds(30))
        #expect(await gather().violations == [found], "the last check's findings, kept")
        hands.advance(.seconds(29))
        _ = await gather()
        #expect(checks == [true, false, false], "checked once in the first minute")
        hands.advance(.seconds(1))
        _ = await gather()
        hands.advance(.seconds(59))
        _ = await gather()
        #expect(checks == [true, false, false, true, false], "checked again a minute after the check, then not")
        #expect(cadence.latest == [found])
    }
}
