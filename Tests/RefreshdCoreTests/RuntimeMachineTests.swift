import Testing
@testable import RefreshdCore

/// `RuntimeMachine` as input -> exact effects (issue 22), in the style of hummingbird's
/// connection state machine tests: each step is one report a host makes (or one event), with
/// the instant as an argument, followed by exactly what the machine answers. Nothing runs: no
/// host, no store, no clock; the same calls are what `RefreshRuntime` makes on both hosts.
@Suite struct RuntimeMachineTests {
    static let t0 = Instant(milliseconds: 1_800_000_000_000)
    static let job = TaskDefinition(identifier: "app.job", allowance: .seconds(30), grace: .seconds(5))

    /// A machine with one declared job, restored, that persists and logs nothing routine: the
    /// effects left are the ones the runtime's decisions make.
    static func machine() -> RuntimeMachine {
        var configuration = SchedulerConfiguration()
        configuration.emitsStateChanges = false
        configuration.emitsRoutineLogs = false
        configuration.emitsRunEnds = true
        var machine = RuntimeMachine(scheduler: SchedulerCore(configuration: configuration, definitions: [job]))
        var effects: [SchedulerEffect] = []
        machine.handle(.restore(SchedulerCore.RestoredState()), at: t0, into: &effects)
        return machine
    }

    /// One event's effects.
    static func effects(_ body: (inout [SchedulerEffect]) throws -> Void) rethrows -> [SchedulerEffect] {
        var effects: [SchedulerEffect] = []
        try body(&effects)
        return effects
    }

    /// Submits the job now and fires the wake-up: the run's launch order.
    static func launch(_ machine: inout RuntimeMachine, at now: Instant = t0) throws -> LaunchOrder {
        let submitted = try effects { try machine.submit(TaskRequest(identifier: job.identifier), at: now, into: &$0) }
        #expect(submitted == [.armTimer(at: now)])
        let order = LaunchOrder(runID: 1, identifier: job.identifier, kind: .appRefresh, started: now,
                                deadline: now + .seconds(30), attempt: 1)
        #expect(effects { machine.handle(.timerFired, at: now, into: &$0) } == [.launch(order), .armTimer(at: now + .seconds(30))])
        return order
    }

