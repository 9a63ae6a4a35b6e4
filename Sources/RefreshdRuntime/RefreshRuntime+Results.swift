import RefreshdCore

/// The results channel and the leader's exit, decided here for both hosts (`ResultsChannels`):
/// a host reports what it read on a run's fd 3 (`runResultsRead`), the channel's close
/// (`runResultsClosed`) and the leader's exit (`runLeaderExited`); the runtime keeps the
/// results up to the cap, has the host kill the group at the exit (`RuntimeHost.killRunGroup`),
/// waits for the channel at most `ResultsChannels.grace` on its own timer, then has the host
/// close it (`RuntimeHost.closeResults`), and ends the run with what was read.
extension RefreshRuntime {
    /// Bytes a run's process wrote to its results channel (execution context). Kept up to the
    /// cap; each complete line is offered at once as a live line (`runResultLine`), and a line
    /// taken leaves the buffer, so a long job's live updates never fill it.
    public func runResultsRead(_ order: LaunchOrder, _ chunk: UnsafeRawBufferPointer) {
        let first = lock.withLock { () -> Bool in
            if !machines.results.isBuffering(order.runID), let line = Self.wholeLine(chunk) {
                // One whole line with nothing before it (the common case, and every modelled
                // line): offered as it is, and kept only when it is not taken.
                let taken = takeLiveLine(order, line)
                if !taken.taken { machines.results.read(order.runID, chunk, examined: true) }
                return taken.first
            }
            machines.results.read(order.runID, chunk)
            var first = false
            while let line = machines.results.nextLine(order.runID) {
                let taken = takeLiveLine(order, line)
                if taken.taken { machines.results.takeLine(order.runID) }
                first = first || taken.first
            }
            return first
        }
        if first { host?.scheduleDrain() }
    }

    /// The line when `chunk` is one line short enough to be a result, ending with its line end.
    static func wholeLine(_ chunk: UnsafeRawBufferPointer) -> String? {
        let newline = UInt8(ascii: "\n")
        guard chunk.count > 1, chunk.count <= RunResults.maxLineBytes + 1, chunk.last == newline,
              chunk.firstIndex(of: newline) == chunk.count - 1 else { return nil }
        return String(decoding: chunk.dropLast(), as: UTF8.self)
    }

    /// `runResultsRead` for bytes at hand (the simulated host's modelled lines).
    public func runResultsRead(_ order: LaunchOrder, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { runResultsRead(order, $0) }
    }

    /// Every writer of the run's results channel closed it (execution context).
    public func runResultsClosed(_ runID: Int64) {
        feedResults { results, now, effects in results.closed(runID, into: &effects) }
    }

    /// The run's leader exited (execution context; the host has reaped it): its group is killed
    /// now, and the run ends once its results channel closes, or `ResultsChannels.grace` after
    /// this if something outside the group holds it open. `resultsClosed`: the host saw the
    /// channel close with the leader (it was its last writer), as `runResultsClosed` would say.
    public func runLeaderExited(_ runID: Int64, exit: RunExit, resultsClosed: Bool = false) {
        feedResults { results, now, effects in
            results.leaderExited(runID, exit: exit, closed: resultsClosed, at: now, into: &effects)
        }
    }

    /// One results event through the machines (the grace may re-arm the one timer), its effects
    /// carried out in the drain.
    func feedResults(_ body: (inout ResultsChannels, Instant, inout [ResultsEffect]) -> Void) {
        let host = self.host
        lock.withLock {
            applyLiveBacklog()
            scratch.removeAll(keepingCapacity: true)
            machines.handle(results: body, at: clock(), into: &scratch)
            if !scratch.isEmpty { _ = commit(scratch) }
        }
        kick(host)
    }

    /// Carries out one results decision (execution context, from the drain).
    func execute(_ effect: ResultsEffect, on host: any RuntimeHost) {
        switch effect {
        case let .killGroup(runID):
            host.killRunGroup(runID: runID)
        case let .closeChannel(runID):
            let identifier = lock.withLock { machines.scheduler.activeRuns.first { $0.runID == runID }?.identifier } ?? "?"
            report(RuntimeObservation(
                time: host.now(), kind: .results, identifier: identifier, runID: runID,
                message: "\(identifier)[\(runID)] results channel still open \(ResultsChannels.grace.wholeMilliseconds) ms after the exit (a process outside the run holds fd 3): reporting what was read"))
            host.closeResults(runID: runID)
        case let .ended(runID, exit, results):
            runEnded(runID, exit: exit, results: results)
        }
    }

    /// Under `lock`: offers one complete results line as a live line; whether it was taken, and
    /// whether it is the first waiting for the next drain.
    ///
    /// Activity lines of the plain shape (what `simulate:` blocks and most jobs write) are read
    /// without Foundation (`StrictJSON`, a few µs); every other line is decoded once by
    /// `JSONSerialization`, as `RunResults` checks it. Both give the same `ResultLine`.
    func takeLiveLine(_ order: LaunchOrder, _ line: String) -> (taken: Bool, first: Bool) {
        if line.utf8.count <= RunResults.maxLineBytes, let members = StrictJSON.object(line),
           let taken = takeLiveLine(order, { namespace, now in
               ResultLine.fastActivity(members, owner: order.identifier, namespace: namespace, now: now)
           }) {
            return taken
        }
        // Decoded once: the object `RunResults` checked is the one parsed.
        guard case let .accepted(_, object) = RunResults.verdict(line, number: 1) else { return (false, false) }
        return takeLiveLine(order) { namespace, now in
            ResultLine.parse(object: object, owner: order.identifier, namespace: namespace, now: now)
        } ?? (false, false)
    }

    /// Under `lock`: takes a line `read` parses (nil: it cannot tell, nothing is counted and nil
    /// is returned): within the run's live-line rate, a live line joins the backlog.
    private func takeLiveLine(_ order: LaunchOrder, _ read: (_ namespace: String, _ now: Instant) -> ResultLine?) -> (taken: Bool, first: Bool)? {
        // At most `liveLinesPerSecond` a second per run; beyond it, lines wait for the run's end.
        let now = clock()
        let second = now.milliseconds / 1000
        var rate = liveLineRate[order.runID] ?? (second, 0)
        if rate.second != second { rate = (second, 0) }
        guard rate.count < Self.liveLinesPerSecond else { return (false, false) }
        let namespace = machines.scheduler.definitions[order.identifier]?.namespace ?? "default"
        guard let parsed = read(namespace, now) else { return nil }
        rate.count += 1
        liveLineRate[order.runID] = rate
        guard parsed.isLive else { return (false, false) }
        liveBacklog.append((parsed, now))
        return (true, liveBacklog.count == 1)
    }
}
