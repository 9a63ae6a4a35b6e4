import RefreshdCore

/// The results channel and the leader's exit, decided here for both hosts (`ResultsChannels`):
/// a host reports what it read on a run's fd 3 (`runResultsRead`), the channel's close
/// (`runResultsClosed`) and the leader's exit (`runLeaderExited`); the runtime keeps the
/// results up to the cap, has the host kill the group at the exit (`.killGroup`, carried out by
/// `RuntimeHost.killRunGroup`), waits for the channel at most `ResultsChannels.grace` on the
/// one timer, then has the host close it (`.closeResults`), and ends the run with what was read
/// (`.processEnded`). These are effects like any other, in the one outbox.
extension RefreshRuntime {
    /// Bytes a run's process wrote to its results channel (execution context). Kept up to the
    /// cap; each complete line is offered at once as a live line (`runResultLine`), and a line
    /// taken leaves the buffer, so a long job's live updates never fill it.
    package func runResultsRead(_ order: LaunchOrder, _ chunk: UnsafeRawBufferPointer) {
        if case .liveLine(_, first: true) = perform(.resultsRead(order, chunk)).reply { host?.scheduleDrain() }
    }

    /// `runResultsRead` for bytes at hand (the simulated host's modelled lines).
    package func runResultsRead(_ order: LaunchOrder, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { runResultsRead(order, $0) }
    }

    /// Every writer of the run's results channel closed it (execution context).
    package func runResultsClosed(_ runID: Int64) { perform(.resultsClosed(runID: runID)) }

    /// The run's leader exited (execution context; the host has reaped it): its group is killed
    /// now, and the run ends once its results channel closes, or `ResultsChannels.grace` after
    /// this if something outside the group holds it open. `resultsClosed`: the host saw the
    /// channel close with the leader (it was its last writer), as `runResultsClosed` would say.
    package func runLeaderExited(_ runID: Int64, exit: RunExit, resultsClosed: Bool = false) {
        perform(.leaderExited(runID: runID, exit: exit, resultsClosed: resultsClosed))
    }
}