    @Test func aRunsExitWaitsForItsResultsAtMostTheGrace() throws {
        let t0 = Self.t0
        var machine = Self.machine()
        let order = try Self.launch(&machine)

        // A results line that is not live is kept for the run's end; nothing to drain.
        let line = Array("{\"x\":1}\n".utf8)
        #expect(line.withUnsafeBytes { machine.resultsRead(order, $0, at: t0 + .seconds(1)) } == false)

        // The leader exits with fd 3 still open (a grandchild holds it): its group is killed
        // now, and the grace re-arms the one timer 500 ms later, before the run's deadline.
        #expect(Self.effects {
            machine.leaderExited(1, exit: .exited(0), resultsClosed: false, at: t0 + .seconds(2), into: &$0)
        } == [.killGroup(runID: 1), .armTimer(at: t0 + .milliseconds(2500))])

        // The grace ends: the host closes the channel and the run's work ended with what was
        // read; the one timer goes back to the deadline.
        #expect(Self.effects { machine.handle(.timerFired, at: t0 + .milliseconds(2500), into: &$0) }
            == [.closeResults(runID: 1), .processEnded(runID: 1, exit: .exited(0), results: ["{\"x\":1}"]),
                .armTimer(at: t0 + .seconds(30))])

        // The engine ends the run's work (nothing was dropped from its output), then the run.
        #expect(machine.runWorkEnded(1) == nil)
        #expect(Self.effects {
            machine.handle(.runFinished(runID: 1, exit: .exited(0), results: ["{\"x\":1}"]), at: t0 + .milliseconds(2600), into: &$0)
        } == [.disarmTimer])
        #expect(machine.machines.nextDeadline == nil)
    }

    @Test func aChannelClosedAfterTheExitEndsTheRunWithoutTheGrace() throws {
        let t0 = Self.t0
        var machine = Self.machine()
        _ = try Self.launch(&machine)
        #expect(Self.effects { machine.leaderExited(1, exit: .exited(3), resultsClosed: false, at: t0 + .seconds(1), into: &$0) }
            == [.killGroup(runID: 1), .armTimer(at: t0 + .milliseconds(1500))])
        // The last writer closes it: the end now, and the grace's wake-up goes.
        #expect(Self.effects { machine.resultsClosed(1, at: t0 + .milliseconds(1200), into: &$0) }
            == [.processEnded(runID: 1, exit: .exited(3), results: []), .armTimer(at: t0 + .seconds(30))])
    }

    @Test func outputOverTheLimitIsDroppedAndLoggedOncePerWindowAndAtTheEnd() throws {
        let t0 = Self.t0
        var machine = Self.machine()
        let order = try Self.launch(&machine)
        let limit = "200 lines or 256 KiB a second"

        // 201 lines in one second: 200 are logged, one is dropped, nothing reported yet.
        let lines = (1...201).map { "line \($0)" }
        let first = machine.outputLines(order, lines, at: t0)
        #expect(first == RuntimeMachine.OutputAction(dropped: nil, admitted: Array(lines.prefix(200))))
        #expect(machine.outputWindowIsFull(order, at: t0 + .milliseconds(999)) == (true, nil))
        // A chunk the host did not split: 4 KiB with 64 line ends, counted, never logged.
        machine.outputSkipped(order, bytes: 4096, lineEnds: 64)

        // The next window: its first line is logged after the drop notice of the last.
        let drop = RuntimeMachine.OutputDrop(identifier: "app.job", runID: 1, lines: 65, bytes: 8 + 4096, limit: limit)
        #expect(machine.outputLines(order, ["next"], at: t0 + .seconds(1))
            == RuntimeMachine.OutputAction(dropped: drop, admitted: ["next"]))
        #expect(drop.message == "app.job[1] 65 lines (4104 bytes) of output not logged: over \(limit)")

        // Drops of the last window are reported at the run's end, once.
        machine.outputSkipped(order, bytes: 10, lineEnds: 1)
        #expect(machine.runWorkEnded(1)
            == RuntimeMachine.OutputDrop(identifier: "app.job", runID: 1, lines: 1, bytes: 10, limit: limit))
        #expect(machine.runWorkEnded(1) == nil)
    }

    @Test func aSecondStopSignalKillsEveryRunNow() throws {
        let t0 = Self.t0
        var machine = Self.machine()
        _ = try Self.launch(&machine)

        // The first: a graceful stop, at once (no sweep under way); the run gets its expiration.
        #expect(machine.stopSignal("SIGTERM") == .stopGracefully(log: .runtime(.stopSignal(name: "SIGTERM"))))
        #expect(LogMessage.runtime(.stopSignal(name: "SIGTERM")).description
            == "received SIGTERM: stopping gracefully (send it again to kill running jobs now)")
        #expect(machine.stopRequested() == true)
        #expect(Self.effects { machine.handle(.shutdown, at: t0 + .seconds(1), into: &$0) }
            == [.log(.stopping(running: 1)), .expire(runID: 1), .armTimer(at: t0 + .seconds(6))])

        // The second, during the grace: kill every run in flight now; the shutdown again changes nothing.
        #expect(machine.stopSignal("SIGTERM") == .stopImmediately(reason: "received SIGTERM again"))
        let notice = LogMessage.runtime(.killingNow(reason: "received SIGTERM again", running: 1))
        #expect(notice.description == "received SIGTERM again: killing running jobs now")
        #expect(Self.effects { machine.stopImmediately("received SIGTERM again", at: t0 + .seconds(2), into: &$0) }
            == [.log(notice), .kill(runID: 1)])
    }

    @Test func aStopSignalIsOneInputWhoseEffectsSayAndDoIt() throws {
        let t0 = Self.t0
        var machine = Self.machine()
        _ = try Self.launch(&machine)
        // The first: its line, then the shutdown's expiration and grace, one list.
        #expect(Self.effects { _ = machine.handle(.stopSignal(name: "SIGTERM"), at: t0 + .seconds(1), into: &$0) }
            == [.log(.runtime(.stopSignal(name: "SIGTERM"))), .log(.stopping(running: 1)), .expire(runID: 1),
                .armTimer(at: t0 + .seconds(6))])
        // The second: the kill of every run in flight, said first.
        #expect(Self.effects { _ = machine.handle(.stopSignal(name: "SIGINT"), at: t0 + .seconds(2), into: &$0) }
            == [.log(.runtime(.killingNow(reason: "received SIGINT again", running: 1))), .kill(runID: 1)])
    }

    @Test func aStopWaitingForASweepComesWithTheSweptRunsEnd() throws {
        let t0 = Self.t0
        var machine = Self.machine()
        let order = try Self.launch(&machine)
        _ = Self.effects { _ = machine.handle(.sweepStarted(runID: order.runID), at: t0, into: &$0) }
        // A stop while the sweep is under way waits for it: nothing now.
        #expect(Self.effects { _ = machine.handle(.stop, at: t0 + .seconds(1), into: &$0) } == [])
        // The sweep's end: its line, the run's end as it exited, then the stop that waited.
        let effects = Self.effects {
            _ = machine.handle(.workEnded(order, runID: order.runID, exit: .exited(0), results: [], usage: .none, swept: 2),
                               at: t0 + .seconds(2), into: &$0)
        }
        #expect(effects.first == .log(.runtime(.sweptAtEnd(identifier: order.identifier, runID: order.runID, count: 2))))
        #expect(effects.contains(.stopped))
        #expect(machine.machines.scheduler.isStopping)
    }

    @Test func aStopWaitsForTheSweepsUnderWayAndASignalThenIsTheSecond() throws {
        var machine = Self.machine()
        machine.sweepStarted(7)
        #expect(machine.stopRequested() == false)
        // Stopping already (waiting for the sweep): another signal kills now.
        #expect(machine.stopSignal("SIGINT") == .stopImmediately(reason: "received SIGINT again"))
        #expect(machine.sweepEnded(7) == true)
        #expect(machine.sweepEnded(7) == false)
    }

    @Test func aClockJumpSeenAtAWakeUpIsAClockChange() throws {
        let t0 = Self.t0
        var machine = Self.machine()
        machine.attach(clocks: ClockReading(wall: t0, monotonic: .seconds(100)))
        // Drift within the tolerance (1 s) at a wake-up: NTP slewing, nothing changed.
        #expect(machine.clocksRead(ClockReading(wall: t0 + .milliseconds(10_900), monotonic: .seconds(110)), .wakeUp) == nil)
        // The wall clock an hour ahead of the monotonic one at the next wake-up: a step (or a
        // resume no notice announced); `expected` is what the wall clock would read without it.
        let jumped = ClockReading(wall: t0 + .seconds(3620), monotonic: .seconds(120))
        #expect(machine.clocksRead(jumped, .wakeUp) == .clockChanged(expected: t0 + .seconds(20)))
        // The engine handles the change, then the wake-up: the machines re-arm the one timer.
        #expect(Self.effects { machine.handle(.clockChanged(expected: t0 + .seconds(20)), at: jumped.wall, into: &$0) }
            == [.log(.clockChanged(jumped.wall, expected: t0 + .seconds(20))), .disarmTimer])
        // Measured from the new offset now: the same reading again is no change.
        #expect(machine.clocksRead(ClockReading(wall: t0 + .seconds(3630), monotonic: .seconds(130)), .wakeUp) == nil)
        // The kernel's notice is always a change, however small.
        #expect(machine.clocksRead(ClockReading(wall: t0 + .seconds(3640), monotonic: .seconds(140)), .clockSet)
            == .clockChanged(expected: t0 + .seconds(3640)))
    }

    @Test func liveResultsLinesAreTakenAtMostTwentyASecondAndAppliedTogether() throws {
        let t0 = Self.t0
        var machine = Self.machine()
        let order = try Self.launch(&machine)
        let line = "{\"activity\":\"start\",\"id\":\"a\",\"content\":{}}"
        // The first live line waits for the next drain (the host schedules one); later ones join it.
        #expect(machine.resultLine(order, line, at: t0) == (true, true))
        for _ in 2...RuntimeMachine.liveLinesPerSecond { #expect(machine.resultLine(order, line, at: t0) == (true, false)) }
        // Over the rate: left for the run's end.
        #expect(machine.resultLine(order, line, at: t0 + .milliseconds(999)) == (false, false))
        #expect(machine.liveBacklog.count == RuntimeMachine.liveLinesPerSecond)
        var effects: [SchedulerEffect] = []
        #expect(machine.applyLiveBacklog(into: &effects) == true)
        #expect(machine.liveBacklog.isEmpty)
        #expect(machine.applyLiveBacklog(into: &effects) == false)
        // A new second: taken again.
        #expect(machine.resultLine(order, line, at: t0 + .seconds(1)) == (true, true))
    }

    @Test func aFixedFirstRequestIsSeededOnceAcrossRestarts() throws {
        let t0 = Self.t0
        var machine = Self.machine()
        let spec = JobSpec(definition: Self.job, command: CommandJob(argv: ["true"]), firstRequest: .at(t0 + .hours(1)))
        var effects: [SchedulerEffect] = []
        // Loaded: its request is submitted for the date it names, and the text remembered.
        #expect(try machine.seed(spec, replacing: false, at: t0, into: &effects) == true)
        #expect(effects == [.armTimer(at: t0 + .hours(1))])
        #expect(machine.seedSpecs == ["app.job": (t0 + .hours(1)).iso8601])
        // Loaded again with the request pending: kept.
        effects = []
        #expect(try machine.seed(spec, replacing: false, at: t0 + .minutes(1), into: &effects) == false)
        #expect(effects == [])
        // Cancelled (nothing pending, as after its run), the same date is not requested again...
        #expect(Self.effects { machine.handle(.cancel(identifier: "app.job"), at: t0 + .minutes(2), into: &$0) } == [.log(.cancelled(identifier: "app.job")), .disarmTimer])
        #expect(try machine.seed(spec, replacing: false, at: t0 + .minutes(3), into: &effects) == false)
        // ...unless the job changed (a reload replaces its request).
        #expect(try machine.seed(spec, replacing: true, at: t0 + .minutes(4), into: &effects) == true)
        #expect(effects == [.armTimer(at: t0 + .hours(1))])
    }

    @Test func operatorCommandsGoThroughTheMachine() throws {
        let t0 = Self.t0
        var machine = Self.machine()
        // An operator's submit is the job's own request, due when the operator says.
        #expect(try machine.operatorRequest("app.job", earliest: t0 + .hours(2))
            == TaskRequest(identifier: "app.job", kind: .appRefresh, earliestBeginDate: t0 + .hours(2)))
        #expect(throws: ControlRefusal.notDeclared(identifier: "no.such.job")) { try machine.operatorRequest("no.such.job", earliest: nil) }
        var effects: [SchedulerEffect] = []
        try machine.submit(machine.operatorRequest("app.job", earliest: t0 + .hours(2)), at: t0, into: &effects)
        #expect(effects == [.armTimer(at: t0 + .hours(2))])

        // Launch now, whatever the date; then expire now.
        let order = LaunchOrder(runID: 1, identifier: "app.job", kind: .appRefresh, started: t0 + .seconds(1),
                                deadline: t0 + .seconds(31), attempt: 1)
        #expect(try Self.effects { try machine.handle(operator: .launchNow(identifier: "app.job"), at: t0 + .seconds(1), into: &$0) }
            == [.launch(order), .armTimer(at: t0 + .seconds(31))])
        let expired = try Self.effects { try machine.handle(operator: .expireNow(identifier: "app.job"), at: t0 + .seconds(2), into: &$0) }
        #expect(expired == [.log(.expirationDelivered(runID: 1, identifier: "app.job")), .expire(runID: 1), .armTimer(at: t0 + .seconds(7))])
        // Refused: nothing pending to launch; nothing changed.
        effects = []
        #expect(throws: ControlRefusal.self) { try machine.handle(operator: .launchNow(identifier: "app.job"), at: t0 + .seconds(3), into: &effects) }
        #expect(effects == [])
    }

    @Test func aRunsResultsAreCheckedAtItsEnd() throws {
        var machine = Self.machine()
        _ = try Self.launch(&machine)
        let report = machine.checkResults(1, ["{\"a\": 1}", "not json", RunResults.truncatedMarker])
        #expect(report.accepted == ["{\"a\": 1}"])
        #expect(report.logs.count == 3)
        #expect(report.logs.prefix(2).allSatisfy { $0.description.hasPrefix("app.job[1] result refused: ") })
        #expect(report.logs.last == .runtime(.resultsReported(identifier: "app.job", runID: 1, count: 1)))
        #expect(report.logs.last?.description == "app.job[1] reported 1 result")
        #expect(machine.checkResults(1, []) == RuntimeMachine.ResultsReport(accepted: [], logs: []))
    }

    @Test func aCommandSeesRefreshdsEnvironmentItsOwnAndTheRunsVariables() {
        let order = LaunchOrder(runID: 7, identifier: "app.job", kind: .appRefresh, started: Self.t0,
                                deadline: Self.t0 + .seconds(30), attempt: 2)
        let job = CommandJob(argv: ["true"], environment: ["PATH": "/job/bin", "A": "1"])
        #expect(job.environment(for: order, base: ["PATH": "/usr/bin", "HOME": "/root"], instance: "ab12",
                                sharedContainer: "/srv/shared") == [
            "A=1", "HOME=/root", "PATH=/job/bin", "REFRESH_ATTEMPT=2", "REFRESH_DEADLINE=\((Self.t0 + .seconds(30)).iso8601)",
            "REFRESH_INSTANCE=ab12", "REFRESH_KIND=app-refresh", "REFRESH_NOW=\(Self.t0.iso8601)", "REFRESH_RESULT_FD=3",
            "REFRESH_RUN_ID=7", "REFRESH_SHARED_CONTAINER=/srv/shared", "REFRESH_TASK_IDENTIFIER=app.job",
        ])
    }

    @Test func aFailedCommitAbandonsWhatTheEventLaunchedAndStops() throws {
        let t0 = Self.t0
        var machine = Self.machine()
        #expect(try Self.effects { try machine.submit(TaskRequest(identifier: "app.job"), at: t0, into: &$0) } == [.armTimer(at: t0)])
        let launched = Self.effects { machine.handle(.timerFired, at: t0, into: &$0) }
        // The store refused that event's commit: its launch never happens; the run ends in
        // memory, the shutdown stops at once (no run to wait for), and no timer stays armed.
        var effects: [SchedulerEffect] = []
        machine.storeFailed("disk full", dropping: launched, at: t0, into: &effects)
        #expect(effects == [.log(.runtime(.storeFailed(reason: "disk full"))), .log(.stopping(running: 0)), .stopped])
        #expect(LogMessage.runtime(.storeFailed(reason: "disk full")).description == "state not saved, stopping: disk full")
        #expect(machine.machines.scheduler.activeRuns.isEmpty)
        #expect(machine.machines.nextDeadline == nil)
    }

    /// Issue 24: a shard's lease is gone (a commit refused by the fence, or the node fenced it):
    /// unlike a failed store, refreshd goes on, and this shard's runs get their expiration AND
    /// their kill at once (another node may take the shard when the lease expires), nothing saved.
    @Test func aFencedShardKillsItsRunsAtOnceAndLaunchesNothingMore() throws {
        let t0 = Self.t0
        var machine = Self.machine()
        let running = try Self.launch(&machine)
        var effects: [SchedulerEffect] = []
        machine.fenced("shard 3: commit fenced at epoch 2", dropping: [], at: t0 + .seconds(1), into: &effects)
        #expect(effects == [.log(.runtime(.shardFenced(reason: "shard 3: commit fenced at epoch 2"))), .log(.stopping(running: 1)),
                            .expire(runID: running.runID), .armTimer(at: t0 + .seconds(6)), .kill(runID: running.runID)])
        #expect(LogMessage.runtime(.shardFenced(reason: "x")).description == "fenced, no longer leading: x; killing its running jobs now")
        #expect(machine.machines.scheduler.isStopping)
    }

    @Test func aWidgetsProvidersAreRunsOfTheirOwn() {
        let widget = WidgetSpec(kind: "weather", families: ["systemSmall"], budget: 40)
        let job = TaskDefinition(identifier: "app.weather", namespace: "home", allowance: .seconds(20), grace: .seconds(2))
        #expect(widget.providerDefinition(of: job, family: "systemSmall")
            == TaskDefinition(identifier: "app.weather#systemSmall", kind: .processing, namespace: "widget.weather",
                              allowance: .seconds(20), grace: .seconds(2)))
        let command = widget.providerCommand(CommandJob(argv: ["fetch"], environment: ["A": "1"]), family: "systemSmall",
                                             sharedContainer: "/srv/shared")
        #expect(command.environment == ["A": "1", "REFRESH_WIDGET_KIND": "weather", "REFRESH_WIDGET_FAMILY": "systemSmall",
                                        "REFRESH_WIDGET_CACHE_TTL": String(widget.sharedFetch.wholeMilliseconds / 1000),
                                        "REFRESH_WIDGET_CACHE": "/srv/shared/cache/widgets/weather"])
        #expect(widget.definition(job: job, families: [.systemSmall]).budget == .limited(40))
    }

    @Test func aReloadIsPlannedAsStepsInOrder() {
        func job(_ id: String, _ argv: String, widget: WidgetSpec? = nil) -> JobSpec {
            JobSpec(definition: TaskDefinition(identifier: id), command: CommandJob(argv: [argv]), widget: widget)
        }
        let weather = WidgetSpec(kind: "weather", families: ["systemSmall", "systemMedium"])
        let current = ["app.gone": job("app.gone", "a"), "app.same": job("app.same", "a"),
                       "app.changed": job("app.changed", "a"), "app.widget": job("app.widget", "a", widget: weather)]
        let narrower = WidgetSpec(kind: "weather", families: ["systemSmall"])
        let loaded = [job("app.same", "a"), job("app.changed", "b"), job("app.widget", "a", widget: narrower), job("app.new", "a")]
        let plan = ReloadPlan.diff(current: current, loaded: loaded)
        #expect(plan.summary == "1 added, 2 changed, 1 removed, 1 unchanged")
        #expect(plan.steps(current: current) == [
            .withdraw("app.gone"),
            .redeclare(job("app.new", "a")),
            .redeclare(job("app.changed", "b")),
            // The family still on screen keeps its provider (and its pending reload).
            .withdrawWidget(current["app.widget"]!, keeping: ["systemSmall"]),
            .declareWidget(job("app.widget", "a", widget: narrower)),
            .seed([job("app.new", "a")], replacing: false),
            .seed([job("app.changed", "b")], replacing: true),
        ])
    }

    @Test func aStartedProcessIsSavedOnlyWhereStateIsSaved() {
        var effects: [SchedulerEffect] = []
        let order = LaunchOrder(runID: 1, identifier: "app.job", kind: .appRefresh, started: Self.t0,
                                deadline: Self.t0 + .seconds(30), attempt: 1)
        var plain = Self.machine()
        plain.processStarted(order, processGroup: 4242, startTicks: 99, into: &effects)
        #expect(effects == [])  // no store: nothing persists
        #expect(RuntimeMachine.processStartedLog(order, processGroup: 4242).description == "app.job[1] started pid 4242")
        var stored = RuntimeMachine(scheduler: SchedulerCore(configuration: SchedulerConfiguration(), definitions: [Self.job]))
        stored.processStarted(order, processGroup: 4242, startTicks: 99, into: &effects)
        #expect(effects == [.persist(.processStarted(runID: 1, processGroup: 4242, startTicks: 99))])
    }

    /// A launch starts only with something to run: no handler, or a command with an empty argv,
    /// is a failed start, the run's end in the same event (nothing reaches a host).
    @Test func aLaunchWithNothingToRunEndsAtOnce() throws {
        let t0 = Self.t0
        var machine = Self.machine()
        let order = try Self.launch(&machine)
        var effects: [SchedulerEffect] = []
        #expect(machine.launching(order, .command(runsNothing: false), at: t0, into: &effects))
        #expect(machine.launching(order, .inProcess, at: t0, into: &effects))
        #expect(machine.launching(order, .action, at: t0, into: &effects))
        #expect(effects == [])
        // An empty argv: could not start, the run is over, the one timer goes.
        #expect(!machine.launching(order, .command(runsNothing: true), at: t0, into: &effects))
        #expect(effects == [.disarmTimer])
        #expect(machine.machines.scheduler.activeRuns.isEmpty)

        // With routine logs on, the run's end says why.
        var configuration = SchedulerConfiguration()
        configuration.emitsStateChanges = false
        configuration.emitsRunEnds = true
        var logged = RuntimeMachine(scheduler: SchedulerCore(configuration: configuration, definitions: [Self.job]))
        logged.handle(.restore(SchedulerCore.RestoredState()), at: t0, into: &effects)
        effects = []
        try logged.submit(TaskRequest(identifier: Self.job.identifier), at: t0, into: &effects)
        logged.handle(.timerFired, at: t0, into: &effects)
        for (target, why) in [(nil, "no handler registered"),
                              (RuntimeMachine.LaunchTarget.command(runsNothing: true), "could not start: no command to run")] {
            effects = []
            if target != nil {
                try logged.submit(TaskRequest(identifier: Self.job.identifier), at: t0, into: &effects)
                logged.handle(.timerFired, at: t0, into: &effects)
                effects = []
            }
            let run = logged.machines.scheduler.activeRuns.first!
            #expect(!logged.launching(run, target, at: t0, into: &effects))
            let lines = effects.compactMap { effect -> String? in if case let .log(log) = effect { log.description } else { nil } }
            #expect(lines.contains { $0.hasPrefix("finished app.job run \(run.runID): failure (\(why))") }, "\(lines)")
        }
    }

    /// A kill ends a run in refreshd's own process (a handler, an action) at once, as abandoned,
    /// in the same input: no exit will come. A command's kill waits for its process's exit.
    @Test func aKilledInProcessRunEndsAtOnceAsAbandoned() throws {
        let t0 = Self.t0
        for target in [RuntimeMachine.LaunchTarget.inProcess, .action, .command(runsNothing: false)] {
            var machine = Self.machine()
            let order = try Self.launch(&machine)
            let started = Self.effects {
                guard case .starts(true) = machine.handle(.launching(order, target, storeFailed: false), at: t0, into: &$0) else {
                    Issue.record("\(target) did not start"); return
                }
            }
            #expect(started == [])
            // Its allowance (30 s) ends: the expiration; its grace (5 s) ends: the kill.
            let expired = Self.effects { _ = machine.handle(.event(.timerFired), at: t0 + .seconds(30), into: &$0) }
            #expect(expired == [.log(.expirationDelivered(runID: 1, identifier: "app.job")), .expire(runID: 1),
                                .armTimer(at: t0 + .seconds(35))])
            let killed = Self.effects { _ = machine.handle(.event(.timerFired), at: t0 + .seconds(35), into: &$0) }
            // The same orders for both (the run's end is a state change and a routine log line,
            // both off here); what differs is whether the run is still in flight after them.
            #expect(killed == [.log(.killed(runID: 1, identifier: "app.job")), .kill(runID: 1)])
            if case .command = target {
                #expect(machine.machines.scheduler.activeRuns.count == 1)
            } else {
                #expect(machine.machines.scheduler.activeRuns.isEmpty)
                #expect(machine.inProcessRuns.isEmpty)
                // Its handler returning later changes nothing.
                #expect(Self.effects { _ = machine.handle(.workStopped(runID: 1), at: t0 + .seconds(36), into: &$0) } == [])
                #expect(Self.effects { _ = machine.handle(.workEnded(nil, runID: 1, exit: .exited(0), results: [], usage: .none, swept: nil),
                                                          at: t0 + .seconds(36), into: &$0) } == [])
            }
        }
    }

    /// A wake-up is one event: a clock change it finds and the firing come out together, in
    /// that order, for one commit (ARCHITECTURE.md: one transaction per event).
    @Test func aWakeUpThatFindsAClockJumpIsOneEvent() throws {
        let t0 = Self.t0
        var machine = Self.machine()
        machine.attach(clocks: ClockReading(wall: t0, monotonic: .seconds(100)))
        // A request due in 10 s; the wake-up finds the wall clock an hour ahead.
        _ = try Self.effects { try machine.submit(TaskRequest(identifier: Self.job.identifier, earliestBeginDate: t0 + .seconds(10)),
                                                  at: t0, into: &$0) }
        let jumped = ClockReading(wall: t0 + .seconds(3610), monotonic: .seconds(110))
        let order = LaunchOrder(runID: 1, identifier: Self.job.identifier, kind: .appRefresh, started: jumped.wall,
                                deadline: jumped.wall + .seconds(30), attempt: 1)
        #expect(Self.effects { machine.wakeUp(jumped, into: &$0) } == [
            // The change: logged, the request it made due launched, the timer re-armed for its deadline...
            .log(.clockChanged(jumped.wall, expected: t0 + .seconds(10))), .launch(order), .armTimer(at: order.deadline),
            // ...then the firing, which finds nothing more to do and arms the one timer again (it fired).
            .armTimer(at: order.deadline),
        ])
        // No jump: the firing alone.
        #expect(Self.effects { machine.wakeUp(ClockReading(wall: t0 + .seconds(3640), monotonic: .seconds(140)), into: &$0) }
            == [.log(.expirationDelivered(runID: 1, identifier: Self.job.identifier)), .expire(runID: 1),
                .armTimer(at: t0 + .seconds(3645))])
    }

    /// The runtime's log lines are the machine's words (`RuntimeLog`), whichever host reports them.
    @Test func theRuntimesLogLinesAreWordedByTheMachine() {
        let order = LaunchOrder(runID: 7, identifier: "app.job", kind: .appRefresh, started: Self.t0,
                                deadline: Self.t0 + .seconds(30), attempt: 1)
        #expect(RuntimeMachine.output(order, stream: "stdout", line: "hello").description == "app.job[7] stdout: hello")
        #expect(RuntimeMachine.leftoversKilled(identifier: "app.job", runID: 7, count: 0, atStart: false) == nil)
        #expect(RuntimeMachine.leftoversKilled(identifier: "app.job", runID: 7, count: 2, atStart: false)?.description
            == "app.job[7] killed 2 leftover processes at the run's end")
        #expect(RuntimeMachine.leftoversKilled(identifier: "app.job", runID: 7, count: 1, atStart: true)?.description
            == "reaped 1 leftover process of app.job run 7")
        let inside = Publication(path: "widgets/a.json", contents: "{}")
        #expect(RuntimeMachine.publishing(inside, in: "/srv/shared") == .write(container: "/srv/shared"))
        #expect(RuntimeMachine.publishing(inside, in: nil)
            == .fail(.runtime(.notPublished(path: "widgets/a.json", reason: "no shared container is configured"))))
        let outside = Publication(path: "../a.json", contents: "{}")
        #expect(RuntimeMachine.publishing(outside, in: "/srv/shared") == .fail(.runtime(.notContained(path: "../a.json"))))
        #expect(LogMessage.runtime(.notContained(path: "../a.json")).description
            == "not published: ../a.json is not inside the shared container")
        #expect(LogMessage.runtime(.reloaded(reason: "SIGHUP", summary: "1 added", jobs: 3)).description == "reloaded (SIGHUP): 1 added")
        #expect(LogMessage.runtime(.reloadKept(reason: "watch", problems: 1, jobs: 2)).description
            == "reload refused (watch): 1 error; keeping the running config of 2 jobs")
        #expect(LogMessage.runtime(.stopped).description == "stopped")
        // An action no host binds fails its run with a line naming it and what the host runs.
        #expect(ActionSpec.unboundMessage("stage-playlist", bound: [])
            == "no built-in action \"stage-playlist\" in this host (it runs commands and no built-in actions); expected a job with command:")
        #expect(ActionSpec.unboundMessage("x", bound: ["a", "b"]).contains("(it runs commands and a, b)"))
    }
}

