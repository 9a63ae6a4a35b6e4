import Testing
import RefreshdConfig
import RefreshdCore
import RefreshdRuntime
@testable import RefreshdSimulation
import RefreshdStore

/// The store keeps a month of finished runs (the core prunes it once a day, as on a real
/// daemon); the report of a longer simulation still counts every run, from the history the
/// simulation folds from the committed batches.
@Suite struct RunHistoryTests {
    @Test func theReportCountsEveryRunWhileTheStoreKeepsAMonth() throws {
        let hourly = Scenario.Job(spec: JobSpec(definition: TaskDefinition(identifier: "test.hourly", kind: .processing,
                                                                           allowance: .seconds(60),
                                                                           resubmit: .after(.seconds(3600))),
                                                command: CommandJob(argv: ["hourly"]), firstRequest: .after(.seconds(1))))
        let simulation = Simulation(scenario: Scenario(name: "40 days", jobs: [hourly], start: SimulationTests.monday,
                                                       days: 40, seed: 3))
        let report = simulation.run()
        #expect(report.violations.isEmpty, "\(report.violations)")
        let launched = report.jobs.first { $0.identifier == "test.hourly" }?.figures.launched ?? 0
        #expect(launched == 40 * 24)
        #expect(report.jobs.first { $0.identifier == "test.hourly" }?.runs.count == launched)
        let kept = try simulation.store.recentRuns(limit: Int.max)
        // Pruned at the last day's start minus 30 days: about 30 to 31 days of runs stay.
        #expect((30 * 24...32 * 24).contains(kept.count), "\(kept.count) runs kept")
        let all = simulation.history.contents().entries
        #expect(kept.map(\.runID) == Array(all.suffix(kept.count).map(\.run.runID).reversed()))
    }

    @Test func aRefusedBatchIsNotInTheHistory() throws {
        let store = InMemoryStore()
        let history = RunHistory()
        store.onCommit = { history.fold($0) }
        let run = RunRecord(runID: 1, identifier: "a", kind: .processing, submitted: Instant(milliseconds: 0),
                            earliest: Instant(milliseconds: 0), started: Instant(milliseconds: 0),
                            deadline: Instant(milliseconds: 60_000), attempt: 1)
        try store.apply([.runStarted(run)])
        #expect(throws: InMemoryStore.Failure.self) {
            try store.apply([.runEnded(runID: 1, identifier: "a", ended: Instant(milliseconds: 10), outcome: .success,
                                       exitStatus: 0, signal: nil),
                             .processStarted(runID: 9, processGroup: 1, startTicks: nil)])
        }
        #expect(history.contents().entries == [.init(job: 0, run: .init(runID: 1, earliest: run.earliest, started: run.started,
                                                                          ended: nil, outcome: nil))])
        #expect(history.contents().identifiers == ["a"])
        try store.apply([.runEnded(runID: 1, identifier: "a", ended: Instant(milliseconds: 10), outcome: .success,
                                   exitStatus: 0, signal: nil)])
        #expect(history.contents().entries.map(\.run.outcome) == [.success])
        #expect(history.contents().entries.map(\.run.ended) == [Instant(milliseconds: 10)])
    }

    /// A finished simulation frees its store, host and runtime: explored plans run by the
    /// thousand, and a cycle (the store's fault closure held the host, which holds the runtime,
    /// which holds the store) once kept about 9 MB of every 30-day plan.
    @Test func aFinishedSimulationFreesItsStoreHostAndRuntime() {
        weak var store: InMemoryStore?
        weak var host: SimulatedHost?
        weak var runtime: RefreshRuntime?
        weak var history: RunHistory?
        do {
            let simulation = Simulation(scenario: Scenario(name: "a day", jobs: [SimulationTests.refresh()],
                                                           start: SimulationTests.monday, days: 1, seed: 5))
            _ = simulation.run()
            store = simulation.store
            host = simulation.host
            runtime = simulation.host.runtime
            history = simulation.history
            #expect(store != nil && host != nil && runtime != nil && history != nil)
        }
        #expect(store == nil, "the store")
        #expect(host == nil, "the host")
        #expect(runtime == nil, "the runtime")
        #expect(history == nil, "the history")
    }
}
