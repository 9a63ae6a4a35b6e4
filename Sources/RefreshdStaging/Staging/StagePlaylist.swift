import Foundation
import RefreshdConfig
import RefreshdCore
import RefreshdRuntime

/// The built-in `stage-playlist` action: stages the day's playlist and renditions into the run's
/// shared container, in a worker process of its own (see `BuiltInAction.Worker`), and asks the
/// widget kind to reload when it is done.
///
/// The day is resolved from the run's start (`order.started`), never from a clock, so the same
/// run stages the same day in real time and in simulation. With `todayIfMissing`, a run for
/// tomorrow first stages today when today has no playlist.
package enum StagePlaylist {
    package static let actionName = ActionSpec.stagePlaylistName

    /// The address space a staging worker may add to its own at start: twice the memory
    /// ceiling (the estimate is an estimate) plus room for libjpeg, libpng and the runtime.
    package static func workerMemoryLimit(_ options: StageOptions) -> Int {
        let twice = options.memoryCeiling.multipliedReportingOverflow(by: 2)
        return twice.overflow ? Int.max : twice.partialValue.addingReportingOverflow(256 << 20).partialValue
    }

    /// The action for these options, to be run in a worker process (its payload is the options
    /// as JSON, see `action(payload:)`). `afterWriteStep` is the crash-test hook (see
    /// `PlaylistStager`).
    package static func action(_ options: StageOptions,
                              afterWriteStep: (@Sendable (Int) -> Bool)? = nil) -> BuiltInAction {
        let payload = (try? JSONEncoder().encode(options)).map { String(decoding: $0, as: UTF8.self) }
        let worker = payload.map { BuiltInAction.Worker(payload: $0, memoryLimit: workerMemoryLimit(options)) }
        return BuiltInAction(name: actionName, worker: worker) { context in
            guard let container = context.sharedContainer else {
                return ActionResult(success: false, log: ["\(actionName): no shared container configured"])
            }
            let now = context.order.started
            var log: [String] = []
            if options.todayIfMissing, options.day == .tomorrow {
                var today = options
                today.day = .today
                let stager = PlaylistStager(options: today, afterWriteStep: afterWriteStep)
                if let date = stager.stagedDate(now: now),
                   !FileManager.default.fileExists(atPath: ContainerLayout(container: container, folder: options.folder).playlistPath(date)) {
                    let report = stager.run(container: container, now: now, isExpired: { context.isExpired })
                    log += report.log
                    guard report.succeeded else { return ActionResult(success: false, log: log) }
                }
            }
            let stager = PlaylistStager(options: options, afterWriteStep: afterWriteStep)
            let report = stager.run(container: container, now: now, isExpired: { context.isExpired })
            return ActionResult(success: report.succeeded, results: report.results, log: log + report.log)
        }
    }

    /// The action a worker process rebuilds from a payload `action(_:)` made; nil if it does
    /// not decode.
    package static func action(payload: String) -> BuiltInAction? {
        guard let options = try? JSONDecoder().decode(StageOptions.self, from: Data(payload.utf8)) else { return nil }
        return action(options)
    }
}
