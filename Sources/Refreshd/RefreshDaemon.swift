import Logging
import RefreshdConfig
import RefreshdCore
import RefreshdStore

/// `refreshd run`: jobs from a directory of YAML files, state in a directory, until a signal.
///
/// It loads and validates every job file (refusing to start on any error), declares each job as
/// a command handler, restores durable state, gives each job without a pending request its first
/// request, and runs the loop.
public struct RefreshDaemon {
    public var jobsDirectory: String
    public var stateDirectory: String
    public var sharedContainer: String?
    public var maxConcurrentRuns: Int
    public var logger: Logger

    public init(jobsDirectory: String, stateDirectory: String, sharedContainer: String? = nil,
                maxConcurrentRuns: Int = 4, logger: Logger = Logger(label: "refreshd")) {
        self.jobsDirectory = jobsDirectory
        self.stateDirectory = stateDirectory
        self.sharedContainer = sharedContainer
        self.maxConcurrentRuns = maxConcurrentRuns
        self.logger = logger
    }

    /// Runs until SIGTERM or SIGINT has stopped every run.
    ///
    /// - Throws: `ConfigErrors` for an invalid job directory, `StoreError` for an unusable state
    ///   directory, `SchedulerFailure` if state could not be committed while running.
    public func run() throws {
        let jobs = try JobDirectory.load(jobsDirectory).get()
        let options = RefreshScheduler.Options(
            stateDirectory: stateDirectory, sharedContainer: sharedContainer,
            configuration: SchedulerConfiguration(maxConcurrentRuns: maxConcurrentRuns),
            handleSignals: true, logger: logger)
        let scheduler = try RefreshScheduler(options: options)
        for job in jobs {
            scheduler.register(job.definition, command: CommandJob(
                argv: job.command, environment: job.environment, workingDirectory: job.projectRoot))
        }
        seed(jobs, into: scheduler)
        let pending = scheduler.pendingTaskRequests().count
        logger.info("refreshd started: \(jobs.count) job\(jobs.count == 1 ? "" : "s") from \(jobsDirectory), \(pending) pending, state in \(stateDirectory), max \(maxConcurrentRuns) concurrent runs")
        scheduler.onHangup = { [logger] in
            logger.info("received SIGHUP: config reload is not supported yet; restart refreshd to apply changes")
        }
        try scheduler.run()
    }

    /// Gives each job without a pending request its first request.
    ///
    /// A relative `earliest` (+10s) counts from this start. An absolute date is requested once:
    /// after that request has run, restarting does not request it again.
    func seed(_ jobs: [JobConfig], into scheduler: RefreshScheduler) {
        let now = WallClock.now()
        let pending = Set(scheduler.pendingTaskRequests().map(\.identifier))
        for job in jobs where !pending.contains(job.definition.identifier) {
            let id = job.definition.identifier
            let spec = job.earliest.text
            if case .absolute = job.earliest,
               (try? scheduler.lock.withLock { try scheduler.store?.seedSpec(for: id) }) == spec {
                continue
            }
            do {
                try scheduler.submit(TaskRequest(
                    identifier: id, kind: job.definition.kind,
                    earliestBeginDate: job.earliest.instant(loadedAt: now),
                    requiresExternalPower: job.definition.requiresExternalPower,
                    requiresNetworkConnectivity: job.definition.requiresNetworkConnectivity))
                try scheduler.lock.withLock { try scheduler.store?.setSeedSpec(spec, for: id) }
            } catch {
                logger.warning("\(id): first request not submitted: \(error)")
            }
        }
    }
}
