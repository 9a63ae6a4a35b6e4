// Embedding refreshd in a program of your own: the public API of the `Refreshd` library, with
// no job files, no daemon and no state directory.
//
// It declares one identifier with an in-process handler, submits a request for it, runs the
// libuv loop on the main thread and stops it from another thread after a few seconds. The
// handler completes each run at once, and the identifier's resubmit policy requests the next run
// a second later, so a few runs happen. Usage: refreshd-embedding-example [SECONDS] (default 3).
//
// The suite builds it and checks its output (refreshdCLITests, EmbeddingExampleTests).

import Dispatch
import Refreshd  // the whole embedding API: RefreshScheduler, TaskDefinition, TaskRequest, RefreshTask...
import Synchronization

let seconds = CommandLine.arguments.dropFirst().first.flatMap(Double.init) ?? 3
let identifier = "com.example.embedding.refresh"

// No state directory: pending requests and the run history live in memory, so nothing survives
// the process. Give `stateDirectory:` to keep them across restarts (SQLite, committed before
// any run starts).
let scheduler = try RefreshScheduler(options: .init())

// Handlers run on the loop's thread; what they share with other threads must be Sendable.
let completed = Atomic<Int>(0)
scheduler.register(TaskDefinition(identifier: identifier, allowance: .seconds(10), resubmit: .after(.seconds(1)))) { task in
    print("run \(task.runID) of \(task.identifier) started, deadline \(task.deadline)")
    // Called if the run outlives its allowance: stop the work and complete the task quickly.
    task.expirationHandler = { print("run \(task.runID) expired") }
    // The work would go here (possibly on another thread: completing is safe from any thread).
    task.setTaskCompleted(success: true)
    let count = completed.add(1, ordering: .relaxed).newValue
    print("run \(task.runID) completed (\(count) so far)")
}

// Earliest begin date nil: as soon as the loop runs.
try scheduler.submit(TaskRequest(identifier: identifier))

// A graceful stop is safe from any thread: no new launches, running work gets its expiration.
DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { scheduler.stop() }
try scheduler.run()  // returns once the scheduler has stopped

let pending = scheduler.pendingTaskRequests().map(\.identifier)
print("stopped after \(seconds) s: \(completed.load(ordering: .relaxed)) runs completed, pending: \(pending)")
