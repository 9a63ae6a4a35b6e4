import Logging
import Synchronization
import Testing
import RefreshdCore
import RefreshdRuntime
import RefreshdStore
import RefreshdSimulation

/// A config reload is one event from outside, so it is ONE transaction (ARCHITECTURE.md: one
/// commit per event), committed before any of it acts; a failed commit applies nothing of it.
@Suite struct ReloadTransactionTests {
    static let start = Instant(milliseconds: 1_800_000_000_000)
    static let quiet = RefreshRuntime.Options(logger: Logger(label: "sim") { _ in SwiftLogNoOpLogHandler() })

    final class Recorder: Sendable {
        let seen = Mutex<[RuntimeObservation]>([])
        func callAsFunction(_ o: RuntimeObservation) { seen.withLock { $0.append(o) } }
        func kinds(_ kind: RuntimeObservation.Kind) -> [RuntimeObservation] { seen.withLock { $0 }.filter { $0.kind == kind } }
    }

    func spec(_ id: String, allowance: Duration = .seconds(30), first: FirstRequest) -> JobSpec {
        JobSpec(definition: TaskDefinition(identifier: id, kind: .processing, allowance: allowance),
                command: CommandJob(argv: [id]), firstRequest: first)
    }

    var loaded: [JobSpec] {
        [spec("a.keep", first: .after(.seconds(3600))), spec("b.change", first: .after(.seconds(3600))),
         spec("c.remove", first: .after(.seconds(3600)))]
    }

    /// Two added, one changed, one removed: several machine events (withdraw, declare, seed...).
    var reloaded: [JobSpec] {
        [spec("a.keep", first: .after(.seconds(3600))), spec("b.change", allowance: .seconds(5), first: .after(.seconds(7200))),
         spec("d.add", first: .after(.seconds(30))), spec("e.add", first: .after(.seconds(60)))]
    }

    @Test func aReloadThatChangesSeveralJobsCommitsOnce() throws {
        let host = SimulatedHost(start: Self.start)
        let store = InMemoryStore()
        let runtime = try host.start(store: store, options: Self.quiet)
        runtime.load(loaded)
        let batches = Mutex<[[StateChange]]>([])
        store.onCommit = { changes in batches.withLock { $0.append(changes) } }
        let recorder = Recorder()
        runtime.observe(recorder.callAsFunction)
        let before = runtime.committedTransactions
        let plan = runtime.reload(reloaded, reason: "test")
        #expect(plan.summary == "2 added, 1 changed, 1 removed, 1 unchanged")
        let committed = batches.withLock { $0 }
        #expect(committed.count == 1)
        #expect(runtime.committedTransactions == before + 1)
        // That one batch holds all of it: the three seeds and the pending requests.
        let seeded = committed.first?.compactMap { change -> String? in
            if case let .seedSpec(identifier, _, _) = change { return identifier } else { return nil }
        }
        #expect(seeded?.sorted() == ["b.change", "d.add", "e.add"])
        // And the world event `simulate --replay` names in its notes: which jobs it changed.
        let world = committed.first?.compactMap { change -> WorldEvent? in
            if case let .putRecord(record) = change { WorldEvent(record) } else { nil }
        }
        #expect(world == [WorldEvent(at: Self.start, what: .reload(changed: ["b.change", "c.remove", "d.add", "e.add"]))])
        #expect(Set(try store.restoredState().pending.map(\.identifier)) == ["a.keep", "b.change", "d.add", "e.add"])
        #expect(recorder.kinds(.reloaded).map(\.message) == ["reloaded (test): 2 added, 1 changed, 1 removed, 1 unchanged"])
        host.advance(by: .seconds(61))
        #expect(((try? store.recentRuns(limit: 10)) ?? []).map(\.identifier).sorted() == ["d.add", "e.add"])
    }

    @Test func aFailedReloadCommitAppliesNothing() throws {
        let host = SimulatedHost(start: Self.start)
        let store = InMemoryStore()
        let runtime = try host.start(store: store, options: Self.quiet)
        runtime.load(loaded)
        let recorder = Recorder()
        runtime.observe(recorder.callAsFunction)
        let committed = try store.restoredState()
        let inForce = runtime.jobsInForce
        let attempts = store.commitAttempts
        store.commitFault = { _, _ in InMemoryStore.Failure(.injected, "disk full") }
        runtime.reload(reloaded, reason: "test")
        host.advance(by: .seconds(120))
        #expect(store.commitAttempts == attempts + 1)  // one transaction tried, refused whole
        #expect(recorder.kinds(.storeFailed).map(\.message) == ["state not saved, stopping: disk full"])
        #expect(recorder.kinds(.reloaded).isEmpty)
        #expect(runtime.jobsInForce == inForce)  // the running config is still the old one
        #expect(runtime.isStopping && host.stopped)
        #expect(recorder.kinds(.launched).isEmpty && host.livingProcesses.isEmpty)  // d.add never ran
        store.commitFault = nil
        #expect(try store.restoredState() == committed)  // nothing of it reached the store
    }
}
