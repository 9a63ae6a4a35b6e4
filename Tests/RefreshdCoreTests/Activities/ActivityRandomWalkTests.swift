import Testing
@testable import RefreshdCore

/// Seeded random walks: random events at random instants, invariants after every step (the
/// driver checks them and the legality of every transition), and the store's fold always equal
/// to the machine's memory.
@Suite struct ActivityRandomWalkTests {
    @Test(arguments: [1, 2, 3, 42, 2026] as [UInt64])
    func randomWalkKeepsEveryInvariant(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var d = ActivityDriver(settings: ActivitySettings(maxConcurrentPerNamespace: 4, highPriorityBudgetPerHour: 3,
                                                          frequentUpdatesBudgetPerHour: 6))
        d.send(.restore([]))
        let ids = (0..<12).map { "act-\($0)" }
        let owners = ["job.a", "job.b"]
        var lastTimestamp: [String: Instant] = [:]
        for step in 0..<3000 {
            let id = rng.pick(ids)
            let now = d.now + .milliseconds(Int64(rng.int(0...300_000)))
            let stamp = now - .milliseconds(Int64(rng.int(0...600_000)))   // sometimes out of order
            // Mostly the timer fires on time; otherwise the event finds deadlines overdue.
            if rng.chance(0.7) { d.advance(to: now) }
            let before = d.effects.count
            switch rng.int(0...11) {
            case 0, 1:
                let stale: Instant? = rng.chance(0.7) ? now + .milliseconds(Int64(rng.int(-60_000...7_200_000))) : nil
                let startAt: Instant? = rng.chance(0.2) ? now + .milliseconds(Int64(rng.int(0...7_200_000))) : nil
                d.send(.request(ActivityRequest(id: id, typeName: "T", owner: rng.pick(owners), namespace: rng.pick(["x", "y"]),
                                                content: #"{"progress":0}"#, staleDate: stale,
                                                frequentUpdates: rng.chance(0.3), startAt: startAt)), at: now)
            case 2, 3, 4, 5:
                // Updates go mostly to a few activities, so budgets run out.
                let id = rng.chance(0.8) ? rng.pick(Array(ids.prefix(3))) : id
                let stale: Instant? = rng.chance(0.8) ? now + .milliseconds(Int64(rng.int(-60_000...3_600_000))) : nil
                d.send(.update(ActivityUpdate(id: id, content: #"{"progress":\#(Double(step % 100) / 100)}"#, staleDate: stale,
                                              timestamp: stamp, priority: rng.chance(0.6) ? .high : .low)), at: now)
            case 6:
                let policy: DismissalPolicy = rng.pick([.default, .immediate, .after(now + .milliseconds(Int64(rng.int(-3_600_000...21_600_000))))])
                d.send(.end(id: id, content: rng.chance(0.5) ? #"{"progress":1}"# : nil, policy: policy, timestamp: stamp), at: now)
            case 7:
                d.send(.ownerFinished(owner: rng.pick(owners), outcome: rng.pick(Outcome.allCases), reason: "step \(step)"), at: now)
            case 8:
                d.send(.clockChanged(expected: now - .milliseconds(Int64(rng.int(-600_000...600_000)))), at: now)
            case 9:
                if rng.chance(0.1) {
                    d.send(.settingsChanged(ActivitySettings(maxConcurrentPerNamespace: rng.int(1...5),
                                                             highPriorityBudgetPerHour: rng.int(1...4))), at: now)
                } else {
                    d.send(.timerFired, at: now)
                }
            default:
                d.advance(to: now)
            }
            // Applied updates are in timestamp order per activity (a new request starts afresh).
            for case let .persist(change) in d.effects[before...] {
                switch change {
                case let .save(a):
                    if let t = a.lastUpdateTimestamp {
                        if let previous = lastTimestamp[a.id] { #expect(t >= previous, "\(a.id): update of \(t) applied after \(previous)") }
                        lastTimestamp[a.id] = t
                    }
                case let .delete(id):
                    lastTimestamp[id] = nil
                }
            }
            // The store's fold is the machine's memory.
            if step % 100 == 0 {
                let folded = ActivityRestoreTests.fold(d.changes)
                #expect(folded == d.machine.activities.values.sorted { $0.id < $1.id })
            }
            // Nothing visible past 12 h, nothing active past 8 h.
            for a in d.machine.activities.values where a.state.isVisible {
                #expect(a.start + .seconds(12 * 3600) > d.now)
                if a.state != .ended { #expect(a.start + .seconds(8 * 3600) > d.now) }
            }
        }
        #expect(d.transitions.count > 100)
        #expect(Set(d.transitions.map(\.to)) == Set(ActivityState.allCases))
        // Updates were held (and, by the held-past-release invariant, released on time).
        #expect(d.logs.contains { if case .updateHeld = $0 { true } else { false } })
    }

    @Test func aRestartInTheMiddleOfAWalkGivesTheSameFuture() {
        var rng = SplitMix64(seed: 7)
        let t0 = ActivityDriver.t0
        var d = ActivityDriver()
        d.send(.restore([]))
        for i in 0..<5 {
            d.send(ActivityDriver.request("a\(i)", staleDate: t0 + .milliseconds(Int64(rng.int(0...36_000_000)))))
            d.send(.end(id: "a\(i)", content: nil, policy: .after(t0 + .milliseconds(Int64(rng.int(0...40_000_000)))),
                        timestamp: t0), at: d.now + .milliseconds(Int64(rng.int(0...20_000_000))))
        }
        var restarted = ActivityDriver(now: d.now)
        restarted.send(.restore(ActivityRestoreTests.fold(d.changes)))
        let end = d.now + .hours(24)
        let before = d.transitions.count
        d.advance(to: end)
        restarted.advance(to: end)
        #expect(Array(d.transitions[before...]) == restarted.transitions)
        #expect(d.machine.activities.isEmpty && restarted.machine.activities.isEmpty)
    }
}
