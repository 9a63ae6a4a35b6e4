import Foundation
import Testing
import RefreshdConfig
import RefreshdCore
import RefreshdRuntime
@testable import RefreshdSimulation

/// `simulate --calibrate` (issue 34): run records in, each job's `simulate:` model out.
@Suite struct CalibrationTests {
    /// 2026-11-23T00:00:00Z.
    static let monday = Instant(milliseconds: 1_795_392_000_000)

    /// A finished run `n` of `identifier`, started `n` minutes after Monday, lasting `ms`.
    static func run(_ n: Int64, _ identifier: String, ms: Int64, _ outcome: Outcome?, attempt: Int = 1,
                    exit: Int32? = nil, signal: Int32? = nil) -> RunRecord {
        let started = monday + .seconds(n * 60)
        return RunRecord(runID: n, identifier: identifier, kind: .processing, submitted: started, earliest: started,
                         started: started, deadline: started + .seconds(10), attempt: attempt,
                         ended: outcome == nil ? nil : started + .milliseconds(ms), outcome: outcome,
                         exitStatus: exit, signal: signal)
    }

    /// Every rule of the derivation on a hand-made history: interrupted and unfinished runs left
    /// out, an expired run's duration kept (the allowance reproduces it), outcome weights are
    /// the counts of runs that ended on their own, retries and exit statuses counted, an
    /// instance's runs folded into its template, every value kept under 101 runs.
    @Test func aHistoryGivesItsExactModel() throws {
        let runs = [
            Self.run(5, "fetch", ms: 10_000, .expired, signal: 15),
            Self.run(1, "fetch", ms: 300, .success),
            Self.run(2, "fetch", ms: 100, .failure, exit: 2),
            Self.run(3, "fetch", ms: 200, .success, attempt: 2),
            Self.run(4, "fetch", ms: 400, .crashed, signal: 11),
            Self.run(6, "fetch", ms: 50, .interrupted),
            Self.run(7, "fetch", ms: 0, nil),
            Self.run(8, "feed[alice]", ms: 1000, .success),
            Self.run(9, "feed[bob]", ms: 1000, .success),
            Self.run(10, "feed[bob]", ms: 12_000, .expired, signal: 9),
        ]
        let jobs = Calibration.derive(runs: runs)
        #expect(jobs.map(\.identifier) == ["feed", "fetch"])
        let fetch = jobs[1]
        var expected = Calibration.Job(identifier: "fetch", instances: nil, runs: 5, first: Self.monday + .seconds(60),
                                       last: Self.monday + .seconds(300),
                                       quantiles: [100, 200, 300, 400, 10_001].map { .milliseconds($0) })
        expected.successes = 2
        expected.failures = 1
        expected.expired = 1
        expected.crashed = 1
        expected.exitStatuses = [2: 1]
        expected.signals = [11: 1]
        expected.retries = 1
        expected.retriesSucceeded = 1
        expected.interrupted = 1
        expected.unfinished = 1
        #expect(fetch == expected)
        #expect(fetch.thin)
        // First attempts and retries weighed apart.
        var model = JobModel(duration: .quantiles([100, 200, 300, 400, 10_001].map { .milliseconds($0) }),
                             outcomes: .init(success: 1, failure: 1, crash: 1))
        model.retryOutcomes = .init(success: 1, failure: 0, crash: 0)
        #expect(fetch.model == model)
        let feed = jobs[0]
        #expect(feed.instances == 2 && feed.runs == 3 && feed.expired == 1 && feed.killedAfterGrace == 1)
        // The only expired run was killed after the grace: it ignores SIGTERM.
        #expect(feed.model == JobModel(duration: .quantiles([.seconds(1), .seconds(1), .seconds(12)]),
                                       outcomes: .init(success: 2, failure: 0, crash: 0), ignoresTerminate: true))
        // Every duration the same: a fixed one.
        let same = try #require(Calibration.derive(runs: [Self.run(1, "same", ms: 5, .success),
                                                         Self.run(2, "same", ms: 5, .failure, exit: 1)]).first)
        #expect(same.model.duration == .fixed(.milliseconds(5)))
    }

    /// Over 101 runs, the model keeps p0, p1, ..., p100 of the durations.
    @Test func manyRunsKeepAHundredAndOneQuantiles() throws {
        let runs = (0..<1001).map { Self.run(Int64($0), "tick", ms: Int64(1000 - $0), .success) }
        let job = try #require(Calibration.derive(runs: runs).first)
        #expect(job.runs == 1001 && !job.thin)
        #expect(job.quantiles == stride(from: 0, through: 1000, by: 10).map { .milliseconds(Int64($0)) })
    }

    /// The printed block, comments and all, exactly.
    @Test func theBlockIsPrintedAsAJobFileReadsIt() throws {
        let runs = [Self.run(1, "fetch", ms: 1500, .success), Self.run(2, "fetch", ms: 250, .failure, exit: 3),
                    Self.run(61, "fetch", ms: 10_005, .expired, signal: 15), Self.run(62, "fetch", ms: 5, .interrupted)]
        let job = try #require(Calibration.derive(runs: runs).first)
        #expect(job.yaml == """
            # fetch: calibrated from 3 runs over 1h, started 2026-11-23T00:01:00.000Z to 2026-11-23T01:01:00.000Z
            # too thin to trust: fewer than 20 runs
            # 1 success, 1 failure (exit 3: 1), 1 expired, 0 crashed; 0 retries; left out: 1 interrupted
            simulate:
              duration:
                quantiles: [250ms, 1s500ms, 10s5ms]
              outcomes: {success: 1, failure: 1, crash: 0}

            """)
        let none = try #require(Calibration.derive(runs: [Self.run(1, "gone", ms: 5, .interrupted)]).first)
        #expect(none.yaml == "# gone: no finished run to calibrate from; left out: 1 interrupted\n")
    }

    /// A draw from `quantiles:` is the inverse of the piecewise-linear distribution through them.
    @Test func aQuantileDrawInterpolates() {
        let values: [Duration] = [.milliseconds(0), .milliseconds(100), .milliseconds(1100)]
        #expect(JobModel.quantileDraw(values, 0) == .zero)
        #expect(JobModel.quantileDraw(values, 0.25) == .milliseconds(50))
        #expect(JobModel.quantileDraw(values, 0.75) == .milliseconds(600))
        #expect(JobModel.quantileDraw(values, 0.999_999) == .milliseconds(1099))
    }

    static func job(_ model: JobModel) -> Scenario.Job {
        Scenario.Job(spec: JobSpec(definition: TaskDefinition(identifier: "test.fetch", kind: .processing,
                                                              allowance: .seconds(20), resubmit: .after(.seconds(900))),
                                   command: CommandJob(argv: ["fetch"]), firstRequest: .after(.seconds(1))),
                     model: model)
    }

    /// Retries as observed: a job whose first attempts fail half the time and whose retries
    /// always succeed (the transient failure) is calibrated back to both weights, and the block
    /// says so in `retry-outcomes:`.
    @Test func retriesAreWeighedApartFromFirstAttempts() throws {
        var known = JobModel(duration: .fixed(.seconds(1)), outcomes: .init(success: 0.5, failure: 0.5, crash: 0))
        known.retryOutcomes = .init(success: 1, failure: 0, crash: 0)
        var job = Self.job(known)
        job.spec.definition.retry = RetryPolicy(initial: .seconds(60), maximum: .seconds(600), limit: 3)
        let simulation = Simulation(scenario: Scenario(name: "retries", jobs: [job], device: DeviceModel(discretion: .exact),
                                                       start: Self.monday, days: 7, seed: 34))
        #expect(simulation.run().violations.isEmpty)
        let calibrated = try #require(Calibration.derive(runs: try simulation.store.recentRuns(limit: 100_000)).first)
        #expect(calibrated.retries > 200)
        #expect(calibrated.retriesSucceeded == calibrated.retries)
        let firstAttempts = Double(calibrated.runs - calibrated.retries)
        #expect(abs(Double(calibrated.failures) / firstAttempts - 0.5) < 0.06)
        #expect(calibrated.model.retryOutcomes == .init(success: Double(calibrated.retries), failure: 0, crash: 0))
        #expect(calibrated.yaml.contains("\n  outcomes: {success: \(calibrated.runs - calibrated.retries - calibrated.failures), "))
        #expect(calibrated.yaml.hasSuffix("   # first attempts\n  retry-outcomes: {success: \(calibrated.retries), failure: 0, crash: 0}   # retries\n"))
    }

    /// The round trip: a week of a job with a known model (log-normal durations around 2 s with
    /// p99 30 s, 80% success, 15% failure, 5% crash, a 20 s allowance) simulated into the
    /// in-memory store; its calibration from that history is close to the known model, its block
    /// reads back through the job-file reader as the same model, and a week simulated with it
    /// ends runs in the same shares.
    ///
    /// Tolerances: the durations' p50 and p90 within 15% of the model's (about 670 runs: the
    /// sample quantile's standard error is about 5% there), the outcome shares within 0.04 of
    /// the weights (3 binomial standard deviations at p = 0.15). Seeded, so it cannot flake.
    @Test func aKnownModelIsRecoveredFromItsHistory() throws {
        let known = JobModel(duration: .skewed(median: .seconds(2), p99: .seconds(30)),
                             outcomes: .init(success: 0.8, failure: 0.15, crash: 0.05))
        let simulation = Simulation(scenario: Scenario(name: "known", jobs: [Self.job(known)],
                                                       device: DeviceModel(discretion: .exact), start: Self.monday, days: 7, seed: 34))
        let report = simulation.run()
        #expect(report.violations.isEmpty, "\(report.violations)")
        let runs = try simulation.store.recentRuns(limit: 100_000)
        #expect(runs.count > 600)
        let job = try #require(Calibration.derive(runs: runs).first)
        #expect(job.runs == runs.count && !job.thin)
        // The model's own quantiles: median * exp(z * sigma), sigma = ln(p99 / median) / 2.326.
        let sigma = log(15.0) / 2.326
        let p90 = 2000 * exp(1.2816 * sigma)
        let drawn = job.quantiles.map { Double($0.wholeMilliseconds) }
        #expect(abs(drawn[50] - 2000) / 2000 < 0.15, "p50 \(drawn[50]) ms")
        #expect(abs(drawn[90] - p90) / p90 < 0.15, "p90 \(drawn[90]) ms, model \(p90)")
        // Runs over the allowance expired; the others ended as the weights say.
        let ownEnd = Double(job.successes + job.failures + job.crashed)
        #expect(abs(Double(job.successes) / ownEnd - 0.8) < 0.04)
        #expect(abs(Double(job.failures) / ownEnd - 0.15) < 0.04)
        #expect(abs(Double(job.crashed) / ownEnd - 0.05) < 0.04)
        #expect(job.expired > 0)
        #expect(job.quantiles.filter { $0 > .seconds(20) }.count > 0)

        // The printed block reads back as the calibrated model.
        let file = "identifier: test.fetch\nkind: processing\ncommand: [true]\nallowance: 20s\n" + job.yaml
        let read = JobDirectory.parse(yaml: file, file: "Jobs/fetch.yaml", projectRoot: "/", searchPath: "/usr/bin:/bin",
                                      now: Self.monday, timeZone: TimeZone(identifier: "UTC")!)
        guard case let .success(config) = read else { Issue.record("\(read)"); return }
        #expect(config.simulate == job.model)

        // A week simulated with the calibrated model expires and fails runs in the same shares.
        var again = Scenario(name: "calibrated", jobs: [Self.job(known)], device: DeviceModel(discretion: .exact),
                             start: Self.monday, days: 7, seed: 35)
        #expect(again.apply([job]) == ["test.fetch"])
        let replayed = Simulation(scenario: again).run().jobs[0].figures
        let before = report.jobs[0].figures
        // Within 3 standard deviations of the difference of two binomial counts.
        let n = Double(before.launched)
        for (now, then) in [(replayed.expired, before.expired), (replayed.failure, before.failure),
                            (replayed.success, before.success)] {
            let p = Double(then) / n
            #expect(abs(Double(now - then)) <= 3 * (2 * n * p * (1 - p)).squareRoot(), "\(replayed) vs \(before)")
        }
    }
}
