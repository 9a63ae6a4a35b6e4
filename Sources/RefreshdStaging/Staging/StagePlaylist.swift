import Foundation
import RefreshdRuntime

/// The built-in `stage-playlist` action: stages the day's playlist and renditions into the run's
/// shared container on the worker pool, and asks the widget kind to reload when it is done.
///
/// The day is resolved from the run's start (`order.started`), never from a clock, so the same
/// run stages the same day in real time and in simulation. With `todayIfMissing`, a run for
/// tomorrow first stages today when today has no playlist.
public enum StagePlaylist {
    public static let actionName = "stage-playlist"

    /// The action for these options. `afterWriteStep` is the crash-test hook (see `PlaylistStager`).
    public static func action(_ options: StageOptions,
                              afterWriteStep: (@Sendable (Int) -> Bool)? = nil) -> BuiltInAction {
        BuiltInAction(name: actionName) { context in
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
}
