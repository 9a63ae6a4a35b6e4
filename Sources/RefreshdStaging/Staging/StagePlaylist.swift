import RefreshdRuntime

/// The built-in `stage-playlist` action: stages the day's playlist and renditions into the run's
/// shared container on the worker pool, and asks the widget kind to reload when it is done.
///
/// The day is resolved from the run's start (`order.started`), never from a clock, so the same
/// run stages the same day in real time and in simulation.
public enum StagePlaylist {
    public static let actionName = "stage-playlist"

    /// The action for these options. `afterWriteStep` is the crash-test hook (see `PlaylistStager`).
    public static func action(_ options: StageOptions,
                              afterWriteStep: (@Sendable (Int) -> Bool)? = nil) -> BuiltInAction {
        BuiltInAction(name: actionName) { context in
            guard let container = context.sharedContainer else {
                return ActionResult(success: false, log: ["\(actionName): no shared container configured"])
            }
            let stager = PlaylistStager(options: options, afterWriteStep: afterWriteStep)
            let report = stager.run(container: container, now: context.order.started, isExpired: { context.isExpired })
            return ActionResult(success: report.succeeded, results: report.results, log: report.log)
        }
    }
}
