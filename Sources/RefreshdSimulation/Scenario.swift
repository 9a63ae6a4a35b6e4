import RefreshdConfig
import RefreshdCore
import RefreshdRuntime

/// A simulation to run: jobs, the device, faults, how long, from when, with which seed, and
/// what to expect. `refreshd simulate` builds one from a jobs folder; `refreshd test` from a
/// scenario file's `ScenarioConfig` (`init(_:)`), plus how to run it (real commands, hooks).
package struct Scenario: Sendable, Hashable {
    /// The job as the runtime runs it, with its simulation model.
    package struct Job: Sendable, Hashable {
        package var spec: JobSpec
        package var model: JobModel

        package init(spec: JobSpec, model: JobModel = .quickSuccess) {
            self.spec = spec
            self.model = model
        }

        /// A job file's job: its spec (`JobConfig.spec`) and its `simulate:` block (a quick
        /// success without one).
        package init(_ job: JobConfig) {
            self.init(spec: job.spec, model: job.simulate ?? .quickSuccess)
        }
    }

    package var name: String
    package var jobs: [Job]
    package var device: DeviceModel
    package var faults: [Fault]
    package var expectations: [Expectation]
    /// The first simulated instant.
    package var start: Instant
    package var days: Int
    /// Where it ends when not after whole days (`simulate --replay FROM..TO`); nil: `days` after
    /// the start.
    package var until: Instant?
    package var seed: UInt64
    /// The zone calendars and daily windows are read in (IANA name), for the report's days.
    package var timeZone: String
    /// Widget counter days in UTC, as the daemon counts them (`simulate --replay`, compared
    /// with its rows), instead of the zone's local days (the report's).
    package var widgetDaysInUTC = false
    /// Concurrent runs, as `refreshd run --max-concurrent`.
    package var maxConcurrentRuns: Int
    /// Bugs put in on purpose, to show that the invariants and exploration catch them.
    package var hooks = Hooks()
    /// Several nodes over one modelled database (issue 24); nil: one machine.
    package var cluster: ClusterModel?
    /// The shared container the runtime is configured with (`REFRESH_SHARED_CONTAINER`): by
    /// default the modelled one (publications kept by the simulated host, never written); with
    /// real commands (`simulate --exec`), a real directory where they write. Nil: none is
    /// configured, and every publication fails as it does in the daemon (the runtime's decision).
    package var sharedContainer: String? = Scenario.modelledContainer
    /// The path the modelled container goes by. Under /dev/null, so that nothing can ever be
    /// made there: code that tried to write into it for real (a built-in action's body) fails
    /// instead of touching the machine.
    package static let modelledContainer = "/dev/null/refreshd-simulated-container"
    /// The code of built-in actions the runtime runs: with real commands (`simulate --exec`) the
    /// real ones (the command line binds the staging actions); otherwise they are modelled and
    /// need none.
    package var actions: ActionBinding = .none

    /// Test-only defects the simulation can inject into refreshd itself.
    package struct Hooks: Sendable, Hashable {
        /// A restore that forgets one pending request after a kill -9 (a lost commit).
        package var losePendingAfterKill = false
        /// On several nodes: plain jobs placed in the shard of their identifier instead of their
        /// namespace's (`ShardMap.plantedPlacementByIdentifier`), so the rules a namespace shares
        /// are split between shards (issue 32).
        package var misplacePlainJobs = false

        package init(losePendingAfterKill: Bool = false, misplacePlainJobs: Bool = false) {
            self.losePendingAfterKill = losePendingAfterKill
            self.misplacePlainJobs = misplacePlainJobs
        }
    }

    package init(name: String, jobs: [Job], device: DeviceModel = DeviceModel(), faults: [Fault] = [],
                expectations: [Expectation] = [], start: Instant, days: Int = 7, seed: UInt64 = 1,
                timeZone: String = "UTC", maxConcurrentRuns: Int = 4) {
        self.name = name
        self.jobs = jobs
        self.device = device
        self.faults = faults
        self.expectations = expectations
        self.start = start
        self.days = days
        self.seed = seed
        self.timeZone = timeZone
        self.maxConcurrentRuns = maxConcurrentRuns
    }

    /// The scenario a scenario file describes (its jobs as `Job(_:)` makes them).
    package init(_ config: ScenarioConfig) {
        self.init(name: config.name, jobs: config.jobs.map(Job.init),
                  device: config.device, faults: config.faults, expectations: config.expectations, start: config.start,
                  days: config.days, seed: config.seed, timeZone: config.timeZone, maxConcurrentRuns: config.maxConcurrentRuns)
        cluster = config.cluster
    }
}
