import Testing
@testable import RefreshdCore

/// The run lifecycle on its own, as another machine (a widget reload) will use it.
@Suite struct RunLifecycleTests {
    let t0 = Instant(milliseconds: 1_800_000_000_000)

    func order(_ id: Int64, _ key: String, allowance: Duration) -> LaunchOrder {
        LaunchOrder(runID: id, identifier: key, kind: .processing, started: t0, deadline: t0 + allowance, attempt: 1)
    }

    @Test func expirationAtTheAllowanceThenKillAfterTheGrace() {
        var runs = RunLifecycle()
        runs.start(order(1, "widget.reload", allowance: .seconds(10)))
        runs.start(order(2, "other", allowance: .seconds(60)))
        #expect(runs.run(for: "widget.reload") == 1)
        #expect(runs.nextDeadline == t0 + .seconds(10))
        var effects: [SchedulerEffect] = []
        runs.expireOverdue(at: t0 + .seconds(9), grace: { _ in .seconds(2) }, into: &effects)
        #expect(effects.isEmpty)
        runs.expireOverdue(at: t0 + .seconds(10), grace: { _ in .seconds(2) }, into: &effects)
        #expect(effects.contains(.expire(runID: 1)))
        #expect(runs.nextDeadline == t0 + .seconds(12))
        effects.removeAll()
        runs.expireOverdue(at: t0 + .seconds(12), grace: { _ in .seconds(2) }, into: &effects)
        #expect(effects.contains(.kill(runID: 1)))
        let ended = runs.end(1)
        #expect(ended.map { RunLifecycle.outcome(of: $0, exit: .signaled(9)) } == .expired)
        #expect(runs.end(1) == nil)  // a repeated report is ignored
        #expect(runs.run(for: "widget.reload") == nil)
        #expect(runs.count == 1)
    }

    @Test func aStopExpiresEveryRunAsInterrupted() {
        var runs = RunLifecycle()
        runs.start(order(1, "a", allowance: .seconds(30)))
        var effects: [SchedulerEffect] = []
        runs.expireAll(at: t0 + .seconds(1), grace: { _ in .seconds(5) }, into: &effects)
        #expect(effects == [.expire(runID: 1)])
        #expect(runs.nextDeadline == t0 + .seconds(6))
        let ended = runs.end(1)
        #expect(ended.map { RunLifecycle.outcome(of: $0, exit: .exited(0)) } == .interrupted)
    }
}
