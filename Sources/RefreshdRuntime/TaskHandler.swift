import RefreshdCore

/// What runs when a task launches: an external command, a Swift closure in this process, or a
/// built-in action on the worker pool.
package enum TaskHandler: Sendable {
    /// Spawned by the host in its own process group; outcome from its exit status.
    case command(CommandJob)
    /// Called on the runtime's execution context (the loop thread) with a task object; the
    /// closure must eventually call `setTaskCompleted(success:)`, and should stop promptly when
    /// its expiration handler runs.
    case inProcess(@Sendable (RefreshTask) -> Void)
    /// Runs on the host's worker pool, never on the loop thread, with the same allowance,
    /// expiration and grace as any run.
    case action(BuiltInAction)
}

extension TaskHandler {
    /// What the machine's launch rule sees of this handler (`RuntimeMachine.launching`).
    var launchTarget: RuntimeMachine.LaunchTarget {
        switch self {
        case let .command(job): .command(runsNothing: job.argv.isEmpty)
        case .inProcess: .inProcess
        case .action: .action
        }
    }
}