extension RuntimeMachineTests {
    /// An instance added before its template put the parameter in a path keeps its record and
    /// its request, but the machine refuses its launch whatever the host holds for it: one
    /// input, the run's failed start saying why, and no code is made for it.
    @Test func anInstanceKeptFromBeforeThePathRuleFailsToStart() throws {
        let t0 = Self.t0
        var machine = Self.machine()
        let template = TaskDefinition(identifier: "t.stage", allowance: .seconds(30))
        _ = Self.effects { machine.handle(.declareTemplate(template, TemplateSpec(parameters: ["user"])), at: t0, into: &$0) }
        _ = try Self.effects { try machine.machines.addInstance(InstanceRecord(template: "t.stage", key: ".old", values: [:]), at: t0, into: &$0) }
        // The template now names the parameter in a path: the instance stays.
        _ = Self.effects {
            machine.handle(.declareTemplate(template, TemplateSpec(parameters: ["user"], pathParameters: ["user"])), at: t0, into: &$0)
        }
        var effects = Self.effects { machine.handle(.timerFired, at: t0, into: &$0) }
        let order = try #require(effects.compactMap { if case let .launch(order) = $0 { order } else { nil } }.first)
        #expect(order.identifier == "t.stage[.old]")
        effects.removeAll()
        let reply = machine.handle(.launching(order, .command(runsNothing: false), storeFailed: false), at: t0, into: &effects)
        guard case .starts(false) = reply else {
            Issue.record("the launch was let start: \(reply)")
            return
        }
        #expect(machine.machines.scheduler.activeRuns.isEmpty)
        #expect(machine.machines.scheduler.instance("t.stage[.old]") != nil)
    }
}
