// The embedding API's types that the runtime defines (RefreshTask, TaskHandler, BuiltInAction,
// RefreshRuntime) come with `import Refreshd`, as before the runtime was split out; so does
// CommandJob, which moved into the core with the job specs (issue 22).
@_exported import RefreshdRuntime
@_exported import struct RefreshdCore.CommandJob
