import RefreshdCore

/// What runs when a task launches: an external command or a Swift closure in this process.
public enum TaskHandler: Sendable {
    /// Spawned with uv_spawn in its own process group; outcome from its exit status.
    case command(CommandJob)
    /// Called on the scheduler's loop thread with a task object; the closure must eventually call
    /// `setTaskCompleted(success:)`, and should stop promptly when its expiration handler runs.
    case inProcess(@Sendable (RefreshTask) -> Void)
}

/// An external command: argv (no shell), extra environment and working directory.
public struct CommandJob: Sendable, Hashable {
    public var argv: [String]
    public var environment: [String: String]
    public var workingDirectory: String?

    public init(argv: [String], environment: [String: String] = [:], workingDirectory: String? = nil) {
        self.argv = argv
        self.environment = environment
        self.workingDirectory = workingDirectory
    }
}
