import Foundation
import Logging
import Synchronization
import Testing
import RefreshdCore
@testable import RefreshdRuntime
@testable import RefreshdStore
@testable import RefreshdSimulation

/// The runtime on the simulated host with the in-memory store: crashes, failing stores,
/// actions, results and observations, in virtual time.
@Suite struct SimulatedRuntimeTests {
    static let start = Instant(milliseconds: 1_800_000_000_000)
    static let quiet = RefreshRuntime.Options(logger: Logger(label: "sim") { _ in SwiftLogNoOpLogHandler() })

    final class Recorder: Sendable {
        let seen = Mutex<[RuntimeObservation]>([])
        func callAsFunction(_ o: RuntimeObservation) { seen.withLock { $0.append(o) } }
        var all: [RuntimeObservation] { seen.withLock { $0 } }
        func kinds(_ kind: RuntimeObservation.Kind) -> [RuntimeObservation] { all.filter { $0.kind == kind } }
    }

    func outcomes(_ store: InMemoryStore) -> [Outcome?] {
        ((try? store.recentRuns(limit: 100)) ?? []).reversed().map(\.outcome)
    }

    /// Kill -9 mid-run in simulation = drop the runtime, keep only what the store committed,
    /// start a new runtime on it. The outcome is the real kill -9 test's
    /// (refreshdCLITests.RunCommandTests.killDashNineMidRunThenRestart): the run is recorded
    /// interrupted, its leftover process reaped, and the retry succeeds.
    @Test func killDashNineMidRunThenRestart() throws {
        let attempts = Mutex(0)
        let host = SimulatedHost(start: Self.start) { _, _ in
            let n = attempts.withLock { $0 += 1; return $0 }
            return n == 1 ? .init(duration: .seconds(60)) : .quickSuccess
        }
        let store = InMemoryStore()
        let definition = TaskDefinition(identifier: "test.sleepy", kind: .processing, allowance: .seconds(120),
                                        retry: RetryPolicy(backoff: .linear, initial: .milliseconds(200),
                                                           maximum: .seconds(1), limit: 3))
        var runtime = try host.start(store: store, options: Self.quiet)
        runtime.load([JobSpec(definition: definition, command: CommandJob(argv: ["sleepy"]))])
        host.advance(by: .milliseconds(100))
        #expect(host.livingProcesses.map(\.identifier) == ["test.sleepy"])

        host.crash()
        #expect(host.livingProcesses.count == 1)  // its own session: it outlived refreshd
        let recorder = Recorder()
        runtime = try host.start(store: store, options: Self.quiet)
        runtime.observe(recorder.callAsFunction)
        runtime.load([JobSpec(definition: definition, command: CommandJob(argv: ["sleepy"]))])
        #expect(host.livingProcesses.isEmpty)
        #expect(recorder.kinds(.reaped).map(\.message) == ["reaped 1 leftover process of test.sleepy run 1"])
        #expect(recorder.kinds(.interrupted).map(\.runID) == [1])
        host.advance(by: .seconds(2))
        #expect(outcomes(store) == [.interrupted, .success])
        #expect(runtime.checkInvariants().isEmpty)
    }

