import ArgumentParser
import Foundation
import Refreshd
import RefreshdConfig
import RefreshdCore
import RefreshdSimulation
import RefreshdStaging

/// `refreshd simulate`: days of the user's own jobs in virtual time, with faults on purpose.
package struct SimulateCommand: ParsableCommand {
    package init() {}
    package static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Run jobs for simulated days in a fraction of a second and report what happened.",
        discussion: """
        The same runtime as `refreshd run`, on a simulated host with an in-memory store: every \
        timer, calendar slot (in its zone, DST included), retry, allowance and grace behaves as in \
        real time, and nothing sleeps. Each job's `simulate:` block says how it behaves (without \
        one, a command is a quick success). Invariants are checked after every step; a violation \
        stops the run and is reported with the events before it. The same jobs, start and seed \
        give the same report, byte for byte.
        """)

    @Option(name: .long, help: "Directory of job files (*.yaml) (default: Jobs). With --replay: the changed files of a what-if.")
    var jobs: String?

    /// `--jobs`, or the folder `refreshd run` reads by default.
    var jobsFolder: String { jobs ?? "Jobs" }

    @Option(name: .long, help: "A scenario file (jobs, device, faults, expectations) instead of --jobs.")
    var scenario: String?

    @Option(name: .long, help: "How many days to simulate.")
    var days: Int?

    @Option(name: .long, help: "First simulated instant, ISO 8601 (default: the coming midnight, machine zone).")
    var start: String?

    @Option(name: .long, help: "Seed for durations, outcomes and the system's discretion (default: from the start date).")
    var seed: UInt64?

    @Flag(name: .long, help: "Print the report as JSON.")
    var json = false

    @Option(name: .long, help: "Also write the report as an SVG picture to this file.")
    var svg: String?

    @Flag(name: .long, help: "Run the jobs' real commands as `run` does instead of their models (while one runs, virtual time runs with real time).")
    var exec = false

    @Option(name: .long, help: "With --exec: the shared container the commands write to (default: a temporary directory, removed after).")
    var shared: String?

    @Option(name: .long, help: "Run the jobs on this many nodes sharing one modelled database (issue 24): shards, fenced leases, takeovers.")
    var nodes: Int?

    @Option(name: .long, help: "With --nodes: a node fault, repeatable: kill:NODE@SECONDS[+RESTART], pause:NODE@SECONDS+SPAN, partition:NODE@SECONDS+SPAN, drift:NODE*RATE, database-down@SECONDS+SPAN, join:NODE@SECONDS.")
    var nodeFault: [String] = []

    @Option(name: .long, help: "With --nodes: run this many fault plans drawn from seeds (seed, seed+1, ...), an hour each, and report each.")
    var explore: Int?

    /// The defect an explored plan must find (issue 32): plain jobs placed in the shard of their
    /// identifier, not their namespace's, splitting the rules a namespace shares.
    @Flag(name: .customLong("inject-misplaced-jobs"), help: .hidden)
    var injectMisplacedJobs = false

    @Flag(name: .long, help: "Derive each job's simulate: block from what really ran (the state's run history) and print it.")
    var calibrate = false

    @Option(name: .long, help: ArgumentHelp("With --calibrate: the runs started in this last span (like 7d or 12h) or since this ISO 8601 date (default: 7d).",
                                            valueName: "span-or-date"))
    var since: String?

    @Option(name: .long, help: "With --calibrate or --replay: the state directory whose runs are read (default: .refreshd).")
    var state: String?

    @Flag(name: .long, help: "With --calibrate: simulate --jobs with the calibrated models instead of printing them.")
    var apply = false

    @Option(name: .long, help: ArgumentHelp("Re-run a recorded stretch of time (ISO 8601 dates, or spans back from now like 2h..30m) with what the world did then, against what ran; with --jobs, also with those files (a what-if).",
                                            valueName: "from..to"))
    var replay: String?

    @Option(name: .long, help: "With --replay: the folder of job files refreshd ran from (default: Jobs).")
    var ranJobs: String?

    package func validate() throws {
        try validateCalibration()
        try validateReplay()
        if let days, !(1...3660).contains(days) { throw ValidationError("--days must be between 1 and 3660") }
        if let nodes, !(1...16).contains(nodes) { throw ValidationError("--nodes must be between 1 and 16") }
        if nodes == nil, !nodeFault.isEmpty || explore != nil { throw ValidationError("--node-fault and --explore need --nodes") }
        if let explore, !(1...1000).contains(explore) { throw ValidationError("--explore must be between 1 and 1000") }
        if nodes != nil, exec { throw ValidationError("--nodes cannot be combined with --exec") }
        if nodes == nil, injectMisplacedJobs { throw ValidationError("--inject-misplaced-jobs needs --nodes") }
        for text in nodeFault { _ = try Self.parseNodeFault(text, nodes: nodes ?? 1) }
    }

    /// One `--node-fault`, e.g. `kill:0@40+30` (kill node 0 at +40 s, restart 30 s later).
    static func parseNodeFault(_ text: String, nodes: Int) throws -> NodeFault {
        guard let fault = NodeFault.parse(text, nodes: nodes) else {
            throw ValidationError("--node-fault: expected \(NodeFault.forms), with NODE in 0..<\(nodes), found \"\(text)\"")
        }
        return fault
    }

    /// `--nodes`: the jobs on a cluster over one modelled database; `--explore`: seeded plans.
    func runCluster(_ setup: Scenario, nodes: Int) throws {
        var failed = false
        if let explore {
            var totals = (takeovers: 0, fences: 0, duplicates: 0, lost: 0)
            var times: [Duration] = []
            var plans: [(seed: UInt64, report: ClusterSimulation.Report)] = []
            for offset in 0..<UInt64(explore) {
                let seed = setup.seed &+ offset
                let (faults, report) = ClusterSimulation.explored(setup, nodes: nodes, seed: seed)
                totals.takeovers += report.takeovers
                totals.fences += report.fences
                totals.duplicates += report.duplicates
                totals.lost += report.lost
                times += report.takeoverTimes
                if !report.violations.isEmpty { failed = true }
                if json {
                    plans.append((seed, report))
                    continue
                }
                print("plan seed=\(seed): \(faults.map(\.description).joined(separator: "; ")): takeovers \(report.takeovers), fences \(report.fences), duplicates \(report.duplicates), lost \(report.lost)\(report.violations.isEmpty ? "" : ", VIOLATED: " + report.violations[0])")
            }
            if json {
                print(ClusterSimulation.Report.exploredJSON(plans))
                if failed { throw ExitCode(1) }
                return
            }
            let sorted = times.sorted()
            print("\(explore) plans on \(nodes) nodes: takeovers \(totals.takeovers), fences \(totals.fences), duplicates \(totals.duplicates), lost \(totals.lost)"
                  + (sorted.isEmpty ? "" : ", takeover time p50 \(ClusterSimulation.Report.seconds(sorted[(sorted.count - 1) / 2])) s, max \(ClusterSimulation.Report.seconds(sorted.last!)) s"))
        } else {
            let faults = try (setup.cluster?.faults ?? []) + nodeFault.map { try Self.parseNodeFault($0, nodes: nodes) }
            let report = ClusterSimulation(scenario: setup, nodes: nodes, faults: faults).run()
            if let svg {
                do {
                    try ClusterPicture.svg(report).write(toFile: svg, atomically: true, encoding: .utf8)
                } catch {
                    FileHandle.standardError.write(Data("refreshd: cannot write \(svg): \(error.localizedDescription)\n".utf8))
                    throw ExitCode(1)
                }
            }
            if json {
                print(report.jsonText())
            } else {
                for line in report.lines { print(line) }
                for line in report.events { print("  \(line)") }
            }
            failed = !report.violations.isEmpty
        }
        if failed { throw ExitCode(1) }
    }

    package func run() throws {
        if calibrate, !apply { return printCalibration() }
        if replay != nil { return try runReplay() }
        let zone = TimeZone.current
        let startInstant = try start.map(Self.parseStart) ?? Self.comingMidnight(in: zone)
        var setup: Scenario
        if let path = scenario {
            setup = try ScenarioLoading.load(path, now: startInstant, zone: zone)
            if let start { setup.start = try Self.parseStart(start) }
        } else {
            switch JobsFolderSimulation.scenario(jobs: jobsFolder, start: startInstant, zone: zone) {
            case let .success(scenario): setup = scenario
            case let .failure(errors):
                for error in errors.errors { FileHandle.standardError.write(Data("\(error)\n".utf8)) }
                FileHandle.standardError.write(Data("refreshd: cannot simulate: \(errors.errors.count) error\(errors.errors.count == 1 ? "" : "s") in \(jobsFolder)\n".utf8))
                throw ExitCode(1)
            }
        }
        if let days { setup.days = days }
        if let seed { setup.seed = seed }
        setup.hooks.misplacePlainJobs = injectMisplacedJobs
        if calibrate { applyCalibration(to: &setup) }
        // Real commands run the real built-in actions too (without --exec they are modelled).
        if exec { setup.actions = StagingActions.binding }
        var temporary: String?
        if exec {
            if let shared {
                setup.sharedContainer = shared
            } else {
                var template = Array((FileManager.default.temporaryDirectory.path + "/refreshd-simulate-XXXXXX").utf8CString)
                if let made = mkdtemp(&template) { temporary = String(cString: made) }
                setup.sharedContainer = temporary
            }
        }
        defer { if let temporary { try? FileManager.default.removeItem(atPath: temporary) } }
        if let nodes = nodes ?? setup.cluster?.nodes { return try runCluster(setup, nodes: nodes) }
        // Real commands run through the libuv host's process code; a SIGTERM or SIGINT kills
        // the ones running with their whole groups and ends the simulation where it is.
        let commands = exec ? ExecutedCommands() : nil
        if exec { ExecutedCommands.installStopHandlers() }
        let simulation = Simulation(scenario: setup, real: commands)
        if exec { simulation.stopRequested = { ExecutedCommands.stopSignal != nil } }
        let report = simulation.run(progress: ProgressLine.days(unless: json, total: setup.days))
        // What still runs at the end (or at a stop) is killed with its group.
        commands?.finish()
        ProgressLine.clear(unless: json)
        if exec, let signal = ExecutedCommands.stopSignal {
            let name = signal == SIGINT ? "SIGINT" : "SIGTERM"
            FileHandle.standardError.write(Data("refreshd: simulate stopped by \(name): the commands running then were killed with their process groups, no report\n".utf8))
            throw ExitCode(128 + signal)
        }
        if let svg {
            do {
                try SimulationPicture.svg(report).write(toFile: svg, atomically: true, encoding: .utf8)
            } catch {
                FileHandle.standardError.write(Data("refreshd: cannot write \(svg): \(error.localizedDescription)\n".utf8))
                throw ExitCode(1)
            }
        }
        if json {
            // In pieces: a year of a per-minute job is 125 MB of JSON.
            try report.writePrettyJSON { FileHandle.standardOutput.write(Data($0)) }
        } else {
            print(report.text)
            if !report.violations.isEmpty {
                print("reproduce: \(Self.reproduce(setup, path: scenario, jobs: jobsFolder))")
            }
        }
        if !report.violations.isEmpty { throw ExitCode(1) }
    }

    /// The command that repeats a simulation exactly.
    static func reproduce(_ scenario: Scenario, path: String?, jobs: String) -> String {
        JobsFolderSimulation.reproduce(scenario, path: path, jobs: jobs)
    }

    /// `--start`, read by the one ISO 8601 parser every date that comes in goes through.
    static func parseStart(_ text: String) throws -> Instant {
        if let instant = ISO8601.parse(text) { return instant }
        throw ValidationError("--start: expected an ISO 8601 date with an offset, like 2026-11-23T00:00:00Z, found \"\(text)\"")
    }

    /// The next midnight in `zone`.
    static func comingMidnight(in zone: TimeZone) -> Instant { JobsFolderSimulation.comingMidnight(in: zone) }
}
