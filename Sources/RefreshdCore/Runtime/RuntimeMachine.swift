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
    package private(set) var outputLimits: [Int64: OutputRateLimiter] = [:]
    /// Each running run's kept output (`RunOutput.Tail`), committed with its end.
    package private(set) var outputTails: [Int64: RunOutput.Tail] = [:]
    /// Live results lines applied this second, per running run.
    package private(set) var liveLineRate: [Int64: LiveRate] = [:]
    /// Live results lines taken and not yet applied: applied together, in one commit, before
    /// the next event or at the next drain (`applyLiveBacklog`), each with the identifier of
    /// the run that wrote it (an instance's activities take lines of its own runs only).
    package private(set) var liveBacklog: [(line: ResultLine, at: Instant, writer: String)] = []
    /// What the host's clock readings mean: a step or a resume, or nothing.
    package private(set) var clockSteps = ClockStepDetector()
    /// Command runs whose command has exited and whose leftovers the host is sweeping, and the
    /// ones a stop waits for.
    package private(set) var sweeping: Set<Int64> = []
    package private(set) var stopAfterSweeps: Set<Int64>?
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
    private var keepsOutput: Bool {
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
        for (line, at, writer) in liveBacklog { _ = machines.handleLive(line, from: writer, at: at, into: &effects) }
        liveBacklog.removeAll(keepingCapacity: true)
        return true
    }

    /// The store refused the commit of an event whose effects were `failed`: stop. Runs that
    /// event launched exist only in memory (nothing was started or recorded): they end at once
    /// (`abandoned`), so the stop does not wait for them; then the shutdown. Appends the
    /// shutdown's effects to carry out, without its state changes (nothing more is saved).
    package mutating func storeFailed(_ reason: String, dropping failed: [SchedulerEffect], at now: Instant,
                                      into effects: inout [SchedulerEffect]) {
        effects.append(.log(.runtime(.storeFailed(reason: reason))))
        abandonAndShutDown(dropping: failed, at: now, into: &effects)
    }

    /// What `storeFailed` and `fenced` share: the failed event's launches end in memory
    /// (`abandoned`), then the shutdown, whose effects are appended without its state changes
    /// (nothing more is saved).
    private mutating func abandonAndShutDown(dropping failed: [SchedulerEffect], at now: Instant,
                                             into effects: inout [SchedulerEffect]) {
        var scratch: [SchedulerEffect] = []
        outputTails.removeAll()  // nothing more is committed
        for case let .launch(order) in failed {
            machines.handle(.runFinished(runID: order.runID, exit: .abandoned), at: now, into: &scratch)
        }
        scratch.removeAll()
        handleUnsaved(.shutdown, at: now, into: &effects)
    }

    /// `event` handled after the store failed: its effects appended without its state changes
    /// (nothing more is saved).
    private mutating func handleUnsaved(_ event: SchedulerEvent, at now: Instant, into effects: inout [SchedulerEffect]) {
        var scratch: [SchedulerEffect] = []
        machines.handle(event, at: now, into: &scratch)
        for effect in scratch {
            if case .persist = effect { continue }
            effects.append(effect)
        }
    }

    /// A launch reached after the store failed: its run was committed with an earlier event,
    /// but a commit since failed, so it does not start (on a node, its shard is fenced and
    /// another node may take it). It ends in memory as the failed event's own launches do
    /// (`abandoned`), with nothing saved.
    package mutating func launchAbandoned(_ order: LaunchOrder, at now: Instant, into effects: inout [SchedulerEffect]) {
        handleUnsaved(.runFinished(runID: order.runID, exit: .abandoned), at: now, into: &effects)
    }

    /// A shard's lease is gone (issue 24): a commit was refused by its fence (`ShardFenced`) or
    /// failed, or the node fenced the shard itself. Nothing of the failed event acts (its
    /// launches are ended in memory, as for `storeFailed`); the runtime stops leading: no more
    /// launches, every run in flight gets its expiration and then its kill AT ONCE (another node
    /// may take the shard once the lease expires in database time, so no grace can be waited
    /// for). Nothing more is committed: the engine keeps the reason as its store failure.
    /// Unlike `storeFailed`, refreshd does not stop: only this shard's runtime does.
    package mutating func fenced(_ reason: String, dropping failed: [SchedulerEffect], at now: Instant,
                                 into effects: inout [SchedulerEffect]) {
        effects.append(.log(.runtime(.shardFenced(reason: reason))))
        abandonAndShutDown(dropping: failed, at: now, into: &effects)
        for runID in machines.scheduler.activeRuns.map(\.runID).sorted() { effects.append(.kill(runID: runID)) }
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
        case .command, .inProcess, .action:
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

    // MARK: Job output

    /// Whether the run's current output window is full (a host may then count a whole chunk
    /// with `outputSkipped`), and the drops of a window that ended.
    package mutating func outputWindowIsFull(_ order: LaunchOrder, at now: Instant) -> (full: Bool, dropped: OutputDrop?) {
        var limiter = outputLimits[order.runID] ?? OutputRateLimiter()
        let dropped = limiter.advance(to: Self.window(now))
        outputLimits[order.runID] = limiter
        return (limiter.isFull, dropped.map { drop(order, $0) })
    }

    /// Complete lines a run printed: each that fits the window is logged, the rest counted.
    package mutating func outputLines(_ order: LaunchOrder, _ lines: [String], at now: Instant) -> OutputAction {
        var limiter = outputLimits[order.runID] ?? OutputRateLimiter()
        let dropped = limiter.advance(to: Self.window(now))
        let admitted = lines.filter { limiter.admit(length: $0.utf8.count) }
        outputLimits[order.runID] = limiter
        machines.notifications.output(order.runID, admitted)  // the tail a notification carries
        if keepsOutput, !admitted.isEmpty {
            outputTails[order.runID, default: RunOutput.Tail()]
                .append(admitted, limit: min(machines.scheduler.configuration.keptOutputLines, RunOutput.maxLines))
        }
        return OutputAction(dropped: dropped.map { drop(order, $0) }, admitted: admitted)
    }

    /// Output a host read and dropped unsplit because the window was full.
    package mutating func outputSkipped(_ order: LaunchOrder, bytes: Int, lineEnds: Int) {
        var limiter = outputLimits[order.runID] ?? OutputRateLimiter()
        limiter.drop(bytes: bytes, lineEnds: lineEnds)
        outputLimits[order.runID] = limiter
    }

    private static func window(_ now: Instant) -> UInt64 { UInt64(max(0, now.milliseconds)) }

    private func drop(_ order: LaunchOrder, _ counts: (lines: Int, bytes: Int)) -> OutputDrop {
        OutputDrop(identifier: order.identifier, runID: order.runID, lines: counts.lines, bytes: counts.bytes,
                   limit: OutputRateLimiter().limitText)
    }

    // MARK: Results

    /// Bytes a run wrote to its results channel. Kept up to the cap; each complete line is
    /// offered as a live line (`resultLine`), and a line taken leaves the buffer. True when a
    /// line taken is the first waiting for the next drain (the host is to schedule one).
    package mutating func resultsRead(_ order: LaunchOrder, _ chunk: UnsafeRawBufferPointer, at now: Instant) -> Bool {
        if !machines.results.isBuffering(order.runID), let line = Self.wholeLine(chunk) {
            // One whole line with nothing before it (the common case, and every modelled
            // line): offered as it is, and kept only when it is not taken.
            let taken = resultLine(order, line, at: now)
            if !taken.taken { machines.results.read(order.runID, chunk, examined: true) }
            return taken.first
        }
        machines.results.read(order.runID, chunk)
        var first = false
        while let line = machines.results.nextLine(order.runID) {
            let taken = resultLine(order, line, at: now)
            if taken.taken { machines.results.takeLine(order.runID) }
            first = first || taken.first
        }
        return first
    }

    /// The line when `chunk` is one line short enough to be a result, ending with its line end.
    static func wholeLine(_ chunk: UnsafeRawBufferPointer) -> String? {
        let newline = UInt8(ascii: "\n")
        guard chunk.count > 1, chunk.count <= RunResults.maxLineBytes + 1, chunk.last == newline,
              chunk.firstIndex(of: newline) == chunk.count - 1 else { return nil }
        return String(decoding: chunk.dropLast(), as: UTF8.self)
    }

    /// Offers one complete results line as a live line: whether it was taken (it joins the
    /// backlog), and whether it is the first waiting for the next drain.
    ///
    /// Activity lines of the plain shape (what `simulate:` blocks and most jobs write) are read
    /// without Foundation (`StrictJSON`, a few µs); every other line is decoded once by
    /// `JSONSerialization`, as `RunResults` checks it. Both give the same `ResultLine`.
    package mutating func resultLine(_ order: LaunchOrder, _ line: String, at now: Instant) -> (taken: Bool, first: Bool) {
        if line.utf8.count <= RunResults.maxLineBytes, let members = StrictJSON.object(line),
           let taken = takeLiveLine(order, line, at: now, { namespace in
               ResultLine.fastActivity(members, owner: order.identifier, namespace: namespace, now: now)
           }) {
            return taken
        }
        // Decoded once: the object `RunResults` checked is the one parsed.
        guard case let .accepted(_, object) = RunResults.verdict(line, number: 1) else { return (false, false) }
        return takeLiveLine(order, line, at: now) { namespace in
            ResultLine.parse(object: object, owner: order.identifier, namespace: namespace, now: now)
        } ?? (false, false)
    }

    /// Takes a line `read` parses (nil: it cannot tell, nothing is counted and nil is
    /// returned): within the run's live-line rate, a live line joins the backlog.
    private mutating func takeLiveLine(_ order: LaunchOrder, _ line: String, at now: Instant,
                                       _ read: (_ namespace: String) -> ResultLine?) -> (taken: Bool, first: Bool)? {
        // At most `liveLinesPerSecond` a second per run; beyond it, lines wait for the run's end.
        let second = now.milliseconds / 1000
        var rate = liveLineRate[order.runID] ?? LiveRate(second: second, count: 0)
        if rate.second != second { rate = LiveRate(second: second, count: 0) }
        guard rate.count < Self.liveLinesPerSecond else { return (false, false) }
        let namespace = machines.scheduler.definitions[order.identifier]?.namespace ?? "default"
        guard let parsed = read(namespace) else { return nil }
        rate.count += 1
        liveLineRate[order.runID] = rate
        guard parsed.isLive else { return (false, false) }
        liveBacklog.append((parsed, now, order.identifier))
        if keepsOutput { outputTails[order.runID, default: RunOutput.Tail()].appendLive(line) }
        return (true, liveBacklog.count == 1)
    }

    /// Every writer of the run's results channel closed it: decisions in `results`.
    package mutating func resultsClosed(_ runID: Int64, at now: Instant, into effects: inout [SchedulerEffect]) {
        machines.handle(results: { results, _, decisions in results.closed(runID, into: &decisions) }, at: now, into: &effects)
    }

    /// The run's leader exited: its group is killed now, and the run ends once its channel
    /// closes, or `ResultsChannels.grace` after now (one of the deadlines).
    package mutating func leaderExited(_ runID: Int64, exit: RunExit, resultsClosed: Bool, at now: Instant,
                                       into effects: inout [SchedulerEffect]) {
        machines.handle(results: { results, now, decisions in
            results.leaderExited(runID, exit: exit, closed: resultsClosed, at: now, into: &decisions)
        }, at: now, into: &effects)
    }

    /// A run's work ended (any way): its live-line rate and channel are forgotten; what its
    /// last output window dropped is returned, to log.
    package mutating func runWorkEnded(_ runID: Int64) -> OutputDrop? {
        liveLineRate[runID] = nil
        machines.results.forget(runID)
        guard var limiter = outputLimits.removeValue(forKey: runID), let dropped = limiter.takeDropped() else { return nil }
        let identifier = machines.scheduler.activeRuns.first { $0.runID == runID }?.identifier ?? "?"
        return OutputDrop(identifier: identifier, runID: runID, lines: dropped.lines, bytes: dropped.bytes,
                          limit: limiter.limitText)
    }

    // MARK: Sweeps and stopping

    /// The host sweeps a command run's leftovers before its end is handled.
    package mutating func sweepStarted(_ runID: Int64) { sweeping.insert(runID) }

    /// A sweep is done: true when a stop waited for it and for no other (the engine sends the
    /// shutdown now).
    package mutating func sweepEnded(_ runID: Int64) -> Bool {
        sweeping.remove(runID)
        guard var waiting = stopAfterSweeps else { return false }
        waiting.remove(runID)
        stopAfterSweeps = waiting.isEmpty ? nil : waiting
        return waiting.isEmpty
    }

    /// A graceful stop was asked: true to shut down now; false when it waits for the sweeps
    /// under way (a command that exited before the stop ends as it exited, not `interrupted`).
    package mutating func stopRequested() -> Bool {
        guard !sweeping.isEmpty else { return true }
        stopAfterSweeps = sweeping
        return false
    }

    /// A stop signal (SIGTERM, SIGINT: `name`) reached the host: the first stops gracefully;
    /// one that arrives while stopping kills every run now.
    package func stopSignal(_ name: String) -> StopSignalAction {
        if machines.scheduler.isStopping || stopAfterSweeps != nil {
            return .stopImmediately(reason: "received \(name) again")
        }
        return .stopGracefully(log: .runtime(.stopSignal(name: name)))
    }

    /// Stops without waiting for the graces: its log line (`reason`, and how many are killed),
    /// the shutdown (idempotent: the core stops launching and marks every run as stopped by it),
    /// then a `.kill` for every run in flight, in run order, so each ends `interrupted`.
    package mutating func stopImmediately(_ reason: String, at now: Instant, into effects: inout [SchedulerEffect]) {
        let start = effects.count
        machines.handle(.shutdown, at: now, into: &effects)
        let runs = machines.scheduler.activeRuns.map(\.runID).sorted()
        effects.insert(.log(.runtime(.killingNow(reason: reason, running: runs.count))), at: start)
        for runID in runs { effects.append(.kill(runID: runID)) }
    }
}
