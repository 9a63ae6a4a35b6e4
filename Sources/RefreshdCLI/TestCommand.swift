import ArgumentParser
import Foundation
import RefreshdConfig
import RefreshdCore
import RefreshdSimulation

/// `refreshd test`: scenario files as tests, and seeded exploration of random fault plans.
package struct TestCommand: ParsableCommand {
    package init() {}
    package static let configuration = CommandConfiguration(
        commandName: "test",
        abstract: "Run scenario files as tests, or explore random fault plans against your jobs.",
        discussion: """
        Each scenario runs in simulation and passes when its expectations hold and no invariant \
        is violated. With --explore N, N fault plans drawn from seeds (down, kill -9, expired and \
        crashed runs, clock steps, suspend, disk full, power and network loss) run against the \
        jobs; a failure prints the seed and the command that reproduces it. Ends with \
        `N passed, N failed`; exits 1 on any failure.
        """)

    @Argument(help: "Scenario files (YAML).")
    var scenarios: [String] = []

    @Option(name: .long, help: "Explore this many random fault plans instead of (or against) the scenarios.")
    var explore: Int?

    @Option(name: .long, help: "Directory of job files for --explore without a scenario.")
    var jobs = "Jobs"

    @Option(name: .long, help: "First plan seed for --explore (plans use seed, seed+1, ...); a scenario's own seed otherwise.")
    var seed: UInt64?

    @Option(name: .long, help: "Simulated days per explored plan.")
    var days = 30

    @Flag(name: .long, help: "Print results as JSON.")
    var json = false

    @Flag(name: .long, help: "With --explore: print every plan, not only the failing ones.")
    var verbose = false

    @Flag(name: .customLong("inject-lost-commit"), help: .hidden)
    var injectLostCommit = false

    struct Result: Codable {
        var name: String
        var passed: Bool
        var seed: UInt64
        var faults: String?
        var failures: [String]
        var reproduce: String
    }

    struct Summary: Codable {
        var results: [Result]
        var passed: Int
        var failed: Int
    }

    package func validate() throws {
        // A result is kept per plan until the end: a count near Int.max would ask for it all at
        // once and trap. A million plans is days of work on a small machine.
        if let explore, !(1...Self.maximumPlans).contains(explore) {
            throw ValidationError("--explore must be between 1 and \(Self.maximumPlans)")
        }
        if explore == nil, scenarios.isEmpty { throw ValidationError("give scenario files, or --explore N") }
        if !(1...3660).contains(days) { throw ValidationError("--days must be between 1 and 3660") }
    }

    package func run() throws {
        let zone = TimeZone.current
        let start = SimulateCommand.comingMidnight(in: zone)
        let results: [Result]
        if let explore {
            results = try exploreResults(explore, start: start, zone: zone)
        } else {
            results = try scenarioResults(start: start, zone: zone)
        }
        let passed = results.filter(\.passed).count
        let failed = results.count - passed
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(Summary(results: results, passed: passed, failed: failed)), as: UTF8.self))
        } else {
            print("\(passed) passed, \(failed) failed")
        }
        if failed > 0 { throw ExitCode(1) }
    }

    /// `--explore N`: N fault plans from consecutive seeds against the jobs (or a scenario's),
    /// on every core, in seed order; each failing one printed (each one with `--verbose`).
    func exploreResults(_ explore: Int, start: Instant, zone: TimeZone) throws -> [Result] {
        var results: [Result] = []
        let path = scenarios.first
        let (jobs, days, loseCommit) = (self.jobs, self.days, injectLostCommit)
        let base: Scenario
        do {
            base = try Self.exploreBase(scenario: path, jobs: jobs, start: start, zone: zone, days: days, losePendingAfterKill: loseCommit)
        } catch let error as JobLoadFailure {
            for error in error.errors.errors { FileHandle.standardError.write(Data("\(error)\n".utf8)) }
            throw ExitCode(1)
        }
        let source = path.map { "--explore 1 --days \(days) \($0)" } ?? "--explore 1 --days \(days) --jobs \(jobs)"
        let first = seed ?? 1
        let flag = injectLostCommit ? " --inject-lost-commit" : ""
        // Plans are independent simulations: run them on every core, report in seed order.
        // Each worker reads the files again for a base of its own (see `ParallelRuns`); if
        // they no longer read the same (edited meanwhile), it uses the base read here, so
        // every plan comes from the same files whichever worker runs it. Each plan's result
        // is made where it ran, and its report let go.
        let outcomes = ParallelRuns.run(count: explore, keepRuns: false, base: {
            Self.same((try? Self.exploreBase(scenario: path, jobs: jobs, start: start, zone: zone, days: days,
                                             losePendingAfterKill: loseCommit)), as: base)
        }, plan: { own, i in Self.plan(own, seed: first &+ UInt64(i)) },
        progress: ProgressLine.reports(unless: json, total: explore, noun: "plans")) { plan, report in
            let failures = report.violations.map { "\($0.invariant) at \($0.time): \($0.message)" }
            return Outcome(result: Result(name: "plan \(plan.seed)", passed: failures.isEmpty, seed: plan.seed,
                                          faults: FaultPlan.describe(plan.faults, start: plan.start), failures: failures,
                                          reproduce: "refreshd test \(source) --seed \(plan.seed)\(flag)"),
                           recent: report.violations.first?.recent ?? [])
        }
        ProgressLine.clear(unless: json)
        for outcome in outcomes {
            results.append(outcome.result)
            if !json, verbose || !outcome.result.passed { printResult(outcome.result, recent: outcome.recent) }
        }
        return results
    }

    /// The scenario files given, all read first, then run (on every core; those on several
    /// nodes here) and printed in the order given.
    func scenarioResults(start: Instant, zone: TimeZone) throws -> [Result] {
        var results: [Result] = []
        let paths = scenarios
        let seed = self.seed
        let load = { @Sendable (path: String) throws -> Scenario in
            var scenario = try ScenarioLoading.load(path, now: start, zone: zone)
            if let seed { scenario.seed = seed }
            return scenario
        }
        // Every file is read here first, so a bad one stops the command before anything runs;
        // then the scenarios run on every core, each worker reading its files again (see
        // `ParallelRuns`), and are reported in the order given.
        let loaded = try paths.map(load)
        // Scenarios on several nodes (`nodes:`) run as a cluster, here; the others in parallel.
        let single = paths.indices.filter { loaded[$0].cluster == nil }
        let reports = ParallelRuns.run(count: single.count, base: {}, plan: { _, i in
            Self.same(try? load(paths[single[i]]), as: loaded[single[i]])
        }, progress: ProgressLine.reports(unless: json, total: single.count, noun: "scenarios"))
        ProgressLine.clear(unless: json)
        var next = reports.makeIterator()
        for (path, scenario) in zip(paths, loaded) {
            var failures: [String]
            var recent: [String] = []
            if let cluster = scenario.cluster {
                let report = ClusterSimulation(scenario: scenario, nodes: cluster.nodes, faults: cluster.faults).run()
                failures = report.violations
                recent = Array(report.events.suffix(10))
            } else {
                guard let report = next.next() else { continue }
                failures = report.expectations.filter { !$0.passed }.map { "expected \($0.expectation), found \($0.found)" }
                failures += report.violations.map { "\($0.invariant) at \($0.time): \($0.message)" }
                recent = report.violations.first?.recent ?? []
            }
            let result = Result(name: scenario.name, passed: failures.isEmpty, seed: scenario.seed, faults: nil,
                                failures: failures,
                                reproduce: "refreshd simulate --scenario \(path) --seed \(scenario.seed)")
            results.append(result)
            if !json { printResult(result, recent: recent) }
        }
        return results
    }

    static let maximumPlans = 1_000_000

    struct JobLoadFailure: Error {
        var errors: ConfigErrors
    }

    /// The scenario every explored plan starts from: the scenario file, or the jobs folder with
    /// each job's model; no expectations (a plan checks the invariants only).
    static func exploreBase(scenario path: String?, jobs: String, start: Instant, zone: TimeZone, days: Int,
                            losePendingAfterKill: Bool) throws -> Scenario {
        var base: Scenario
        if let path {
            base = try ScenarioLoading.load(path, now: start, zone: zone)
        } else {
            switch JobDirectory.load(jobs, now: start, timeZone: zone, accounts: nil) {
            case let .success(configs):
                base = Scenario(name: jobs, jobs: configs.map(Scenario.Job.init),
                                start: start, timeZone: zone.identifier)
            case let .failure(errors):
                throw JobLoadFailure(errors: errors)
            }
        }
        base.days = days
        base.expectations = []
        base.hooks.losePendingAfterKill = losePendingAfterKill
        return base
    }

    /// A worker's own copy of `original` (its strings are its own), or `original` itself when
    /// the files no longer read the same or cannot be read.
    static func same(_ copy: Scenario?, as original: Scenario) -> Scenario {
        if let copy, copy == original { return copy }
        return original
    }

    /// Plan `seed`: the base with its seed and the faults drawn from it.
    static func plan(_ base: Scenario, seed: UInt64) -> Scenario {
        var plan = base
        plan.seed = seed
        plan.faults = base.faults + FaultPlan.random(
            seed: seed, days: base.days, jobs: base.jobs.map(\.spec.identifier),
            widgetJobs: base.jobs.filter { $0.spec.widget != nil }.map(\.spec.identifier),
            activityJobs: base.jobs.filter { $0.model.activity != nil }.map(\.spec.identifier))
        return plan
    }

    /// A plan's result and the events before its first violation, all that is kept of its report.
    struct Outcome: Sendable {
        var result: Result
        var recent: [String]
    }

    func printResult(_ result: Result, recent: [String]) {
        if let faults = result.faults { print("\(result.name): \(faults)") }
        if result.passed {
            print("ok   \(result.name)")
            return
        }
        print("FAIL \(result.name) (seed \(result.seed))")
        for failure in result.failures { print("  \(failure)") }
        if !recent.isEmpty {
            print("  recent events:")
            for line in recent.suffix(8) { print("    \(line)") }
        }
        print("  reproduce: \(result.reproduce)")
    }
}
