import RefreshdCore
import RefreshdRuntime

/// A simulation to run: jobs, the device, faults, how long, from when, with which seed, and
/// what to expect. `refreshd simulate` builds one from a jobs folder; `refreshd test` reads them
/// from scenario files.
public struct Scenario: Sendable, Hashable {
    /// The job as the runtime runs it, with its simulation model.
    public struct Job: Sendable, Hashable {
        public var spec: JobSpec
        public var model: JobModel

        public init(spec: JobSpec, model: JobModel = .quickSuccess) {
            self.spec = spec
            self.model = model
        }
    }

    public var name: String
    public var jobs: [Job]
    public var device: DeviceModel
    public var faults: [Fault]
    public var expectations: [Expectation]
    /// The first simulated instant.
    public var start: Instant
    public var days: Int
    public var seed: UInt64
    /// The zone calendars and daily windows are read in (IANA name), for the report's days.
    public var timeZone: String
    /// Concurrent runs, as `refreshd run --max-concurrent`.
    public var maxConcurrentRuns: Int
    /// Bugs put in on purpose, to show that the invariants and exploration catch them.
    public var hooks = Hooks()
    /// `REFRESH_SHARED_CONTAINER` for the runs (with real commands, `simulate --exec`, where
    /// they write).
    public var sharedContainer: String?

    /// Test-only defects the simulation can inject into refreshd itself.
    public struct Hooks: Sendable, Hashable {
        /// A restore that forgets one pending request after a kill -9 (a lost commit).
        public var losePendingAfterKill = false

        public init(losePendingAfterKill: Bool = false) {
            self.losePendingAfterKill = losePendingAfterKill
        }
    }

    public init(name: String, jobs: [Job], device: DeviceModel = DeviceModel(), faults: [Fault] = [],
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
}