    /// A store that fails on the Nth commit (disk full): nothing launches for that event, the
    /// runtime stops with a clear message, and a restart on the intact state loses nothing.
    @Test func aFailedCommitLaunchesNothingAndARestartLosesNothing() throws {
        let host = SimulatedHost(start: Self.start)
        let store = InMemoryStore()
        let recorder = Recorder()
        let runtime = try host.start(store: store, options: Self.quiet)
        runtime.observe(recorder.callAsFunction)
        for id in ["a.job", "b.job"] {
            runtime.register(TaskDefinition(identifier: id, kind: .processing), handler: .command(CommandJob(argv: [id])))
        }
        runtime.restoreSavedState()
        try runtime.submit(TaskRequest(identifier: "a.job", kind: .processing, earliestBeginDate: Self.start + .seconds(60)))
        try runtime.submit(TaskRequest(identifier: "b.job", kind: .processing, earliestBeginDate: Self.start + .seconds(3600)))
        let committed = try store.restoredState()
        // The next commit is the launch of a.job: it fails.
        store.commitFault = { _, _ in InMemoryStore.Failure(.injected, "disk full") }
        host.advance(by: .seconds(61))
        #expect(host.livingProcesses.isEmpty)  // nothing launched for the failed event
        #expect(recorder.kinds(.launched).isEmpty)
        #expect(recorder.kinds(.storeFailed).map(\.message) == ["state not saved, stopping: disk full"])
        #expect(runtime.failure == "disk full")
        #expect(runtime.isStopping)
        #expect(host.stopped)
        #expect(throws: SchedulerError.unavailable) {
            try runtime.submit(TaskRequest(identifier: "b.job", kind: .processing))
        }
        // The disk has room again: a new runtime on the state as committed.
        store.commitFault = nil
        #expect(try store.restoredState() == committed)
        host.crash()
        let again = try host.start(store: store, options: Self.quiet)
        for id in ["a.job", "b.job"] {
            again.register(TaskDefinition(identifier: id, kind: .processing), handler: .command(CommandJob(argv: [id])))
        }
        again.restoreSavedState()
        #expect(again.pendingRequests().map(\.identifier) == ["a.job", "b.job"])
        host.advance(by: .seconds(1))
        #expect(outcomes(store) == [.success])
    }

    /// Two runs launched by one event: the first one's own commit (its process started) fails.
    /// The second, committed with the first in the event's transaction, is not started after
    /// that failure: nothing a failed store's runtime starts (on a node, a fenced shard's term
    /// would have a process alive after its fence; found by reading the engine, issue 32).
    @Test func nothingStartsAfterTheStoreFailedInTheSameDrain() throws {
        let host = SimulatedHost(start: Self.start)
        let store = InMemoryStore()
        let started = Mutex<[String]>([])
        let behaviour = host.behaviour
        host.behaviour = { order, job in
            started.withLock { $0.append(order.identifier) }
            return behaviour(order, job)
        }
        let runtime = try host.start(store: store, options: Self.quiet)
        for id in ["a.job", "b.job"] {
            runtime.register(TaskDefinition(identifier: id, kind: .processing), handler: .command(CommandJob(argv: [id])))
        }
        runtime.restoreSavedState()
        for id in ["a.job", "b.job"] {
            try runtime.submit(TaskRequest(identifier: id, kind: .processing, earliestBeginDate: Self.start + .seconds(60)))
        }
        // The launch event's commit (both runs) goes through; the next one, a.job's process
        // start, fails.
        let commits = Mutex(0)
        store.commitFault = { _, _ in
            commits.withLock { $0 += 1; return $0 } >= 2 ? InMemoryStore.Failure(.injected, "disk full") : nil
        }
        host.advance(by: .seconds(61))
        #expect(runtime.failure == "disk full")
        #expect(started.withLock { $0 } == ["a.job"], "a run started after the store failed")
    }

    @Test func aSubmitThatWasNotSavedThrows() throws {
        let host = SimulatedHost(start: Self.start)
        let store = InMemoryStore(failingAtCommit: 1)
        let runtime = try host.start(store: store, options: Self.quiet)
        runtime.register(TaskDefinition(identifier: "a.job"), handler: .command(CommandJob(argv: ["a"])))
        runtime.restoreSavedState()
        #expect(throws: SchedulerError.self) { try runtime.submit(TaskRequest(identifier: "a.job")) }
        #expect(try store.pendingRequests().isEmpty)
        host.advance(by: .seconds(10))
        #expect(host.livingProcesses.isEmpty)
        #expect(outcomes(store).isEmpty)
    }

    /// Built-in actions get the same allowance and expiration as any run.
    @Test func actionsAreExpiredLikeAnyRun() throws {
        let host = SimulatedHost(start: Self.start)
        let store = InMemoryStore()
        let runtime = try host.start(store: store, options: Self.quiet)
        let sawExpiry = Mutex(false)
        runtime.register(TaskDefinition(identifier: "a.ok", kind: .processing),
                         handler: .action(BuiltInAction(name: "ok") { _ in
                             ActionResult(success: true, results: [#"{"staged": 3}"#])
                         }))
        runtime.register(TaskDefinition(identifier: "b.fail", kind: .processing),
                         handler: .action(BuiltInAction(name: "fail") { context in
                             sawExpiry.withLock { $0 = context.isExpired }
                             return ActionResult(success: false)
                         }))
        runtime.restoreSavedState()
        try runtime.submit(TaskRequest(identifier: "a.ok", kind: .processing))
        try runtime.submit(TaskRequest(identifier: "b.fail", kind: .processing))
        host.advance(by: .seconds(1))
        #expect(outcomes(store) == [.success, .failure])
        #expect(!sawExpiry.withLock { $0 })
    }

    @Test func resultsAreCheckedAndObservedWhateverTheLogLevel() throws {
        let host = SimulatedHost(start: Self.start) { _, _ in
            .init(results: [#"{"entries": []}"#, "not json", #"["an", "array"]"#])
        }
        let store = InMemoryStore()
        var quiet = Logger(label: "quiet") { _ in SwiftLogNoOpLogHandler() }
        quiet.logLevel = .error
        let runtime = try host.start(store: store, options: .init(logger: quiet))
        let recorder = Recorder()
        runtime.observe(recorder.callAsFunction)
        runtime.load([JobSpec(definition: TaskDefinition(identifier: "a.job", kind: .processing),
                              command: CommandJob(argv: ["a"]))])
        host.advance(by: .seconds(1))
        let results = recorder.kinds(.results).map(\.message)
        #expect(results.contains("a.job[1] reported 1 result"))
        #expect(results.contains { $0.contains("line 2: expected one JSON object per line, found \"not json\"") })
        #expect(results.contains { $0.contains("line 3: expected one JSON object") })
        // Routine events reach observers even though the log drops everything below error.
        #expect(recorder.kinds(.launched).count == 1)
        #expect(recorder.kinds(.finished).first?.outcome == .success)
    }

    @Test func observationsRoundTripThroughJSON() throws {
        let o = RuntimeObservation(time: Self.start, kind: .finished, identifier: "a.job", runID: 3, outcome: .expired,
                                   at: Self.start + .seconds(5), count: nil, message: "finished a.job run 3: expired")
        let data = try JSONEncoder().encode(o)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains(#""time":"2027-01-15T08:00:00.000Z""#))
        #expect(text.contains(#""kind":"finished""#))
        #expect(try JSONDecoder().decode(RuntimeObservation.self, from: data) == o)
    }
}

/// Lines a modelled process writes on its results channel while it runs.
@Suite struct SimulatedTimedResultsTests {
    /// A line written while the run goes on that the runtime does not take at once (not a live
    /// line) waits for the run's end, as in the libuv host's results buffer: here a refused
    /// one, reported with the end. It used to be lost.
    @Test func aLineNotTakenAtOnceComesWithTheEnd() throws {
        let host = SimulatedHost(start: SimulatedRuntimeTests.start) { _, _ in
            .init(duration: .seconds(2), timedResults: [.init(offset: .seconds(1), line: "not json")])
        }
        let store = InMemoryStore()
        let runtime = try host.start(store: store, options: SimulatedRuntimeTests.quiet)
        let recorder = SimulatedRuntimeTests.Recorder()
        runtime.observe(recorder.callAsFunction)
        runtime.load([JobSpec(definition: TaskDefinition(identifier: "test.timed"), command: CommandJob(argv: ["timed"]))])
        host.advance(by: .seconds(5))
        let refused = recorder.kinds(.results).filter { $0.message.contains("result refused") }
        #expect(refused.map(\.time) == [SimulatedRuntimeTests.start + .seconds(2)], "\(recorder.all.map(\.message))")
    }
}
