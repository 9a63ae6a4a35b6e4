// `import Refreshd` is the whole embedding API: the scheduler here, and the values it takes and
// shows, which the core and the runtime define (TaskDefinition, TaskRequest, Instant, Outcome,
// RefreshTask, RuntimeObservation...). Only their `public` declarations come with it: everything
// else in those modules is `package`.
@_exported import RefreshdCore
@_exported import RefreshdRuntime
