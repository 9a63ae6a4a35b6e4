import RefreshdRuntime

/// The built-in actions staging provides, bound by name: `stage-playlist` (in a worker process)
/// and the `playlist` timeline provider. The daemon gives this binding to its runtime, and
/// `simulate --exec` to the simulated one, so the job specs the configuration reads stay data.
package enum StagingActions {
    package static let binding = ActionBinding([
        StagePlaylist.actionName: { spec in
            StagePlaylist.action(payload: spec.payload) ?? BuiltInAction(name: spec.name) { _ in
                ActionResult(success: false, log: ["\(StagePlaylist.actionName): options that do not decode; expected "
                    + "the JSON of a stage-playlist: block"])
            }
        },
        PlaylistProvider.name: { spec in PlaylistProvider.action(spec) },
    ])
}
