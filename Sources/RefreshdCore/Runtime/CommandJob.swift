/// An external command: argv (no shell), extra environment and working directory.
public struct CommandJob: Sendable, Hashable {
    /// The program and its arguments, run as given, without a shell.
    public var argv: [String]
    /// Variables added to the environment refreshd gives every run.
    public var environment: [String: String]
    /// Where the command runs (nil: refreshd's own working directory).
    public var workingDirectory: String?
    /// What each run may use (a job file's `limits:`); none by default.
    package var limits = JobLimits()
    /// Who each run runs as (a job file's `user:` and `group:`); refreshd's own user by default.
    package var runAs: RunAs?

    /// A command as given; it runs in a process group (and cgroup) of its own at each launch.
    public init(argv: [String], environment: [String: String] = [:], workingDirectory: String? = nil) {
        self.argv = argv
        self.environment = environment
        self.workingDirectory = workingDirectory
    }

    /// The environment a run of this command sees, as `KEY=value` sorted by key: refreshd's
    /// own (`base`), the account's (`RunAs.environment`), the job's, then the REFRESH_ variables (the run's identifier, id, deadline,
    /// start, kind, attempt, the results descriptor, the state's `instance`, the shared container).
    package func environment(for order: LaunchOrder, base: [String: String], instance: String,
                            sharedContainer: String?) -> [String] {
        var env = base
        for (key, value) in runAs?.environment ?? [:] { env[key] = value }
        for (key, value) in environment { env[key] = value }
        env["REFRESH_TASK_IDENTIFIER"] = order.identifier
        env["REFRESH_RUN_ID"] = String(order.runID)
        // With REFRESH_RUN_ID, names this run's processes from their first instant (see the reaper).
        env["REFRESH_INSTANCE"] = instance
        env["REFRESH_DEADLINE"] = order.deadline.iso8601
        env["REFRESH_NOW"] = order.started.iso8601
        env["REFRESH_KIND"] = order.kind.rawValue
        env["REFRESH_ATTEMPT"] = String(order.attempt)
        env["REFRESH_RESULT_FD"] = String(RunResults.descriptor)
        if let sharedContainer { env["REFRESH_SHARED_CONTAINER"] = sharedContainer }
        return env.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
    }
}
