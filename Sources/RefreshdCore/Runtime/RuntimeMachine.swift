/// Every decision the runtime makes, in one value (issue 22): the composed machines
/// (`Machines`: scheduler, timelines, activities, conditions re-read, results channels) and the
/// rules that lived in `RefreshRuntime`'s locked state: each run's output rate limit, the rate
/// and backlog of live results lines, the clock-step detector, the sweeps a stop waits for and
/// the second stop signal.
///
/// Events in, effects out, the instant an argument: each report of a host is one mutating call
/// that returns (or appends) exactly what is to be done, in the style of a connection state
/// machine. `RefreshRuntime` holds one of these under its lock and is the engine: it commits
/// the `.persist` effects before it acts, queues the rest in its outbox, drains them on the
/// host and keeps the handler registry. Nothing here reads a clock, does I/O or locks, so the
/// simulator runs exactly these rules (`RuntimeMachineTests` tests them as input -> effects).
package struct RuntimeMachine: Sendable {
    /// Live results lines applied per run per second; more wait for the run's end.
    package static let liveLinesPerSecond = 20

    /// The scheduler, timeline and activity machines, composed (one deadline, one timer).
    package var machines: Machines
    /// Each running run's job-output rate limit (`OutputRateLimiter`).
    package internal(set) var outputLimits: [Int64: OutputRateLimiter] = [:]
    /// Each running run's kept output (`RunOutput.Tail`), committed with its end.
    package internal(set) var outputTails: [Int64: RunOutput.Tail] = [:]
    /// Live results lines applied this second, per running run.
    package internal(set) var liveLineRate: [Int64: LiveRate] = [:]
    /// Live results lines taken and not yet applied: applied together, in one commit, before
    /// the next event or at the next drain (`applyLiveBacklog`), each with the identifier of
    /// the run that wrote it (an instance's activities take lines of its own runs only).
    package internal(set) var liveBacklog: [(line: ResultLine, at: Instant, writer: String)] = []
    /// What the host's clock readings mean: a step or a resume, or nothing.
    package private(set) var clockSteps = ClockStepDetector()
    /// Command runs whose command has exited and whose leftovers the host is sweeping, and the
    /// ones a stop waits for.
    package internal(set) var sweeping: Set<Int64> = []
    package internal(set) var stopAfterSweeps: Set<Int64>?
    /// Runs started in refreshd's own process (a handler, an action): a kill of one ends it at
    /// once, as abandoned, since there is no process whose exit would end it.
    package internal(set) var inProcessRuns: Set<Int64> = []
    /// The first-request text each job was last seeded from (the store's seed specs).
    package var seedSpecs: [String: String] = [:]

    /// One run's live-line count in one second.
    package struct LiveRate: Sendable, Hashable {
        package var second: Int64
        package var count: Int
    }

    /// What a run's output window dropped, reported once per window and at the run's end.
    package struct OutputDrop: Sendable, Hashable {
        package var identifier: String
        package var runID: Int64
        package var lines: Int
        package var bytes: Int
        package var limit: String

        package init(identifier: String, runID: Int64, lines: Int, bytes: Int, limit: String) {
            self.identifier = identifier
            self.runID = runID
            self.lines = lines
            self.bytes = bytes
            self.limit = limit
        }

        /// The log line: `job[7] 12 lines (96 bytes) of output not logged: over 200 lines or 256 KiB a second`.
        package var log: LogMessage {
            .runtime(.outputDropped(identifier: identifier, runID: runID, lines: lines, bytes: bytes, limit: limit))
        }

        package var message: String { log.description }
    }

    /// What to do with lines a run printed: log the admitted ones, after the drop notice of the
    /// window that ended, if any.
    package struct OutputAction: Sendable, Hashable {
        package var dropped: OutputDrop?
        package var admitted: [String]

        /// The log lines, in order: the drop notice, then each admitted line as printed on `stream`.
        package func logs(_ order: LaunchOrder, stream: String) -> [LogMessage] {
            (dropped.map { [$0.log] } ?? []) + admitted.map { RuntimeMachine.output(order, stream: stream, line: $0) }
        }
    }

    /// The log line of one line a run printed (a command's, through the rate limit; a built-in
    /// action's log lines as they are).
    package static func output(_ order: LaunchOrder, stream: String, line: String) -> LogMessage {
        .runtime(.output(identifier: order.identifier, runID: order.runID, stream: stream, line: line))
    }

    /// What a stop signal means.
    package enum StopSignalAction: Sendable, Hashable {
        /// The first: stop gracefully (running work gets its expiration and grace); the log line.
        case stopGracefully(log: LogMessage)
        /// Another while already stopping: kill every run now (`stopImmediately`).
        case stopImmediately(reason: String)
    }

    package init(scheduler: SchedulerCore, conditionsReread: Duration = ConditionsReread.defaultInterval) {
        machines = Machines(scheduler: scheduler, conditionsReread: conditionsReread)
    }

    // MARK: Machine events

    /// A scheduler event (a timer, a run's end, a shutdown, an API call): the machines' effects.
    package mutating func handle(_ event: SchedulerEvent, at now: Instant, into effects: inout [SchedulerEffect]) {
        guard case let .runFinished(runID, _, results, _) = event else {
            machines.handle(event, at: now, into: &effects)
            return
        }
        let tail = outputTails.removeValue(forKey: runID)
        let keeps = keepsOutput && (tail != nil || !results.isEmpty)
            && machines.scheduler.isActive(runID)
        machines.handle(event, at: now, into: &effects)
        guard keeps else { return }
        // In the end's own commit: the kept output is there exactly when the end is.
        // The lines applied live first (they were taken as written), then those accepted at the end.
        var output = tail?.output ?? RunOutput()
        output.results = Array((output.results + results).suffix(RunResults.maxLines))
        effects.append(.persist(.runOutput(runID: runID, output: output)))
    }

    /// Whether runs' output is kept in the store (`SchedulerConfiguration.keptOutputLines`).
    var keepsOutput: Bool {
        machines.scheduler.configuration.emitsStateChanges && machines.scheduler.configuration.keptOutputLines > 0
    }

    /// A request from the API or an operator (`refreshd ctl submit`): the core may refuse it,
    /// and then nothing changed.
    package mutating func submit(_ request: TaskRequest, at now: Instant,
                                 into effects: inout [SchedulerEffect]) throws(SchedulerError) {
        try machines.withScheduler(at: now, into: &effects) { (core, effects) throws(SchedulerError) in
            try core.submit(request, at: now, into: &effects)
        }
    }

    /// An operator's order on a declared identifier (the control socket, `refreshd ctl`).
    package enum OperatorCommand: Sendable, Hashable {
        /// Launch its pending request now, whatever its earliest begin date and conditions.
        case launchNow(identifier: String)
        /// Deliver its run's expiration now.
        case expireNow(identifier: String)
        /// Pause it (a job, an instance or a template): it keeps its pending request and
        /// launches nothing until resumed (`SchedulerCore.pause`).
        case pause(identifier: String)
        /// Resume it: missed slots follow its missed policy as after downtime (`SchedulerCore.resume`).
        case resume(identifier: String)
    }

    /// An operator's order: a refusal (nothing pending, nothing running, stopping) changes nothing.
    package mutating func handle(operator command: OperatorCommand, at now: Instant,
                                 into effects: inout [SchedulerEffect]) throws(ControlRefusal) {
        try machines.withScheduler(at: now, into: &effects) { (core, effects) throws(ControlRefusal) in
            switch command {
            case let .launchNow(identifier): try core.launchNow(identifier, at: now, into: &effects)
            case let .expireNow(identifier): try core.expireNow(identifier, at: now, into: &effects)
            case let .pause(identifier): try core.pause(identifier, at: now, into: &effects)
            case let .resume(identifier): try core.resume(identifier, at: now, into: &effects)
            }
        }
        // Recorded for `simulate --replay` (`WorldEvent`) once the order was taken.
        guard machines.stores else { return }
        switch command {
        case let .pause(identifier): effects.append(.persist(.putRecord(WorldEvent(at: now, what: .pause(identifier)).record)))
        case let .resume(identifier): effects.append(.persist(.putRecord(WorldEvent(at: now, what: .resume(identifier)).record)))
        case .launchNow, .expireNow: break
        }
    }

    /// What an operator's submit (`refreshd ctl submit`) asks for: the job's own request
    /// (`TaskRequest.forJob`: its kind and conditions), due at `earliest` or now; refused for an
    /// identifier no job declares (`SchedulerCore.undeclared`: a template's names its instances).
    /// The operator chooses when, never what.
    package func operatorRequest(_ identifier: String, earliest: Instant?) throws(ControlRefusal) -> TaskRequest {
        guard let definition = machines.scheduler.definitions[identifier] else {
            throw machines.scheduler.undeclared(identifier)
        }
        return .forJob(definition, earliest: earliest)
    }

    /// The refusal of an order naming an identifier no job declares (`SchedulerCore.undeclared`).
    package func undeclared(_ identifier: String) -> ControlRefusal { machines.scheduler.undeclared(identifier) }

    /// What a run's end reports of its results: the accepted lines (compact JSON, handed to the
    /// machines with the run's end) and its log lines: one per refused line, then the count
    /// accepted (`app.job[7] reported 2 results`, when any was).
    package struct ResultsReport: Sendable, Hashable {
        package var accepted: [String]
        package var logs: [LogMessage]
    }

    /// Checks a run's raw results lines (`RunResults.check`) before its end is handled.
    package func checkResults(_ runID: Int64, _ results: [String]) -> ResultsReport {
        guard !results.isEmpty else { return ResultsReport(accepted: [], logs: []) }
        let identifier = identifier(ofRun: runID)
        let checked = RunResults.check(results)
        let count = checked.accepted.count
        var logs: [LogMessage] = checked.problems.map {
            .runtime(.resultRefused(identifier: identifier, runID: runID, problem: $0))
        }
        if count > 0 { logs.append(.runtime(.resultsReported(identifier: identifier, runID: runID, count: count))) }
        return ResultsReport(accepted: checked.accepted, logs: logs)
    }

    /// A run's work ended with these raw results lines: they are checked (`checkResults`), and
    /// the end is one event: the results' log lines, then the machines' effects of the run's end
    /// with the lines accepted and what the host measured of the run (`usage`).
    package mutating func finishRun(_ runID: Int64, exit: RunExit, results: [String], usage: RunUsage = .none,
                                    at now: Instant, into effects: inout [SchedulerEffect]) {
        var accepted: [String] = []
        if !results.isEmpty {
            let report = checkResults(runID, results)
            for log in report.logs { effects.append(.log(log)) }
            accepted = report.accepted
        }
        handle(.runFinished(runID: runID, exit: exit, results: accepted, usage: usage), at: now, into: &effects)
    }

    /// The log line when a run's results channel is closed at the end of the grace.
    package func resultsGraceEnded(_ runID: Int64) -> LogMessage {
        .runtime(.resultsGraceEnded(identifier: identifier(ofRun: runID), runID: runID,
                                    graceMilliseconds: ResultsChannels.grace.wholeMilliseconds))
    }

    /// The identifier of a run in flight (`?` for one the scheduler no longer holds).
    private func identifier(ofRun runID: Int64) -> String {
        machines.scheduler.activeRuns.first { $0.runID == runID }?.identifier ?? "?"
    }

    /// Gives a loaded job its first request as `SeedPlan` says: the submit and its seed record
    /// appended to `effects`. False when the plan keeps what there is (nothing to commit).
    package mutating func seed(_ job: JobSpec, replacing: Bool, at now: Instant,
                               into effects: inout [SchedulerEffect]) throws(SchedulerError) -> Bool {
        let id = job.identifier
        switch SeedPlan.plan(job, hasPending: machines.scheduler.pending(id) != nil, seededFrom: seedSpecs[id],
                             replacing: replacing, now: now) {
        case .keep, .none:
            return false
        case .submitFirst:
            try machines.withScheduler(at: now, into: &effects) { (core, effects) throws(SchedulerError) in
                try core.submitFirst(id, at: now, into: &effects)
            }
        case let .submit(earliest):
            try submit(.forJob(job.definition, earliest: earliest), at: now, into: &effects)
        }
        let text = job.firstRequest.text
        seedSpecs[id] = text
        if machines.scheduler.configuration.emitsStateChanges {
            effects.append(.persist(.seedSpec(identifier: id, spec: text)))
        }
        return true
    }

    /// Applies the live lines taken since the last time, in order; false when there were none
    /// (nothing to commit).
    package mutating func applyLiveBacklog(into effects: inout [SchedulerEffect]) -> Bool {
        guard !liveBacklog.isEmpty else { return false }
        var writers: [String] = []
        for (line, at, writer) in liveBacklog {
            _ = machines.handleLive(line, from: writer, at: at, into: &effects)
            if writers.last != writer, !writers.contains(writer) { writers.append(writer) }
        }
        liveBacklog.removeAll(keepingCapacity: true)
        saveLiveOutput(of: writers, into: &effects)
        return true
    }

    /// The output kept so far of each run whose live lines were just applied, saved in the same
    /// commit in its run's row (replaced at its end, as ever): a run killed by kill -9 then keeps
    /// the lines that drove its activities, which `simulate --replay` writes again. Bounded as
    /// the kept output is (`RunOutput.Tail`), and written once a drain, not once a line.
    mutating func saveLiveOutput(of writers: [String], into effects: inout [SchedulerEffect]) {
        guard keepsOutput else { return }
        for writer in writers {
            guard let runID = machines.scheduler.runs.run(for: writer), let tail = outputTails[runID] else { continue }
            effects.append(.persist(.runOutput(runID: runID, output: tail.output)))
        }
    }

    // MARK: Clocks

    /// The clocks read when the host attached: the baseline a step or resume is measured against.
    package mutating func attach(clocks: ClockReading) { clockSteps = ClockStepDetector(baseline: clocks) }

    /// The host read its clocks (at the one wake-up, or at the kernel's notice that the wall
    /// clock was set): the `.clockChanged` to handle before anything else, if they moved apart.
    package mutating func clocksRead(_ clocks: ClockReading, _ notice: ClockStepDetector.Notice) -> SchedulerEvent? {
        clockSteps.observe(clocks, notice).map { .clockChanged(expected: $0) }
    }

    /// The host's one wake-up fired, with the clocks read then: ONE event (one commit). A wall
    /// clock that moved apart from the monotonic one by more than the tolerance since the last
    /// change is the `.clockChanged` first, then the wake-up is `.timerFired`; both at the
    /// reading's wall clock.
    package mutating func wakeUp(_ clocks: ClockReading, into effects: inout [SchedulerEffect]) {
        if let changed = clocksRead(clocks, .wakeUp) { handle(changed, at: clocks.wall, into: &effects) }
        handle(.timerFired, at: clocks.wall, into: &effects)
    }

    // MARK: Processes

    /// The host started a command run's leader (its process group and start ticks): saved, in
    /// a transaction of its own, so that a restart's sweep can tell the run's processes apart.
    /// Mutating only so that the engine's call borrows the machine in place: read through the
    /// runtime's stored property, the whole machine was copied (and released) at every start.
    package mutating func processStarted(_ order: LaunchOrder, processGroup: Int32, startTicks: UInt64?,
                                         into effects: inout [SchedulerEffect]) {
        if machines.scheduler.configuration.emitsStateChanges {
            effects.append(.persist(.processStarted(runID: order.runID, processGroup: processGroup, startTicks: startTicks)))
        }
    }

    /// The log line of a started process (the daemon's log only: no observation, as before
    /// issue 22). Made only when the log shows it: the boxed message was an allocation a run.
    package static func processStartedLog(_ order: LaunchOrder, processGroup: Int32) -> LogMessage {
        .runtime(.processStarted(identifier: order.identifier, runID: order.runID, processGroup: processGroup))
    }

    /// What a launch runs, as far as a rule can see it: the engine's registry holds the code
    /// (`TaskHandler`), the machine decides whether it can start.
    package enum LaunchTarget: Sendable, Hashable {
        /// A command, and whether its argv names anything to run.
        case command(runsNothing: Bool)
        /// A closure in the embedding process.
        case inProcess
        /// A built-in action (bound by the host, or failing with a line that names it).
        case action
    }

    /// A launch is about to start with what the registry holds for its identifier (nil:
    /// nothing). True: start it. False: it cannot start, and its failed start is its end,
    /// handled now (appended to `effects`, one event): no handler (`noHandler`), or a command
    /// with nothing to run (`could not start: no command to run`), never handed to a host
    /// (uv_spawn cannot run nothing), so both hosts fail it the same way.
    package mutating func launching(_ order: LaunchOrder, _ target: LaunchTarget?, at now: Instant,
                                    into effects: inout [SchedulerEffect]) -> Bool {
        if let problem = launchProblem(order) {
            startFailed(order.runID, reason: problem, at: now, into: &effects)
            return false
        }
        switch target {
        case nil:
            handle(.runFinished(runID: order.runID, exit: .noHandler), at: now, into: &effects)
            return false
        case .command(runsNothing: true):
            startFailed(order.runID, reason: "no command to run", at: now, into: &effects)
            return false
        case .command:
            return true
        case .inProcess, .action:
            inProcessRuns.insert(order.runID)
            return true
        }
    }

    /// Why an instance's run, or its widget's provider run (`T[K]#family`), cannot start on any
    /// host: a value kept from before its template put a parameter in a path
    /// (`SchedulerCore.launchProblem`). Its path is never made, nor its action bound.
    private func launchProblem(_ order: LaunchOrder) -> String? {
        guard machines.scheduler.holdsInstances else { return nil }
        let id = order.identifier
        if !machines.instanceWidgets.isEmpty, machines.providers[id] != nil,
           let hash = id.utf8.lastIndex(of: UInt8(ascii: "#")) {
            return machines.scheduler.launchProblem(at: -1, String(id[..<hash]))
        }
        return machines.scheduler.launchProblem(at: order.slot.raw, id)
    }

    /// The host could not start a command run (`reason`, e.g. its executable is missing): the
    /// run's end.
    package mutating func startFailed(_ runID: Int64, reason: String, at now: Instant, into effects: inout [SchedulerEffect]) {
        inProcessRuns.remove(runID)
        handle(.runFinished(runID: runID, exit: .spawnFailed(reason)), at: now, into: &effects)
    }

    // MARK: Publications, leftovers, the stop

    /// Where a publication goes: the host writes it into the shared container, or it fails
    /// here, logged, on every host (outside the container; no container configured).
    package enum PublishDecision: Sendable, Hashable {
        case write(container: String)
        case fail(LogMessage)
    }

    package static func publishing(_ publication: Publication, in container: String?) -> PublishDecision {
        guard publication.isContained else { return .fail(.runtime(.notContained(path: publication.path))) }
        guard let container else { return .fail(.runtime(.notPublished(path: publication.path, reason: "no shared container is configured"))) }
        return .write(container: container)
    }

    /// The log line of processes a sweep killed: at the start, of a run a dead refreshd left
    /// unfinished; at a run's end, what it left running (nil when there were none).
    package static func leftoversKilled(identifier: String, runID: Int64, count: Int, atStart: Bool) -> LogMessage? {
        if atStart { return .runtime(.reapedAtStart(identifier: identifier, runID: runID, count: count)) }
        return count == 0 ? nil : .runtime(.sweptAtEnd(identifier: identifier, runID: runID, count: count))
    }
}
