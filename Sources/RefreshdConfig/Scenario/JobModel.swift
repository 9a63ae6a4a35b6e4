import RefreshdCore

/// How a job behaves in simulation: the `simulate:` block of a job file (ignored by `run`).
///
/// Without one a command job is a quick success. Durations and outcomes are drawn from the
/// simulation's seed, per run, so a simulation repeats exactly.
package struct JobModel: Sendable, Hashable {
    /// How long a run takes if nothing stops it.
    package var duration: DurationModel
    /// Added to the duration for each earlier run: input that grows (a run that expires once
    /// it has grown past the allowance).
    package var growth: Duration
    /// Relative weights of how a run ends on its own.
    package var outcomes: OutcomeWeights
    /// How a retry (attempt 2 and later, after failures) ends on its own; nil: as `outcomes`.
    /// Transient failures are common: a retry often succeeds where first attempts fail.
    package var retryOutcomes: OutcomeWeights?
    /// Whether it ignores the expiration (SIGTERM) and is killed after the grace.
    package var ignoresTerminate: Bool
    /// Lines it prints at start.
    package var output: [String]
    /// Lines it writes to its results channel (JSON objects).
    package var results: [String]
    /// For a `kind: timeline` job: what its provider returns (nil: one entry now, `atEnd`).
    package var timeline: TimelineModel?
    /// A live activity the job drives while it runs.
    package var activity: ActivityModel?
    /// Background processes its command leaves in its process group: refreshd kills them when
    /// the command exits.
    package var children = 0
    /// A process outside its group (a daemon it started) that keeps its results channel open
    /// after it exits: refreshd waits at most 500 ms for the channel (nil: none).
    package var resultsHeldOpen: HeldOpen?
    /// For a template: how many instances to simulate (keys drawn from the scenario's seed,
    /// in place of its `instances:` list), nil for its list.
    package var instances: Int?
    /// For a template's simulated instances: the share (0...1) whose every run fails, the
    /// first `instances * failing` of them (the others follow `outcomes`).
    package var failing: Double = 0
    /// The most memory a run uses, in bytes (`memory: 300M`; nil: not modelled). Over the job's
    /// `limits.memory`, the run is killed by the limit and ends `crashed` ("memory limit"), as
    /// in production.
    package var memoryBytes: Int64?
    /// The runs that really happened, in order, by the identifier launched (the job's own, or
    /// a timeline job's `JOB#FAMILY` providers; `simulate --replay`, issue 34): the Nth launch
    /// of an identifier lasts and ends as its Nth recorded run did; nil at a place, or past the
    /// end, the model draws as usual. Never read from a file.
    package var replayed: [String: [ReplayedRun?]] = [:]

    /// A recorded run as a modelled process plays it: how long it ran, how its process ended,
    /// and the results lines it wrote (a provider's timeline; empty: none kept).
    package struct ReplayedRun: Sendable, Hashable {
        package var duration: Duration
        package var exit: RunExit
        package var results: [String]
        /// For a run refreshd's stop interrupted: the instant the stop ended it. The replayed run
        /// lasts at least until then, wherever the replay launched it: the replay launches on
        /// time where the daemon's loop woke a millisecond or two late, and a job resubmitted
        /// from its launch drifts by those milliseconds (12 ms over 10 runs of the measure's
        /// slow job, whose run at the stop then ended before it in the replay).
        package var interruptedAt: Instant?

        package init(duration: Duration, exit: RunExit, results: [String] = [], interruptedAt: Instant? = nil) {
            self.duration = duration
            self.exit = exit
            self.results = results
            self.interruptedAt = interruptedAt
        }

        /// How long it lasts when launched at `start`.
        package func duration(launchedAt start: Instant) -> Duration {
            guard let interruptedAt, interruptedAt > start else { return duration }
            return max(duration, interruptedAt.duration(since: start) + .milliseconds(1))
        }
    }

    /// The recorded run the `run`-th launch (1-based) of `identifier` replays, if any.
    package func replayedRun(_ identifier: String, _ run: Int) -> ReplayedRun? {
        guard let runs = replayed[identifier], run >= 1, run <= runs.count else { return nil }
        return runs[run - 1]
    }

    /// How long a process outside the job's group keeps its results channel open after its exit.
    package enum HeldOpen: Sendable, Hashable {
        case closesAfter(Duration)
        /// Until the run's end (refreshd's sweep kills it).
        case forever
    }

    package init(duration: DurationModel = .fixed(.milliseconds(10)), growth: Duration = .zero,
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
    package static let quickSuccess = JobModel()

    /// A run's duration: fixed, or drawn between bounds.
    package enum DurationModel: Sendable, Hashable {
        case fixed(Duration)
        /// Uniform in [low, high].
        case uniform(Duration, Duration)
        /// Log-normal-ish: around `median`, rarely above `p99` (a heavy right tail, as real
        /// fetches have).
        case skewed(median: Duration, p99: Duration)
        /// An empirical distribution (`simulate --calibrate` writes it from what ran): values
        /// at evenly spaced quantiles from the fastest (p0) to the slowest (p100), in
        /// non-decreasing order; a draw picks a point between two neighbours, so a run is never
        /// faster or slower than any run seen.
        case quantiles([Duration])
    }

    /// Weights of success, failure (exit 1) and crash (a signal refreshd did not send).
    package struct OutcomeWeights: Sendable, Hashable {
        package var success: Double
        package var failure: Double
        package var crash: Double

        package init(success: Double = 1, failure: Double = 0, crash: Double = 0) {
            self.success = success
            self.failure = failure
            self.crash = crash
        }
    }
}
