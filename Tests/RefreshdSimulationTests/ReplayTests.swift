import Foundation
import Testing
import RefreshdConfig
import RefreshdCore
import RefreshdRuntime
@testable import RefreshdSimulation

/// `Replay` (issue 34): recorded world events become the simulator's faults, recorded runs the
/// jobs' runs, and the real engine runs them.
@Suite struct ReplayTests {
    let t0 = Instant(milliseconds: 1_764_892_800_000)  // 2025-12-05T00:00:00Z
    func t(_ seconds: Int64) -> Instant { t0 + .seconds(seconds) }

    func run(_ id: Int64, _ job: String, _ started: Int64, ms: Int64, _ outcome: Outcome, exit: Int32? = nil) -> RunRecord {
        var record = RunRecord(runID: id, identifier: job, kind: .processing, submitted: t(started), earliest: t(started),
                               started: t(started), deadline: t(started) + .seconds(30))
        record.ended = t(started) + .milliseconds(ms)
        record.outcome = outcome
        record.exitStatus = exit
        return record
    }

    @Test func theRecordedWorldBecomesFaults() {
        let world: [WorldEvent] = [
            .init(at: t(10), what: .started),
            .init(at: t(20), what: .conditions(Conditions(externalPower: true, network: false))),
            .init(at: t(30), what: .conditions(Conditions(externalPower: true, network: true))),
            .init(at: t(100), what: .stopping),
            .init(at: t(160), what: .started),
            .init(at: t(400), what: .started),  // no stop before it: a kill -9
            .init(at: t(500), what: .clockStep(expected: t(440))),
            .init(at: t(600), what: .pause("app.feed")),
            .init(at: t(660), what: .resume("app.feed")),
        ]
        let runs = [run(1, "app.feed", 170, ms: 2_000, .success), run(2, "app.feed", 300, ms: 5_000, .success)]
        let (start, faults) = Replay.faults(world: world, runs: runs, from: t(0), to: t(1_000))
        #expect(start == t(10), "refreshd first started at 10 s: the replay starts there")
        #expect(faults == [
            .networkLoss(TimeSpan(start: .at(t(20)), duration: .seconds(10))),
            .down(TimeSpan(start: .at(t(100)), duration: .seconds(60))),
            // The last instant known before the restart: the end of the run started at 300 s.
            .kill(at: .at(t(305)), restartAfter: .seconds(95)),
            .clockStep(at: .at(t(440)), by: .seconds(60)),
            .pause(job: "app.feed", at: .at(t(600)), for: .seconds(60)),
        ])
    }

    /// With the same files, each run lasts and ends as recorded, through the real runtime.
    @Test func eachRunLastsAndEndsAsRecorded() throws {
        let spec = JobSpec(definition: TaskDefinition(identifier: "app.feed", kind: .processing, allowance: .seconds(20),
                                                      resubmit: .after(.seconds(60))),
                           command: CommandJob(argv: ["feed"]))
        let base = Scenario(name: "replay", jobs: [.init(spec: spec)], start: t(0))
        let runs = [run(1, "app.feed", 0, ms: 1_500, .success), run(2, "app.feed", 60, ms: 2_500, .failure, exit: 4),
                    run(3, "app.feed", 120, ms: 700, .success)]
        let world = [WorldEvent(at: t(0), what: .started)]
        let setup = Replay.scenario(base, runs: runs, world: world, from: t(0), to: t(180))
        #expect(setup.replayedJobs == ["app.feed"])
        let report = Simulation(scenario: setup.scenario).run()
        let replayed = try #require(report.jobs.first { $0.identifier == "app.feed" }).runs
        #expect(replayed.map { $0.ended.map { $0.milliseconds - t(0).milliseconds } } == [1_500, 62_500, 120_700])
        #expect(replayed.map(\.outcome) == [.success, .failure, .success])
        let comparison = ReplayComparison(from: t(0), to: t(180), ran: runs.map(ReplayComparison.Run.init),
                                          replayed: report.comparedRuns, whatIf: nil, whatIfJobs: nil, zone: .gmt)
        #expect(comparison.error.runsApart == 0 && comparison.error.outcomesApart == 0 && comparison.error.exactJobs == 1)
        #expect(comparison.errorLine.hasPrefix("simulator's error (replay with the same files against what ran): 3 runs ran, 3 replayed, 0 apart (0.0%)"))
    }

    /// A run refreshd's stop interrupted is in flight at the replayed stop, even when the daemon
    /// launched it late and the stop ended it at once: the replay launches on time, so a
    /// duration counted from the real launch ended it just before the stop.
    @Test func aRunTheStopInterruptedIsInFlightAtTheReplayedStop() throws {
        let spec = JobSpec(definition: TaskDefinition(identifier: "app.slow", kind: .processing, allowance: .seconds(20),
                                                      resubmit: .after(.seconds(60))),
                           command: CommandJob(argv: ["slow"]))
        let base = Scenario(name: "replay", jobs: [.init(spec: spec)], start: t(0))
        var slow = run(1, "app.slow", 0, ms: 0, .interrupted)
        slow.earliest = t(0)
        slow.started = t(0) + .milliseconds(3)  // the daemon's loop woke 3 ms late
        slow.ended = t(0) + .milliseconds(501)  // SIGTERM at the stop, gone 1 ms later
        let world = [WorldEvent(at: t(0), what: .started), WorldEvent(at: t(0) + .milliseconds(500), what: .stopping),
                     WorldEvent(at: t(10), what: .started)]
        let setup = Replay.scenario(base, runs: [slow], world: world, from: t(0), to: t(5))
        let report = Simulation(scenario: setup.scenario).run()
        let replayed = try #require(report.jobs.first { $0.identifier == "app.slow" }).runs
        #expect(replayed.map(\.outcome) == [.interrupted], "\(replayed)")
    }

    /// The round trip: what a simulation's world does (downtime, a kill -9, a network outage, a
    /// pause, a clock step) is recorded by the runtime in its store as world events, and the
    /// replay reads the same faults back from them.
    @Test func theRuntimeRecordsTheWorldAndTheReplayReadsTheSameFaultsBack() throws {
        let spec = JobSpec(definition: TaskDefinition(identifier: "app.feed", kind: .processing, allowance: .seconds(20),
                                                      resubmit: .after(.seconds(60)), requiresNetworkConnectivity: true),
                           command: CommandJob(argv: ["feed"]))
        func m(_ minutes: Int64) -> Instant { t0 + .seconds(minutes * 60) }
        var scenario = Scenario(name: "world", jobs: [.init(spec: spec)], start: t0, days: 1)
        scenario.until = m(120)
        scenario.faults = [
            .down(TimeSpan(start: .afterStart(.seconds(630)), duration: .seconds(300))),
            .kill(at: .afterStart(.seconds(1_800)), restartAfter: .seconds(120)),
            .networkLoss(TimeSpan(start: .afterStart(.seconds(4_200)), duration: .seconds(600))),
            .pause(job: "app.feed", at: .afterStart(.seconds(5_400)), for: .seconds(300)),
            .clockStep(at: .afterStart(.seconds(6_000)), by: .seconds(600)),
        ]
        let simulation = Simulation(scenario: scenario)
        let report = simulation.run()
        #expect(report.violations.isEmpty)
        let world = try simulation.store.records(table: WorldEvent.table).compactMap(WorldEvent.init)
        #expect(world.first == WorldEvent(at: t0, what: .started))
        let runs = try simulation.store.recentRuns(limit: 1_000)
        let (start, faults) = Replay.faults(world: world, runs: runs, from: t0, to: m(130))
        #expect(start == t0)
        #expect(faults.contains(.down(TimeSpan(start: .at(m(10) + .seconds(30)), duration: .seconds(300)))), "\(faults)")
        // The kill: at the last instant the store knew of, the restart where it was.
        let kill = faults.compactMap { if case let .kill(.at(at), after) = $0 { (at, at + after) } else { nil } }
        #expect(kill.count == 1 && kill[0].0 <= m(30) && kill[0].0 > m(29) && kill[0].1 == m(32), "\(faults)")
        // The job needs the network, so refreshd watches it; without notices conditions are
        // re-read once a minute, so the outage is seen within one.
        let outage = faults.compactMap { if case let .networkLoss(span) = $0 { span } else { nil } }
        #expect(outage.count == 1, "\(faults)")
        if let span = outage.first, case let .at(from) = span.start {
            #expect(from >= m(70) && from <= m(71) && span.duration >= .seconds(540) && span.duration <= .seconds(660), "\(span)")
        }
        #expect(faults.contains(.pause(job: "app.feed", at: .at(m(90)), for: .seconds(300))), "\(faults)")
        #expect(faults.contains(.clockStep(at: .at(m(100)), by: .seconds(600))), "\(faults)")
    }

    /// A timeline job's providers (`JOB#FAMILY`) replay as recorded: each call lasts as it did
    /// and writes the timeline it wrote then (its entries, policy and upstream fetch), not the
    /// model's; the widget's figures come out of the same timeline machine as the daemon's, and
    /// compare with the state's rows.
    @Test func aProviderReplaysTheTimelineItReturned() throws {
        let spec = JobSpec(definition: TaskDefinition(identifier: "app.widget", kind: .processing, allowance: .seconds(30)),
                           command: CommandJob(argv: ["provider"]),
                           widget: WidgetSpec(kind: "w", families: ["systemSmall"], budget: 50))
        let base = Scenario(name: "replay", jobs: [.init(spec: spec, model: JobModel(duration: .fixed(.seconds(2))))], start: t(0))
        var call = run(1, "app.widget#systemSmall", 0, ms: 1_500, .success)
        call.output = RunOutput(results: [#"{"entries":[{"date":"\#(t(0).iso8601)","content":{"asset":"recorded"}}],"policy":"never","upstreamFetch":false}"#])
        let setup = Replay.scenario(base, runs: [call], world: [WorldEvent(at: t(0), what: .started)], from: t(0), to: t(600))
        #expect(setup.replayedJobs == ["app.widget"])
        let simulation = Simulation(scenario: setup.scenario)
        let report = simulation.run()
        #expect(report.violations.isEmpty, "\(report.violations)")
        let calls = try #require(report.jobs.first { $0.identifier == "app.widget#systemSmall" }).runs
        #expect(calls.map { $0.ended.map { $0.milliseconds - t(0).milliseconds } } == [1_500], "lasts as recorded")
        #expect(simulation.host.publications["widgets/w/systemSmall.json"]?.contains("recorded") == true,
                "shows the entry it returned: \(simulation.host.publications)")
        // `never`: no reload after it; the recorded call used the shared fetch.
        let replayed = simulation.widgetCounters(from: t(0), to: t(600))
        #expect(replayed.map(\.providerCalls) == [1] && replayed.map(\.upstreamFetches) == [0], "\(replayed)")

        var ran = WidgetDayCounter(day: "2025-12-05", widget: WidgetID(kind: "w", family: .systemSmall))
        ran.requested = 1
        ran.performed = 1
        ran.providerCalls = 1
        ran.budgetLow = 49
        var comparison = ReplayComparison(from: t(0), to: t(600), ran: [.init(call)], replayed: report.comparedRuns, whatIf: nil,
                                          whatIfJobs: nil, zone: .gmt)
        comparison.compareWidgets(ran: [ran], replayed: replayed, whatIf: nil)
        #expect(comparison.widgets.map(\.widget) == ["w/systemSmall"] && comparison.widgetDays.map(\.day) == ["2025-12-05"])
        #expect(comparison.error.widgets == 1 && comparison.error.exactWidgets == 1, "\(comparison.text)")
        #expect(comparison.text.contains("widgets:\n  w/systemSmall: 1 reload, 1 call, budget low 49, stale 0 min | 1 reload, 1 call, budget low 49, stale 0 min"),
                "\(comparison.text)")
        #expect(comparison.errorLine.hasSuffix("; 1 of 1 widgets exact"), "\(comparison.errorLine)")
    }

    /// An operator's orders (a submit, a launch now, an expiration now, a cancel) that a
    /// simulation carries out through the control entries are recorded by the machines in the
    /// simulation's store, and come back as the same faults; replayed, they give back the runs
    /// they caused, which a replay without them misses.
    @Test func theOperatorsOrdersAreRecordedAndReplayedWithTheRunsTheyCaused() throws {
        let spec = JobSpec(definition: TaskDefinition(identifier: "app.feed", kind: .processing, allowance: .seconds(20),
                                                      resubmit: .after(.seconds(3_600))),
                           command: CommandJob(argv: ["feed"]))
        func m(_ minutes: Int64) -> Instant { t0 + .seconds(minutes * 60) }
        let job = Scenario.Job(spec: spec, model: JobModel(duration: .fixed(.seconds(10))))
        var scenario = Scenario(name: "orders", jobs: [job], start: t0, days: 1)
        scenario.until = m(180)
        let orders: [Fault] = [
            .order(.submit("app.feed", earliest: m(10)), at: .at(m(5))),  // launches at 10 min
            .order(.launchNow("app.feed"), at: .at(m(20))),  // its next request (70 min), now
            .order(.expireNow("app.feed"), at: .at(m(20) + .seconds(5))),
            .order(.cancel("app.feed"), at: .at(m(30))),  // its next (80 min): nothing more runs
            .order(.submit("app.feed", earliest: m(150)), at: .at(m(140))),
        ]
        scenario.faults = orders
        let simulation = Simulation(scenario: scenario)
        let report = simulation.run()
        #expect(report.violations.isEmpty, "\(report.violations)")
        let ran = try #require(report.jobs.first { $0.identifier == "app.feed" }).runs
        #expect(ran.map { ($0.started.milliseconds - t0.milliseconds) / 1000 } == [0, 600, 1_200, 9_000], "\(ran)")
        #expect(ran.map(\.outcome) == [.success, .success, .expired, .success])

        let world = try simulation.store.records(table: WorldEvent.table).compactMap(WorldEvent.init)
        let runs = try simulation.store.recentRuns(limit: 1_000)
        let (_, faults) = Replay.faults(world: world, runs: runs, from: t0, to: m(180))
        #expect(faults == orders, "\(faults)")

        var base = scenario
        base.faults = []
        base.until = nil
        func replay(_ world: [WorldEvent]) -> ReplayComparison {
            let setup = Replay.scenario(base, runs: runs, world: world, from: t0, to: m(180))
            let replayed = Simulation(scenario: setup.scenario).run()
            return ReplayComparison(from: t0, to: m(180), ran: runs.map(ReplayComparison.Run.init), replayed: replayed.comparedRuns,
                                    whatIf: nil, whatIfJobs: nil, zone: .gmt)
        }
        let same = replay(world)
        #expect(same.error.runsApart == 0 && same.error.outcomesApart == 0, "\(same.text)")
        let withoutOrders = replay(world.filter { if case .order = $0.what { false } else { true } })
        // Without them: its hourly runs (0, 60 and 120 min), not the 4 that ran.
        #expect(withoutOrders.error.runsApart == 1 && withoutOrders.error.exactJobs == 0, "\(withoutOrders.text)")
    }

    /// A widget reload asked from outside (`ctl reload KIND`, the dashboard) is an order too: the
    /// timeline machine's entry records it, and it comes back as the same fault, whose provider
    /// call the replay makes again.
    @Test func aWidgetReloadFromOutsideIsRecordedAndReplayed() throws {
        let spec = JobSpec(definition: TaskDefinition(identifier: "app.widget", kind: .processing, allowance: .seconds(30)),
                           command: CommandJob(argv: ["provider"]),
                           widget: WidgetSpec(kind: "w", families: ["systemSmall"], budget: 50))
        let job = Scenario.Job(spec: spec, model: JobModel(duration: .fixed(.seconds(2)), timeline: TimelineModel(policy: .never)))
        var scenario = Scenario(name: "reload", jobs: [job], start: t(0), days: 1)
        scenario.until = t(3_600)
        let reload = Fault.order(.reloadWidgets(kind: "w", reason: .explicitAPI), at: .at(t(1_800)))
        scenario.faults = [reload]
        let simulation = Simulation(scenario: scenario)
        let report = simulation.run()
        #expect(report.violations.isEmpty, "\(report.violations)")
        let world = try simulation.store.records(table: WorldEvent.table).compactMap(WorldEvent.init)
        let runs = try simulation.store.recentRuns(limit: 100)
        #expect(Replay.faults(world: world, runs: runs, from: t(0), to: t(3_600)).faults == [reload])
        #expect(runs.map { ($0.started.milliseconds - t0.milliseconds) / 1000 }.sorted() == [0, 1_800], "added, then the reload")
        var base = scenario
        base.faults = []
        base.until = nil
        let setup = Replay.scenario(base, runs: runs, world: world, from: t(0), to: t(3_600))
        let replayed = Simulation(scenario: setup.scenario).run()
        let comparison = ReplayComparison(from: t(0), to: t(3_600), ran: runs.map(ReplayComparison.Run.init),
                                          replayed: replayed.comparedRuns, whatIf: nil, whatIfJobs: nil, zone: .gmt)
        #expect(comparison.error.runsApart == 0 && comparison.error.ranRuns == 2, "\(comparison.text)")
    }

    /// A reload of the job files is recorded with the jobs it changed, and the replay says what
    /// it cannot reproduce of it (the files are not kept).
    @Test func aReloadOfTheFilesIsANoteOfTheReplay() {
        let world = [WorldEvent(at: t(0), what: .started), WorldEvent(at: t(60), what: .reload(changed: ["app.feed", "app.new"]))]
        let base = Scenario(name: "replay", jobs: [], start: t(0))
        let setup = Replay.scenario(base, runs: [], world: world, from: t(0), to: t(600))
        #expect(setup.notes.contains { $0.hasPrefix("the job files were reloaded at \(t(60).iso8601) (added, changed or removed: app.feed, app.new)") },
                "\(setup.notes)")
        #expect(Replay.faults(world: world, runs: [], from: t(0), to: t(600)).faults == [])
    }
}
