import ArgumentParser
import RefreshdCLI
import Foundation
import Logging
import RefreshdDaemon
import RefreshdConfig
import RefreshdCore
import RefreshdPostgres
import RefreshdStaging
import RefreshdWeb

/// `refreshd run`: the long-lived scheduler process.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the jobs in a directory until SIGTERM or SIGINT.",
        discussion: """
        Refuses to start on an invalid job directory or an unusable state file. On SIGTERM or SIGINT \
        no new run starts, running jobs get their expiration (SIGTERM) and grace, state is flushed, \
        and refreshd exits 0. A second signal kills running jobs at once.
        """)

    @Option(name: .long, help: "Directory of job files (*.yaml).")
    var jobs = "Jobs"

    @Option(name: .long, help: "State directory (state.sqlite, lock, shared container).")
    var state = ".refreshd"

    @Option(name: .long, help: "Shared container for jobs (default STATE/shared).")
    var shared: String?

    @Option(name: .customLong("max-concurrent"), help: "Runs in flight at once.")
    var maxConcurrent = 4

    @Option(name: .customLong("metrics-file"), help: "Write metrics in the Prometheus text format to this file (replaced atomically, at most once a second; with --store every third of the lease) for node_exporter's textfile collector.")
    var metricsFile: String?

    @Flag(name: .customLong("no-activities"), help: "Refuse every live activity start (the user turned Live Activities off).")
    var noActivities = false

    @Option(name: .customLong("max-activities"), help: "Live activities at once per namespace.")
    var maxActivities = 5

    @Option(name: .customLong("max-control-clients"), help: "Clients of the control socket at once (default 64); more are refused with too-many-clients.")
    var maxControlClients = ControlServer.Limits().maxClients

    @Option(help: "Seed for jitter (default: derived from /etc/machine-id, stable per machine).")
    var seed: UInt64?

    @Option(name: .customLong("keep-runs"), help: "Days a finished run stays in the state (each job's latest always stays; 0 keeps every run).")
    var keepRuns = Self.defaultKeepRuns

    @Option(name: .customLong("keep-output"), help: "Lines of each run's output kept with the run in the state, shown by status --runs and the dashboard (at most 64 KiB; 0 keeps none; at most \(RunOutput.maxLines)).")
    var keepOutput = RunOutput.defaultLines

    /// The core's default retention, in days (one source for the default).
    @Option(name: .long, help: "Serve the web dashboard at HOST:PORT (e.g. 127.0.0.1:8080; off by default). An address other than loopback needs --http-token-file.")
    var http: String?

    @Option(name: .customLong("http-token-file"), help: "A file (mode 0600) holding the bearer token the dashboard's actions need; without it the dashboard is read-only.")
    var httpTokenFile: String?

    @Option(name: .long, help: "Run as one node of a cluster on this PostgreSQL database (postgres://... or a libpq conninfo): job state lives there, not in STATE/state.sqlite. Without it: one machine, SQLite.")
    var store: String?

    @Option(name: .long, help: "This node's name in the cluster (default: the host name; give each node on one machine its own).")
    var node: String?

    @Option(name: .long, help: "A shard lease's length in the cluster, e.g. 10s or 2500ms (default 10s); renewed every third of it.")
    var lease = "10s"

    static let defaultKeepRuns = SchedulerConfiguration().runRetention.map { Int($0.components.seconds / 86_400) } ?? 0

    func validate() throws {
        guard maxConcurrent >= 1 else { throw ValidationError("--max-concurrent must be at least 1") }
        guard (1...1000).contains(maxActivities) else { throw ValidationError("--max-activities must be 1 to 1000") }
        guard (1...10_000).contains(maxControlClients) else { throw ValidationError("--max-control-clients must be 1 to 10000") }
        guard (0...RunOutput.maxLines).contains(keepOutput) else {
            throw ValidationError("--keep-output must be 0 (keep no output) to \(RunOutput.maxLines) lines")
        }
        guard (0...36_500).contains(keepRuns) else { throw ValidationError("--keep-runs must be 0 (keep every run) to 36500 days") }
        if httpTokenFile != nil, http == nil { throw ValidationError("--http-token-file needs --http HOST:PORT") }
        if store == nil, node != nil { throw ValidationError("--node needs --store (a cluster node)") }
        if store != nil {
            guard let lease = Self.parseLease(lease) else {
                throw ValidationError("--lease: expected a length such as 10s or 2500ms (1s to 1h), got '\(lease)'")
            }
            _ = lease
            if let node, node.isEmpty || node.count > 200 { throw ValidationError("--node: expected a name of 1 to 200 characters") }
        }
    }

    /// `10s`, `2500ms` or `10` (seconds), within 1 s ... 1 h.
    static func parseLease(_ text: String) -> Duration? {
        let milliseconds: Int64?
        if text.hasSuffix("ms") { milliseconds = Int64(text.dropLast(2)) } else if text.hasSuffix("s") {
            milliseconds = Int64(text.dropLast()).map { $0 * 1000 }
        } else { milliseconds = Int64(text).map { $0 * 1000 } }
        guard let milliseconds, (1000...3_600_000).contains(milliseconds) else { return nil }
        return .milliseconds(milliseconds)
    }

    /// The scheduler's settings from the options, one value for either composition.
    var settings: RunSettings {
        var settings = RunSettings(maxConcurrentRuns: maxConcurrent, seed: seed)
        settings.runRetention = keepRuns == 0 ? nil : .seconds(Int64(keepRuns) * 86_400)
        settings.keptOutputLines = keepOutput
        settings.activities.enabled = !noActivities
        settings.activities.maxConcurrentPerNamespace = maxActivities
        return settings
    }

    /// `--store`: one node of a cluster (the same daemon, its shards on PostgreSQL).
    func runClusterNode(_ conninfo: String, logger: Logger) throws {
        let database: PostgresDatabase
        let leaseLength = Self.parseLease(lease) ?? .seconds(10)
        do {
            // A transaction idle for a renewal interval is ended by the server (a node paused
            // inside a commit must not hold its shard's lease row past the lease).
            database = try PostgresDatabase(connection: conninfo,
                                            timeouts: .cluster(renewEvery: LeaseMachine.Settings(lease: leaseLength).renewEvery))
        } catch {
            FileHandle.standardError.write(Data("refreshd: --store: \(error)\n".utf8))
            throw ExitCode(1)
        }
        defer { database.close() }
        let daemon = RefreshDaemon(jobsDirectory: jobs, stateDirectory: state, sharedContainer: shared,
                                   placement: .cluster(database: database, node: node ?? RefreshDaemon.defaultNodeName(), lease: leaseLength),
                                   settings: settings, logger: logger)
        daemon.actions = StagingActions.binding
        daemon.controlLimits.maxClients = maxControlClients
        daemon.metricsFile = metricsFile
        daemon.companions = try dashboard(logger: logger)
        // LISTEN/NOTIFY: a command queued on any node wakes its shard's leader at once; one
        // applied wakes the node waiting to answer it.
        let listener = PostgresCommandListener(connection: conninfo) { [weak daemon] notice in
            switch notice {
            case let .queued(shard): daemon?.commandsQueued(shard: shard)
            case let .applied(id): daemon?.commandsApplied(id: id)
            }
        }
        listener.start()
        defer { listener.stop() }
        try reportingStartErrors { try daemon.run() }
    }

    func run() throws {
        LoggingSystem.bootstrap { LineLogHandler(label: $0) }
        let logger = Logger(label: "refreshd")
        if let store { return try runClusterNode(store, logger: logger) }
        let daemon = RefreshDaemon(jobsDirectory: jobs, stateDirectory: state, sharedContainer: shared, settings: settings, logger: logger)
        daemon.metricsFile = metricsFile
        daemon.actions = StagingActions.binding
        daemon.controlLimits.maxClients = maxControlClients
        daemon.companions = try dashboard(logger: logger)
        try reportingStartErrors { try daemon.run() }
    }

    /// `--http`: the web dashboard beside the control socket, on one machine or any node.
    /// Checked before anything starts: a bad address or token file refuses to start.
    func dashboard(logger: Logger) throws -> [(DaemonParts) throws -> () -> Void] {
        guard let http else { return [] }
        do {
            return [WebDashboard.companion(try WebSettings.make(http: http, tokenFile: httpTokenFile), logger: logger)]
        } catch {
            FileHandle.standardError.write(Data("refreshd: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }

    /// Runs a daemon (one machine's or a cluster node's) and turns what refused its start into
    /// the exit status 1 and lines on stderr: every job file error, located, then a count.
    func reportingStartErrors(_ run: () throws -> Void) throws {
        do {
            try run()
        } catch let errors as ConfigErrors {
            for error in errors.errors { FileHandle.standardError.write(Data("\(error)\n".utf8)) }
            let count = errors.errors.count
            FileHandle.standardError.write(Data("refreshd: refusing to start: \(count) error\(count == 1 ? "" : "s") in \(jobs)\n".utf8))
            throw ExitCode(1)
        } catch {
            FileHandle.standardError.write(Data("refreshd: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}
