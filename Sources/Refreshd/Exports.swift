// The embedding API's types that the runtime defines (RefreshTask, CommandJob, TaskHandler,
// BuiltInAction, RefreshRuntime) come with `import Refreshd`, as before the runtime was split out.
@_exported import RefreshdRuntime
