/// A log line of the runtime's own decisions (issue 22: the machine words every line; the engine
/// only reports them): what a run's processes, results and output came to, publications that
/// failed, reloads, seeding refusals, the store's failure and the stop. Carried as
/// `LogMessage.runtime`, so it is a `.log` effect like the core's lines, and an observation
/// keeps it typed (`RuntimeObservation.logMessage`).
package enum RuntimeLog: Sendable, Hashable, CustomStringConvertible {
    /// The host started a command run's leader (the daemon's log only; no observation).
    case processStarted(identifier: String, runID: Int64, processGroup: Int32)
    /// At the start, the sweep of a run a dead refreshd left unfinished killed its leftovers.
    case reapedAtStart(identifier: String, runID: Int64, count: Int)
    /// At the start, notifier commands a dead refreshd left running were killed (their
    /// notifications are still held, and are sent again).
    case notifiersReapedAtStart(count: Int)
    /// At a command run's end, the sweep killed what it left running.
    case sweptAtEnd(identifier: String, runID: Int64, count: Int)
    /// A results line the run's end refused, and why.
    case resultRefused(identifier: String, runID: Int64, problem: String)
    /// The results lines a run's end accepted (at least one).
    case resultsReported(identifier: String, runID: Int64, count: Int)
    /// The results channel was still open `graceMilliseconds` after the leader's exit.
    case resultsGraceEnded(identifier: String, runID: Int64, graceMilliseconds: Int64)
    /// A line a run printed, logged as is (escaped when read).
    case output(identifier: String, runID: Int64, stream: String, line: String)
    /// What a run's output window dropped (`RuntimeMachine.OutputDrop`).
    case outputDropped(identifier: String, runID: Int64, lines: Int, bytes: Int, limit: String)
    /// A publication that was not written: its path and why.
    case notPublished(path: String, reason: String)
    /// A publication whose path leaves the shared container.
    case notContained(path: String)
    /// The store refused a commit: refreshd stops.
    case storeFailed(reason: String)
    /// A shard's lease is gone (a commit refused by its fence, or the node fenced it): this
    /// shard's runtime stops leading and kills its runs; refreshd goes on.
    case shardFenced(reason: String)
    /// A first stop signal: a graceful stop.
    case stopSignal(name: String)
    /// An immediate stop: every run in flight is killed now.
    case killingNow(reason: String, running: Int)
    /// The runtime stopped.
    case stopped
    /// A config reload applied: its cause and its plan's summary.
    case reloaded(reason: String, summary: String, jobs: Int)
    /// One problem of a config that could not be used.
    case reloadRefused(problem: String)
    /// A config that could not be used, and the one that stays.
    case reloadKept(reason: String, problems: Int, jobs: Int)
    /// A job's first request that the core refused.
    case seedRefused(identifier: String, SchedulerError)

    package var description: String {
        switch self {
        case let .processStarted(id, runID, group):
            "\(id)[\(runID)] started pid \(group)"
        case let .reapedAtStart(id, runID, count):
            "reaped \(count) leftover process\(count == 1 ? "" : "es") of \(id) run \(runID)"
        case let .notifiersReapedAtStart(count):
            "reaped \(count) notifier process\(count == 1 ? "" : "es") a previous refreshd left running"
        case let .sweptAtEnd(id, runID, count):
            "\(id)[\(runID)] killed \(count) leftover process\(count == 1 ? "" : "es") at the run's end"
        case let .resultRefused(id, runID, problem):
            "\(id)[\(runID)] result refused: \(problem)"
        case let .resultsReported(id, runID, count):
            "\(id)[\(runID)] reported \(count) result\(count == 1 ? "" : "s")"
        case let .resultsGraceEnded(id, runID, grace):
            "\(id)[\(runID)] results channel still open \(grace) ms after the exit (a process outside the run holds fd 3): reporting what was read"
        case let .output(id, runID, stream, line):
            "\(id)[\(runID)] \(stream): \(line)"
        case let .outputDropped(id, runID, lines, bytes, limit):
            "\(id)[\(runID)] \(lines) line\(lines == 1 ? "" : "s") (\(bytes) bytes) of output not logged: over \(limit)"
        case let .notPublished(path, reason):
            "not published: \(path): \(reason)"
        case let .notContained(path):
            "not published: \(path) is not inside the shared container"
        case let .storeFailed(reason):
            "state not saved, stopping: \(reason)"
        case let .shardFenced(reason):
            "fenced, no longer leading: \(reason); killing its running jobs now"
        case let .stopSignal(name):
            "received \(name): stopping gracefully (send it again to kill running jobs now)"
        case let .killingNow(reason, _):
            "\(reason): killing running jobs now"
        case .stopped:
            "stopped"
        case let .reloaded(reason, summary, _):
            "reloaded (\(reason)): \(summary)"
        case let .reloadRefused(problem):
            "reload refused: \(problem)"
        case let .reloadKept(reason, problems, jobs):
            "reload refused (\(reason)): \(problems) error\(problems == 1 ? "" : "s"); keeping the running config of \(jobs) job\(jobs == 1 ? "" : "s")"
        case let .seedRefused(id, error):
            "\(id): request not submitted: \(error)"
        }
    }
}
