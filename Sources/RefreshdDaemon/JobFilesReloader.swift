import Foundation
import Logging
import Refreshd
import RefreshdConfig
import RefreshdCore

/// Reading the job files again (SIGHUP, the jobs folder changed) as `ReloadMachine` says, for
/// every refreshd whatever its store (issue 32: one machine and a cluster node had two copies,
/// the node's with no timeout). It lives on one loop (`loop`: the machine, its one timer and
/// `apply` run there); the read runs on a worker thread, so a slow disk or a hostile file never
/// holds up timers, launches, signals or lease renewals. This host only carries out the
/// machine's effects.
final class JobFilesReloader: @unchecked Sendable {
    let directory: String
    /// The loop the machine, its timer and `apply` run on.
    let loop: RefreshScheduler
    /// Reads and validates the directory (off the loop).
    let load: @Sendable (String) -> Result<[JobConfig], ConfigErrors>
    /// Applies a finished read: a valid config as a diff, an invalid one refused (loop thread).
    let apply: (Result<[JobConfig], ConfigErrors>, _ reason: String) -> Void
    /// The running config's size, for the machine's log line at a timeout.
    let jobsInForce: () -> Int
    /// Whether refreshd is stopping (no read is started then).
    let isStopping: () -> Bool
    let logger: Logger
    // Loop thread only.
    var machine: ReloadMachine
    var timer: OneShotTimer?

    init(directory: String, loop: RefreshScheduler, timeout: Duration, logger: Logger,
         load: @escaping @Sendable (String) -> Result<[JobConfig], ConfigErrors>,
         jobsInForce: @escaping () -> Int, isStopping: @escaping () -> Bool,
         apply: @escaping (Result<[JobConfig], ConfigErrors>, String) -> Void) {
        self.directory = directory
        self.loop = loop
        self.load = load
        self.apply = apply
        self.jobsInForce = jobsInForce
        self.isStopping = isStopping
        self.logger = logger
        machine = ReloadMachine(directory: directory, timeout: timeout)
    }

    /// A reload is asked for (loop thread).
    func request(_ reason: String) {
        guard !isStopping() else { return }
        drive(.requested(reason: reason))
    }

    /// Feeds the machine one event and carries out its effects in order (loop thread). `result`
    /// is the read that `.readFinished` reports, applied if the machine says so.
    func drive(_ event: ReloadMachine.Event, result: Result<[JobConfig], ConfigErrors>? = nil) {
        for effect in machine.handle(event) {
            switch effect {
            case let .armTimer(after, generation):
                if timer == nil { timer = loop.makeTimer() }
                timer?.start(after: after) { [unowned self] in
                    drive(.timerFired(generation: generation, jobsInForce: jobsInForce()))
                }
            case .stopTimer:
                timer?.stop()
            case let .startRead(generation):
                guard !isStopping() else { continue }
                let directory = directory, load = load
                Thread.detachNewThread { [weak self, weak loop] in
                    let result = load(directory)
                    let reloader = self
                    loop?.performOnLoop { reloader?.drive(.readFinished(generation: generation), result: result) }
                }
            case let .apply(reason):
                if let result, !isStopping() { apply(result, reason) }
            case let .logError(text):
                logger.error("\(text)")
            }
        }
    }
}

extension ConfigErrors {
    /// The refusal of a config whose plain timeline jobs take the widget kind of a template's
    /// instance (`InstanceKind.clashes`): each located at the job's `widget.kind`, with `advice`
    /// appended. One machine and a cluster node refuse a start and a reload by this one rule.
    package static let startClashAdvice = "; the instance is in the state, restored at the start with its widget: give this job another kind to start"

    package init(kindClashes clashes: [InstanceKind.Clash], in jobs: [JobConfig], advice: String = "") {
        let byIdentifier = Dictionary(jobs.map { ($0.identifier, $0) }, uniquingKeysWith: { a, _ in a })
        self.init(clashes.compactMap { clash in byIdentifier[clash.job]?.widgetKindError(clash.message + advice) })
    }
}
