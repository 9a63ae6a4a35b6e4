import Logging
import RefreshdCore
import RefreshdRuntime
import RefreshdStore
import RefreshdSimulation

// MARK: layers

/// Where the time of a simulated run goes: a per-minute job (the shipped heartbeat: processing,
/// 10 s allowance, re-submitted a minute after each launch, each run a 10 ms success) for `days`
/// of virtual time, through growing stacks of refreshd's own layers:
///
/// - `core`: `SchedulerCore` alone, fed its wake-ups and run ends, effects dropped (state
///   changes and run ends on, per-run log messages off, as in `refreshd simulate`);
/// - `core+store`: the same, each event's state changes committed to an `InMemoryStore`;
/// - `runtime`: `RefreshRuntime` on `SimulatedHost` with an `InMemoryStore`, observed as the
///   simulator observes it (without the per-run events) by an observer that does nothing: every
///   layer `refreshd simulate` runs, without the simulator's own checks, audit, history and report.
///
/// `Scripts/bench` runs `refreshd simulate` on the same job next to it: the rest is the
/// simulator's. Each layer prints its wall time, CPU time and microseconds per run.
///
/// `bench` names the JSON lines (`layers`; `allocations` for the run with the counter preloaded).
func layers(days: Int, bench: String = "layers") throws {
    let identifier = "design.example.heartbeat"
    let definition = TaskDefinition(identifier: identifier, kind: .processing, allowance: .seconds(10),
                                    resubmit: .after(.seconds(60)))
    let start = Instant(milliseconds: 1_767_225_600_000)  // 2026-01-01T00:00:00Z
    let end = start + .seconds(Int64(days) * 86_400)
    var configuration = SchedulerConfiguration()
    configuration.emitsStateChanges = true
    configuration.emitsRoutineLogs = false  // as the simulator runs it: no per-run log messages
    configuration.emitsRunEnds = true

    for layer in ["core", "core+store"] {
        let store = layer == "core" ? nil : InMemoryStore(instanceID: "0000000000000001")
        let measured = try measure(layer: layer, bench: bench) { () throws -> Int in
            var core = SchedulerCore(configuration: configuration, definitions: [definition])
            var effects: [SchedulerEffect] = []
            var changes: [StateChange] = []
            var running: [(runID: Int64, endsAt: Instant)] = []
            var runs = 0
            func commit() throws {
                guard let store else { return }
                changes.removeAll(keepingCapacity: true)
                for case let .persist(change) in effects { changes.append(change) }
                try store.apply(changes)
            }
            func collect() {
                for case let .launch(order) in effects {
                    running.append((order.runID, order.started + .milliseconds(10)))
                    runs += 1
                }
                effects.removeAll(keepingCapacity: true)
            }
            let first = TaskRequest(identifier: identifier, kind: .processing, earliestBeginDate: start + .seconds(1))
            try core.submit(first, at: start, into: &effects)
            try commit()
            collect()
            while true {
                // The earlier of the first run's end and the wake-up; ends first at a tie, as the
                // simulated host delivers them.
                let wake = core.nextWakeUp
                if let first = running.first, wake.map({ first.endsAt <= $0 }) ?? true {
                    guard first.endsAt < end else { break }
                    running.removeFirst()
                    core.handle(.runFinished(runID: first.runID, exit: .exited(0)), at: first.endsAt, into: &effects)
                } else if let wake, wake < end {
                    core.handle(.timerFired, at: wake, into: &effects)
                } else {
                    break
                }
                try commit()
                collect()
            }
            return runs
        }
        measured.print()
    }

    var commits = 0, runs = 0
    var measured = try measure(layer: "runtime", bench: bench) { () throws -> Int in
        let host = SimulatedHost(start: start)
        var logger = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
        logger.logLevel = .critical
        let runtime = try host.start(store: InMemoryStore(instanceID: "0000000000000001"),
                                     options: .init(configuration: SchedulerConfiguration(), logger: logger))
        runtime.observe(includingRoutine: false) { _ in }
        runtime.register(definition, handler: .command(CommandJob(argv: ["date"])))
        runtime.restoreSavedState()
        try runtime.submit(TaskRequest(identifier: identifier, kind: .processing, earliestBeginDate: start + .seconds(1)))
        host.advance(to: end)
        commits = runtime.committedTransactions
        runs = Int(runtime.snapshot().nextRunID - 1)
        return runs
    }
    // One transaction per event: a run is two (its launch, its end) and a wake-up.
    measured.add("commits_per_run", Double(commits) / Double(max(1, runs)))
    measured.print()
}

/// Runs `body` (which returns its number of runs) and its figures as a JSON line; with the
/// allocation counter preloaded (`Scripts/bench` runs it with `LD_PRELOAD=libmalloc_count.so`),
/// also the heap allocations per run (a year of runs: set-up is a rounding error).
private func measure(layer: String, bench: String, _ body: () throws -> Int) throws -> JSONLine {
    let allocations = Measure.allocations()
    let cpu = Measure.cpuSeconds()
    let wall = Measure.monotonicSeconds()
    let runs = try body()
    let seconds = Measure.monotonicSeconds() - wall
    // The heartbeat runs every minute: no run means a broken build or bench, not a fast layer.
    guard runs > 0 else { throw BenchFailure("layers: the \(layer) layer ran nothing") }
    let allocated = Measure.allocations().flatMap { end in allocations.map { end - $0 } }
    var line = JSONLine()
    line.add("impl", "refreshd")
    line.add("bench", bench)
    line.add("layer", layer)
    line.add("runs", runs)
    line.add("wall_s", seconds)
    line.add("cpu_s", Measure.cpuSeconds() - cpu)
    line.add("us_per_run", seconds * 1e6 / Double(max(runs, 1)))
    if let allocated { line.add("allocs_per_run", Double(allocated) / Double(max(runs, 1))) }
    return line
}
