import Testing
@testable import RefreshdCore

/// Every state times every event: the state it leads to, or the error (and then no change).
@Suite struct ActivityTransitionTableTests {
    /// Where the activity "a" is before the event (`none`: it never existed).
    enum Before: String, CaseIterable, Sendable { case none, pending, active, stale, ended, dismissed }
    enum Event: String, CaseIterable, Sendable { case request, update, end, ownerFailed, ownerSucceeded, timer, clock, settings, restore }
    enum Expected: Equatable { case state(ActivityState?), error(ActivityError) }

    static let t0 = ActivityDriver.t0

    static func prepared(_ before: Before) -> ActivityDriver {
        var d = ActivityDriver()
        d.send(.restore([]))
        switch before {
        case .none: break
        case .pending: d.send(ActivityDriver.request("a", startAt: t0 + .seconds(3600)))
        case .active: d.send(ActivityDriver.request("a", staleDate: t0 + .seconds(1800)))
        case .stale: d.send(ActivityDriver.request("a", staleDate: t0))
        case .ended:
            d.send(ActivityDriver.request("a"))
            d.send(.end(id: "a", content: nil, policy: .default, timestamp: t0))
        case .dismissed:
            d.send(ActivityDriver.request("a"))
            d.send(.end(id: "a", content: nil, policy: .immediate, timestamp: t0))
        }
        return d
    }

    static func expected(_ before: Before, _ event: Event) -> Expected {
        let current: ActivityState? = before == .none ? nil : ActivityState(rawValue: before.rawValue)
        switch (before, event) {
        case (_, .restore): return .error(.restoreNotFirst)
        case (.none, .request), (.dismissed, .request): return .state(.active)
        case (_, .request): return .error(.duplicateID(id: "a", state: current!))
        case (.none, .update): return .error(.unknownActivity(id: "a", event: .update))
        case (.none, .end): return .error(.unknownActivity(id: "a", event: .end))
        case (.pending, .update): return .error(.notAllowed(id: "a", state: .pending, event: .update))
        case (.active, .update), (.stale, .update): return .state(.active)
        case (.ended, .update), (.dismissed, .update): return .state(current)
        case (.pending, .end): return .state(.dismissed)
        case (.active, .end), (.stale, .end): return .state(.ended)
        case (.ended, .end), (.dismissed, .end): return .error(.notAllowed(id: "a", state: current!, event: .end))
        case (.active, .ownerFailed), (.stale, .ownerFailed): return .state(.ended)
        case (.pending, .timer): return .state(.active)         // its start date
        case (.active, .timer): return .state(.stale)           // its stale date
        case (.stale, .timer): return .state(.ended)            // the 8 h limit
        case (.ended, .timer): return .state(.dismissed)        // its dismissal (4 h after ending)
        default: return .state(current)                         // no change
        }
    }

    @Test(arguments: Before.allCases, Event.allCases)
    func transition(_ before: Before, _ event: Event) {
        var d = Self.prepared(before)
        let recordBefore = d.activity("a")
        let effectsBefore = d.effects.count
        let error: ActivityError?
        switch event {
        case .request: error = d.send(ActivityDriver.request("a"))
        case .update: error = d.send(ActivityDriver.update("a", progress: 0.5, at: Self.t0 + .seconds(1)), at: Self.t0 + .seconds(1))
        case .end: error = d.send(.end(id: "a", content: #"{"progress":1}"#, policy: .default, timestamp: Self.t0 + .seconds(1)))
        case .ownerFailed: error = d.send(.ownerFinished(owner: "job.download", outcome: .expired, reason: "allowance used up"))
        case .ownerSucceeded: error = d.send(.ownerFinished(owner: "job.download", outcome: .success, reason: nil))
        case .timer:
            let next = d.machine.nextDeadline ?? Self.t0 + .seconds(60)   // spurious when nothing is due
            error = d.send(.timerFired, at: next)
        case .clock: error = d.send(.clockChanged(expected: Self.t0 - .seconds(60)))
        case .settings: error = d.send(.settingsChanged(ActivitySettings(maxConcurrentPerNamespace: 3)))
        case .restore: error = d.send(.restore([]))
        }
        switch Self.expected(before, event) {
        case let .error(expectedError):
            #expect(error == expectedError)
            #expect(d.activity("a") == recordBefore, "a refused event changed the activity")
            #expect(d.effects[effectsBefore...].allSatisfy { if case .log(.refused) = $0 { true } else { false } })
            #expect(!expectedError.description.isEmpty)
        case let .state(state):
            #expect(error == nil)
            #expect(d.state("a") == state)
        }
    }

    @Test func errorsNameTheStateAndTheEvent() {
        var d = Self.prepared(.ended)
        let error = d.send(.end(id: "a", content: nil, policy: .immediate, timestamp: Self.t0))
        #expect(error?.description == "end of activity a refused: not allowed while it is ended")
        var p = Self.prepared(.pending)
        #expect(p.send(ActivityDriver.update("a", progress: 0.1, at: Self.t0))?.description
                == "update of activity a refused: not allowed while it is pending")
    }
}
