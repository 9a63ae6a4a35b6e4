import RefreshdCore

/// How a job behaves in simulation: the `simulate:` block of a job file (ignored by `run`).
///
/// Without one a command job is a quick success. Durations and outcomes are drawn from the
/// simulation's seed, per run, so a simulation repeats exactly.
public struct JobModel: Sendable, Hashable {
    /// How long a run takes if nothing stops it.
    public var duration: DurationModel
    /// Added to the duration for each earlier run: input that grows (a run that expires once
    /// it has grown past the allowance).
    public var growth: Duration
    /// Relative weights of how a run ends on its own.
    public var outcomes: OutcomeWeights
    /// Whether it ignores the expiration (SIGTERM) and is killed after the grace.
    public var ignoresTerminate: Bool
    /// Lines it prints at start.
    public var output: [String]
    /// Lines it writes to its results channel (JSON objects).
    public var results: [String]
    /// For a `kind: timeline` job: what its provider returns (nil: one entry now, `atEnd`).
    public var timeline: TimelineModel?
    /// A live activity the job drives while it runs.
    public var activity: ActivityModel?
    /// Background processes its command leaves in its process group: refreshd kills them when
    /// the command exits.
    public var children = 0
    /// A process outside its group (a daemon it started) that keeps its results channel open
    /// after it exits: refreshd waits at most 500 ms for the channel (nil: none).
    public var resultsHeldOpen: HeldOpen?
    /// For a template: how many instances to simulate (keys drawn from the scenario's seed,
    /// in place of its `instances:` list), nil for its list.
    public var instances: Int?
    /// For a template's simulated instances: the share (0...1) whose every run fails, the
    /// first `instances * failing` of them (the others follow `outcomes`).
    public var failing: Double = 0

    /// How long a process outside the job's group keeps its results channel open after its exit.
    public enum HeldOpen: Sendable, Hashable {
        case closesAfter(Duration)
        /// Until the run's end (refreshd's sweep kills it).
        case forever
    }

    public init(duration: DurationModel = .fixed(.milliseconds(10)), growth: Duration = .zero,
                outcomes: OutcomeWeights = OutcomeWeights(), ignoresTerminate: Bool = false,
                output: [String] = [], results: [String] = [], timeline: TimelineModel? = nil,
                activity: ActivityModel? = nil) {
        self.duration = duration
        self.growth = growth
        self.outcomes = outcomes
        self.ignoresTerminate = ignoresTerminate
        self.output = output
        self.results = results
        self.timeline = timeline
        self.activity = activity
    }

    /// A quick success, what a job without a `simulate:` block is.
    public static let quickSuccess = JobModel()

    /// A run's duration: fixed, or drawn between bounds.
    public enum DurationModel: Sendable, Hashable {
        case fixed(Duration)
        /// Uniform in [low, high].
        case uniform(Duration, Duration)
        /// Log-normal-ish: around `median`, rarely above `p99` (a heavy right tail, as real
        /// fetches have).
        case skewed(median: Duration, p99: Duration)
    }

    /// Weights of success, failure (exit 1) and crash (a signal refreshd did not send).
    public struct OutcomeWeights: Sendable, Hashable {
        public var success: Double
        public var failure: Double
        public var crash: Double

        public init(success: Double = 1, failure: Double = 0, crash: Double = 0) {
            self.success = success
            self.failure = failure
            self.crash = crash
        }
    }
}
