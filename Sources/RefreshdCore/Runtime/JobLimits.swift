/// What a job's command may use (a job file's `limits:`, issue 35): carried as data with the
/// command, applied by the host to each run (the libuv host through the run's cgroup v2, with
/// `setrlimit`/`setpriority` where there is none).
///
/// ```yaml
/// limits: {memory: 256M, cpu: 50%, tasks: 64, nice: 10, io-weight: 50}
/// ```
package struct JobLimits: Sendable, Hashable {
    /// The run's memory in bytes, swap included (`memory.max`, `memory.swap.max` 0); over it the
    /// kernel kills a process of the run and the run ends `crashed` ("memory limit").
    package var memoryBytes: Int64?
    /// CPU time as a percentage of one CPU (`cpu.max`: 50 is half a CPU, 200 two CPUs).
    package var cpuPercent: Int?
    /// Processes and threads the run may have at once (`pids.max`): a fork over it fails.
    package var tasks: Int?
    /// The command's nice value (-20 to 19), set on its process group after the spawn.
    package var nice: Int?
    /// Its share of disk bandwidth under contention (`io.weight`, 1 to 10000; 100 is the default).
    package var ioWeight: Int?

    package init(memoryBytes: Int64? = nil, cpuPercent: Int? = nil, tasks: Int? = nil, nice: Int? = nil,
                 ioWeight: Int? = nil) {
        self.memoryBytes = memoryBytes
        self.cpuPercent = cpuPercent
        self.tasks = tasks
        self.nice = nice
        self.ioWeight = ioWeight
    }

    /// No limit at all (a job without `limits:`).
    package var isEmpty: Bool { self == JobLimits() }
}
