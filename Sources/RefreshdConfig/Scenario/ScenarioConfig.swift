import RefreshdCore

/// What a scenario file says (`Tests/Scenarios/*.yaml`), validated: its jobs as read from their
/// job files, the device, the faults, the expectations and the simulated window.
///
/// Plain data: the simulator turns it into the scenario it runs (`Scenario(_:)` in
/// `RefreshdSimulation`), so the configuration layer knows nothing of the simulator.
package struct ScenarioConfig: Sendable, Hashable {
    package var name: String
    /// The jobs, each with its `simulate:` block (`JobConfig.simulate`).
    package var jobs: [JobConfig]
    package var device: DeviceModel
    package var faults: [Fault]
    package var expectations: [Expectation]
    /// The first simulated instant.
    package var start: Instant
    package var days: Int
    package var seed: UInt64
    /// The zone calendars and daily windows are read in (IANA name).
    package var timeZone: String
    /// Concurrent runs, as `refreshd run --max-concurrent`.
    package var maxConcurrentRuns: Int
    /// `nodes:` and `node-faults:` (issue 24): run on several nodes; nil: one machine, as before.
    package var cluster: ClusterModel?

    package init(name: String, jobs: [JobConfig], device: DeviceModel = DeviceModel(), faults: [Fault] = [],
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
