import RefreshdCore

/// What a scenario file says (`Tests/Scenarios/*.yaml`), validated: its jobs as read from their
/// job files, the device, the faults, the expectations and the simulated window.
///
/// Plain data: the simulator turns it into the scenario it runs (`Scenario(_:)` in
/// `RefreshdSimulation`), so the configuration layer knows nothing of the simulator.
public struct ScenarioConfig: Sendable, Hashable {
    public var name: String
    /// The jobs, each with its `simulate:` block (`JobConfig.simulate`).
    public var jobs: [JobConfig]
    public var device: DeviceModel
    public var faults: [Fault]
    public var expectations: [Expectation]
    /// The first simulated instant.
    public var start: Instant
    public var days: Int
    public var seed: UInt64
    /// The zone calendars and daily windows are read in (IANA name).
    public var timeZone: String
    /// Concurrent runs, as `refreshd run --max-concurrent`.
    public var maxConcurrentRuns: Int
    /// `nodes:` and `node-faults:` (issue 24): run on several nodes; nil: one machine, as before.
    public var cluster: ClusterModel?

    public init(name: String, jobs: [JobConfig], device: DeviceModel = DeviceModel(), faults: [Fault] = [],
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
