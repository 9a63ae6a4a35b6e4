import RefreshdConfig
import RefreshdCore

/// Each job's behaviour model derived from what really ran (`refreshd simulate --calibrate`,
/// issue 34): the runs a store recorded in, a job's model out, as its `simulate:` block reads it.
/// Pure: the command line reads the store and hands the runs in.
///
/// ```swift
/// let jobs = Calibration.derive(runs: try store.recentRuns(limit: 10_000))
/// print(jobs.map(\.yaml).joined(separator: "\n"))
/// ```
///
/// The rules (ARCHITECTURE.md, "Calibration"):
/// - a run counts once it ended, other than `interrupted` (refreshd stopped under it: not the
///   job's doing); a run still in flight or interrupted is left out and counted as such;
/// - durations (end minus start) of every counted run, expired ones included (at least 1 ms
///   past their deadline), as their empirical distribution (`quantiles:`), so the simulator
///   expires the same share of runs under the same allowance instead of being told to;
/// - outcome weights are the counts of the runs that ended on their own (success, failure,
///   crash), first attempts in `outcomes:`, retries in `retry-outcomes:` (a retry often
///   succeeds where a first attempt failed); an expired run is the allowance's doing,
///   reproduced by its duration;
/// - `ignores-sigterm: true` when more than half the expired runs were killed after the grace;
/// - an instance's runs (`template[key]`) calibrate its template;
/// - fewer than `minimumRuns` counted runs: the model is printed, marked too thin to trust.
package enum Calibration {
    /// Below this many counted runs a model is marked thin: a 5% outcome shows up once in 20
    /// runs on average, so fewer say next to nothing about the rarer outcomes or the tail.
    package static let minimumRuns = 20
    /// Most values in a `quantiles:` list (p0 to p100, one a percent).
    package static let maximumQuantiles = 101

    /// One job's (or template's) calibration: what was counted and the model made of it.
    package struct Job: Sendable, Hashable {
        /// The job's identifier, or the template's for instances.
        package var identifier: String
        /// How many instances ran, for a template; nil for a job.
        package var instances: Int?
        /// Runs counted: ended, not interrupted.
        package var runs: Int
        /// First and last start of the counted runs.
        package var first: Instant
        package var last: Instant
        package var successes = 0
        package var failures = 0
        package var expired = 0
        package var crashed = 0
        /// Failures by exit status (a run failed without one, e.g. it could not be started, is
        /// not here).
        package var exitStatuses: [Int32: Int] = [:]
        /// Crashes by signal.
        package var signals: [Int32: Int] = [:]
        /// Expired runs that were killed (SIGKILL) after the grace.
        package var killedAfterGrace = 0
        /// Retries among the counted runs (attempt > 1), and how many of them succeeded.
        package var retries = 0
        package var retriesSucceeded = 0
        /// Retries that failed, and that crashed.
        package var retryFailures = 0
        package var retryCrashes = 0
        /// Left out: interrupted runs, and runs without an end (in flight when read).
        package var interrupted = 0
        package var unfinished = 0
        /// The durations the model draws from: every value, or evenly spaced quantiles.
        package var quantiles: [Duration]
        /// Whether too few runs were counted to trust the model (`minimumRuns`).
        package var thin: Bool { runs < Calibration.minimumRuns }

        /// The `simulate:` model: durations and how runs end on their own.
        package var model: JobModel {
            var model = JobModel()
            if let low = quantiles.first, let high = quantiles.last {
                model.duration = low == high ? .fixed(low) : .quantiles(quantiles)
            }
            let retried = retriesSucceeded + retryFailures + retryCrashes
            let first = (success: successes - retriesSucceeded, failure: failures - retryFailures, crash: crashed - retryCrashes)
            if first.success + first.failure + first.crash > 0 {
                model.outcomes = .init(success: Double(first.success), failure: Double(first.failure), crash: Double(first.crash))
            }
            if retried > 0 {
                model.retryOutcomes = .init(success: Double(retriesSucceeded), failure: Double(retryFailures),
                                            crash: Double(retryCrashes))
            }
            model.ignoresTerminate = killedAfterGrace * 2 > expired
            return model
        }
    }

    /// The calibration of every job that has a run in `runs` (any order), by identifier; jobs
    /// with no counted run (all interrupted or in flight) are kept with zero runs and no model.
    package static func derive(runs: [RunRecord]) -> [Job] {
        var groups: [String: (keys: Set<String>, runs: [RunRecord])] = [:]
        for run in runs {
            let split = InstanceName.split(run.identifier)
            let name = split?.template ?? run.identifier
            groups[name, default: ([], [])].runs.append(run)
            if let key = split?.key { groups[name]?.keys.insert(key) }
        }
        return groups.keys.sorted().compactMap { name in
            let group = groups[name]!
            return job(name, group.runs, instances: group.keys.isEmpty ? nil : group.keys.count)
        }
    }

    static func job(_ identifier: String, _ runs: [RunRecord], instances: Int?) -> Job? {
        let sorted = runs.sorted { ($0.started, $0.runID) < ($1.started, $1.runID) }
        guard let any = sorted.first else { return nil }
        var job = Job(identifier: identifier, instances: instances, runs: 0, first: any.started, last: any.started, quantiles: [])
        var durations: [Int64] = []
        var firstCounted: Instant?
        for run in sorted {
            guard let ended = run.ended, let outcome = run.outcome else {
                job.unfinished += 1
                continue
            }
            switch outcome {
            case .interrupted:
                job.interrupted += 1
                continue
            case .success: job.successes += 1
            case .failure:
                job.failures += 1
                if let status = run.exitStatus { job.exitStatuses[status, default: 0] += 1 }
            case .expired:
                job.expired += 1
                if run.signal == 9 { job.killedAfterGrace += 1 }
            case .crashed:
                job.crashed += 1
                if let signal = run.signal { job.signals[signal, default: 0] += 1 }
            }
            if run.attempt > 1 {
                job.retries += 1
                switch outcome {
                case .success: job.retriesSucceeded += 1
                case .failure: job.retryFailures += 1
                case .crashed: job.retryCrashes += 1
                default: break
                }
            }
            job.runs += 1
            if firstCounted == nil { firstCounted = run.started }
            job.last = run.started
            var duration = max(0, ended.milliseconds - run.started.milliseconds)
            if outcome == .expired {
                // Past its deadline by definition: a run that ended on the deadline's instant is
                // kept 1 ms past it, so that its draw expires again under the same allowance.
                duration = max(duration, run.deadline.milliseconds - run.started.milliseconds + 1)
            }
            durations.append(duration)
        }
        job.first = firstCounted ?? any.started
        job.quantiles = quantiles(of: durations.sorted()).map { .milliseconds($0) }
        return job
    }

    /// Every value when there are at most `maximumQuantiles` of them, else the values at p0,
    /// p1, ..., p100 (linear between the two nearest ranks, rounded down to the millisecond).
    static func quantiles(of sorted: [Int64]) -> [Int64] {
        guard sorted.count > maximumQuantiles else { return sorted }
        let steps = maximumQuantiles - 1
        return (0...steps).map { step in
            let position = Double(step) * Double(sorted.count - 1) / Double(steps)
            let index = min(sorted.count - 2, Int(position))
            let low = Double(sorted[index]), high = Double(sorted[index + 1])
            return Int64((low + (high - low) * (position - Double(index))).rounded(.down))
        }
    }
}

extension Scenario {
    /// The scenario with each job's durations and outcomes (and whether it ignores SIGTERM)
    /// taken from its calibration (`simulate --calibrate --apply`); the rest of its `simulate:`
    /// block (output, results, timeline, activity...) stays as its file says. Returns the
    /// identifiers of the jobs that had a calibration with counted runs.
    package mutating func apply(_ calibrations: [Calibration.Job]) -> [String] {
        let byIdentifier = Dictionary(calibrations.filter { $0.runs > 0 }.map { ($0.identifier, $0) },
                                      uniquingKeysWith: { first, _ in first })
        var applied: [String] = []
        for index in jobs.indices {
            guard let calibration = byIdentifier[jobs[index].spec.identifier] else { continue }
            let model = calibration.model
            jobs[index].model.duration = model.duration
            jobs[index].model.growth = .zero
            jobs[index].model.outcomes = model.outcomes
            jobs[index].model.ignoresTerminate = model.ignoresTerminate
            applied.append(calibration.identifier)
        }
        return applied
    }
}
