import Testing
@testable import RefreshdCore

/// Restart: the saved records (the fold of every `persist`) restore the machine; deadlines
/// resume with their remaining time, and those that passed while down apply at start, stamped.
@Suite struct ActivityRestoreTests {
    let t0 = ActivityDriver.t0

    /// What a store holds after the given changes.
    static func fold(_ changes: [ActivityChange]) -> [Activity] {
        var records: [String: Activity] = [:]
        for change in changes {
            switch change {
            case let .save(a): records[a.id] = a
            case let .delete(id): records[id] = nil
            }
        }
        return records.values.sorted { $0.id < $1.id }
    }

    @Test func deadlinesResumeWithTheirRemainingTime() {
        var before = ActivityDriver()
        before.send(.restore([]))
        before.send(ActivityDriver.request("a", staleDate: t0 + .hours(2)))
        before.send(ActivityDriver.request("p", startAt: t0 + .hours(3)))
        let saved = Self.fold(before.changes)
        var after = ActivityDriver(now: t0 + .hours(1))
        after.send(.restore(saved))
        #expect(after.transitions.isEmpty)
        #expect(after.machine.activities == before.machine.activities)
        #expect(after.machine.nextDeadline == t0 + .hours(2))
        after.advance(to: t0 + .hours(3))
        #expect(after.state("a") == .stale)
        #expect(after.state("p") == .active)
        #expect(after.transitions.allSatisfy { $0.due == $0.applied })
    }

    @Test func deadlinesPassedWhileDownApplyAtStartStampedInOrder() {
        var before = ActivityDriver()
        before.send(.restore([]))
        before.send(ActivityDriver.request("a", staleDate: t0 + .hours(1)))
        before.send(ActivityDriver.request("e"))
        before.send(.end(id: "e", content: nil, policy: .after(t0 + .hours(2)), timestamp: t0))
        let saved = Self.fold(before.changes)
        // Down from t0 to 9 h: a went stale at 1 h and ended at 8 h; e was dismissed at 2 h.
        let start = t0 + .hours(9)
        var after = ActivityDriver(now: start)
        after.send(.restore(saved))
        #expect(after.transitions.map(\.due) == [t0 + .hours(1), t0 + .hours(2), t0 + .hours(8)])
        #expect(after.transitions.map(\.to) == [.stale, .dismissed, .ended])
        #expect(after.transitions.map(\.id) == ["a", "e", "a"])
        #expect(after.transitions.allSatisfy { $0.applied == start })
        #expect(after.activity("a")?.ended == t0 + .hours(8))
        // Its dismissal keeps its own instant: 12 h after start, 3 h from now.
        #expect(after.machine.nextDeadline == t0 + .hours(12))
        #expect(Self.fold(before.changes + after.changes).map(\.id) == ["a"])
    }

    @Test func heldUpdatesAndBudgetSurviveARestart() {
        var before = ActivityDriver(settings: ActivitySettings(highPriorityBudgetPerHour: 1))
        before.send(.restore([]))
        before.send(ActivityDriver.request("a"))
        before.send(ActivityDriver.update("a", progress: 0.1, at: t0, priority: .high))
        before.send(ActivityDriver.update("a", progress: 0.2, at: t0 + .seconds(5), priority: .high), at: t0 + .seconds(5))
        var after = ActivityDriver(settings: ActivitySettings(highPriorityBudgetPerHour: 1), now: t0 + .hours(2))
        after.send(.restore(Self.fold(before.changes)))
        #expect(after.activity("a")?.content == #"{"progress":0.2}"#)
        #expect(after.transitions.isEmpty)
        #expect(after.logs.contains { if case .transition = $0 { true } else { false } } == false)
        // Released at 1 h, stamped: that use counts, the first one has left the hour.
        #expect(after.activity("a")?.highPriorityUses == [t0 + .hours(1)])
        #expect(after.activity("a")?.held == nil)
    }

    @Test func restoreComesFirstAndOnce() {
        var d = ActivityDriver()
        d.send(ActivityDriver.request("a"))
        #expect(d.send(.restore([])) == .restoreNotFirst)
        #expect(d.state("a") == .active)
    }
}
