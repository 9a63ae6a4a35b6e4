import RefreshdCore

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

    /// The fixture, and: a provider request of an instance that has its own (`feed[m]`, counted
    /// once), a provider's failure streak (`feed[user2]#small`: `user2` is failing), and a
    /// template that is not paused with one instance paused (and a provider of it). What every
    /// store counts by instance (`countsExpected`): SQLite, in memory, PostgreSQL.
    package static var changesWithProviders: [StateChange] {
        var changes = changes
        changes.append(.savePending(PendingRequest(identifier: "feed[m]#small", namespace: "ns", kind: .processing,
                                                   earliest: start + .seconds(60), submitted: start, sequence: 90)))
        changes.append(.failureStreak(identifier: "feed[user2]#small", count: 2))
        for key in ["o1", "o2"] { changes.append(.saveInstance(InstanceRecord(template: "other", key: key, values: [:]))) }
        changes.append(.putRecord(MachineRecord(table: SchedulerCore.pausedTable, key: "other[o1]", value: "{\"since\":0}")))
        changes.append(.putRecord(MachineRecord(table: SchedulerCore.pausedTable, key: "other[o1]#small", value: "{\"since\":0}")))
        return changes
    }

    /// Each template's counts after `changesWithProviders`: a provider's (`T[K]#family`) state
    /// is its instance's, counted once.
    package static let countsExpected: [String: InstanceCounts] = [
        // Pending: user1, user10, A., z@x, m (and its provider), user3's provider. Running: user10,
        // A, m's provider. Failing: user10, A, b_c, m, user2's provider. The template is paused.
        "feed": InstanceCounts(count: 13, pending: 6, running: 3, failing: 5, paused: 13),
        "quiet": InstanceCounts(count: 3, pending: 1, running: 0, failing: 0, paused: 3),
        // A provider's pause is not an instance's.
        "other": InstanceCounts(count: 2, pending: 0, running: 0, failing: 0, paused: 1),
        "none": InstanceCounts(),
    ]
}
