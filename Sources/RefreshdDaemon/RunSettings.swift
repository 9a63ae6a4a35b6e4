import Foundation
import RefreshdCore

/// What `refreshd run` takes from its options and the environment for the scheduler, decided
/// once for one machine and a cluster node alike (`RefreshDaemon`).
package struct RunSettings: Sendable {
    /// Runs in flight at once (per shard on a cluster node).
    package var maxConcurrentRuns: Int
    /// The jitter's seed; nil: this machine's (`RefreshDaemon.machineSeed`, stable across restarts).
    package var seed: UInt64?
    /// How long finished runs stay in the state (nil: for ever); see
    /// `SchedulerConfiguration.runRetention`.
    package var runRetention: Duration? = SchedulerConfiguration().runRetention
    /// Lines of each run's output the store keeps with it (`RunOutput`; 0: none).
    package var keptOutputLines = RunOutput.defaultLines
    /// Put each run in a cgroup of its own where the system allows one; false (or
    /// `REFRESHD_PROCESS_TRACKING=subreaper` in the environment) uses the child subreaper
    /// instead. Either way a run's processes never outlive it (see README, "No job process
    /// survives its run").
    package var runCgroups = ProcessInfo.processInfo.environment["REFRESHD_PROCESS_TRACKING"] != "subreaper"
    /// Live activity rules (`--no-activities`, `--max-activities`): on a cluster node every
    /// shard's activity machine takes them (a namespace's activities live in its shard).
    package var activities = ActivitySettings()

    package init(maxConcurrentRuns: Int = 4, seed: UInt64? = nil) {
        self.maxConcurrentRuns = maxConcurrentRuns
        self.seed = seed
    }

    /// The scheduler's configuration these settings make.
    package var configuration: SchedulerConfiguration {
        var configuration = SchedulerConfiguration(maxConcurrentRuns: maxConcurrentRuns, seed: seed ?? RefreshDaemon.machineSeed())
        configuration.runRetention = runRetention
        configuration.keptOutputLines = keptOutputLines
        return configuration
    }
}
