/// A run's streams as they are read (issue 22, gathered here by issue 37): its output through
/// the rate limit and into the tail kept with its end, and its results channel's bytes offered
/// line by line as live lines. These are the inputs that change no state
/// (`RuntimeInput.commitsNothing`): what they take is applied at the next drain.
extension RuntimeMachine {
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
}
