@_spi(Benchmarks) import RefreshdCore

/// A state to search (issue 33, item 5): templates whose keys sort differently by key and by
/// identifier (`user1`, `user10`: `]` sorts after the digits), pending requests, runs in flight,
/// failure streaks and pauses of some instances, a provider's request (`T[K]#family`, not an
/// instance), a plain job next to the template (`feed`, `feedx`), a paused template, and runs of
/// every outcome over two hours. The same changes go into every store of a parity test.
package enum SearchFixture {
    /// The identifier whose rows `change` writes (an instance's, a request's, a run's...): how
    /// a test splits one store's changes into shards, each identifier's rows in one.
    package static func identifier(of change: StateChange) -> String {
        switch change {
        case let .saveInstance(r): InstanceName.identifier(template: r.template, key: r.key)
        case let .savePending(p): p.identifier
        case let .failureStreak(id, _, _): id
        case let .putRecord(r): r.key
        case let .runStarted(r): r.identifier
        case let .runEnded(_, id, _, _, _, _, _, _, _): id
        default: ""
        }
    }

    package static let template = "feed"
    package static let keys = ["user1", "user10", "user2", "A", "A.", "a-b", "b_c", "z@x", "user11", "Z", "user3", "m", "feed2"]
    package static let start = Instant(milliseconds: ISO8601.days(year: 2026, month: 11, day: 21) * 86_400_000 + 22 * 3_600_000)

    package static var changes: [StateChange] {
        var changes: [StateChange] = []
        for (i, key) in keys.enumerated() {
            changes.append(.saveInstance(InstanceRecord(template: template, key: key, values: i % 3 == 0 ? ["user": key, "region": "eu"] : [:])))
        }
        for key in ["k1", "k2", "k3"] { changes.append(.saveInstance(InstanceRecord(template: "quiet", key: key, values: [:]))) }
        let pending = ["feed[user1]", "feed[user10]", "feed[A.]", "feed[z@x]", "feed[m]", "feed[user3]#small", "feed", "feedx", "quiet[k2]"]
        for (i, id) in pending.enumerated() {
            changes.append(.savePending(PendingRequest(identifier: id, namespace: "ns", kind: .processing, earliest: start + .seconds(i),
                                                       submitted: start, sequence: UInt64(i))))
        }
        for (id, count) in [("feed[user10]", 2), ("feed[A]", 1), ("feed[b_c]", 3), ("feed[user2]", 0), ("feedx", 1), ("feed[m]", 4)] {
            changes.append(.failureStreak(identifier: id, count: count))
        }
        for id in ["feed[user2]", "feed[Z]", "quiet", "feed", "feedz"] {
            changes.append(.putRecord(MachineRecord(table: SchedulerCore.pausedTable, key: id, value: "{\"since\":0}")))
        }
        // Runs: ended with each outcome, some in flight; ties of start broken by run id.
        let ids = ["feed[user1]", "feed[user10]", "feedx", "feed[A]", "feed[m]#small", "quiet[k1]"]
        for n in 1...30 {
            let id = ids[n % ids.count]
            let started = start + .seconds((n / 2) * 300)
            changes.append(.runStarted(RunRecord(runID: Int64(n), identifier: id, kind: .processing, submitted: started, earliest: started,
                                                 started: started, deadline: started + .seconds(60))))
            if n % 7 != 0 {
                let outcome = Outcome.allCases[n % Outcome.allCases.count]
                changes.append(.runEnded(runID: Int64(n), identifier: id, ended: started + .seconds(30), outcome: outcome,
                                         exitStatus: outcome == .failure ? 1 : nil, signal: nil))
            }
        }
        return changes
    }
}
