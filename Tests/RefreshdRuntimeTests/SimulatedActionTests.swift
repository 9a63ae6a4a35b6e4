import Foundation
import Logging
import Synchronization
import Testing
import RefreshdCore
@testable import RefreshdRuntime
@testable import RefreshdStore
@testable import RefreshdSimulation

/// Built-in actions on the simulated host across a kill -9 of refreshd: a worker process leads
/// its own session and outlives refreshd until the restart reaps it (as the real reaper finds a
/// worker by its REFRESH_RUN_ID and REFRESH_INSTANCE); a body in refreshd's process dies with it.
@Suite struct SimulatedActionTests {
    static let start = Instant(milliseconds: 1_800_000_000_000)
    /// The two test actions, bound by name as a host binds its built-in actions.
    static let binding = ActionBinding(Dictionary(uniqueKeysWithValues: [("t-t.worker", true), ("t-t.body", false)].map { name, worker in
        (name, { (_: ActionSpec) in
            BuiltInAction(name: name, worker: worker ? .init(payload: "{}", memoryLimit: 1 << 30) : nil) { _ in
                ActionResult(success: true)
            }
        } as ActionBinding.Make)
    }))
    static let quiet = RefreshRuntime.Options(logger: Logger(label: "sim") { _ in SwiftLogNoOpLogHandler() }, actions: binding)

    final class Recorder: Sendable {
        let seen = Mutex<[RuntimeObservation]>([])
        func callAsFunction(_ o: RuntimeObservation) { seen.withLock { $0.append(o) } }
        func kinds(_ kind: RuntimeObservation.Kind) -> [RuntimeObservation] { seen.withLock { $0 }.filter { $0.kind == kind } }
    }

    static func spec(_ id: String, worker: Bool) -> JobSpec {
        let action = ActionSpec(name: "t-\(id)", fingerprint: "", payload: "")
        return JobSpec(definition: TaskDefinition(identifier: id, kind: .processing, allowance: .seconds(120)),
                       command: CommandJob(argv: []), firstRequest: .after(.seconds(1)), action: action)
    }

    @Test func aWorkerOutlivesAKillDashNineUntilTheRestartReapsIt() throws {
        let host = SimulatedHost(start: Self.start)
        host.actionBehaviour = { _, _ in .init(duration: .seconds(60), result: ActionResult(success: true)) }
        let store = InMemoryStore()
        let specs = [Self.spec("t.worker", worker: true), Self.spec("t.body", worker: false)]
        try host.start(store: store, options: Self.quiet).load(specs)
        host.advance(by: .seconds(2))
        #expect(host.livingActions.map(\.identifier) == ["t.worker", "t.body"])
        #expect(host.livingActions.map { $0.workerPID != nil } == [true, false])

        host.crash()
        #expect(host.livingActions.map(\.identifier) == ["t.worker"])  // the body died with refreshd
        let recorder = Recorder()
        let runtime = try host.start(store: store, options: Self.quiet)
        runtime.observe(recorder.callAsFunction)
        runtime.load(specs)
        #expect(host.livingActions.isEmpty)
        #expect(recorder.kinds(.reaped).map(\.message) == ["reaped 1 leftover process of t.worker run 1"])
        #expect(Set(recorder.kinds(.interrupted).compactMap(\.identifier)) == ["t.worker", "t.body"])
        #expect(runtime.checkInvariants().isEmpty)
    }
}
