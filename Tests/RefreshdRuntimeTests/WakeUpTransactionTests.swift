import Logging
import Synchronization
import Testing
import RefreshdCore
import RefreshdRuntime
import RefreshdStore
import RefreshdSimulation

/// A wake-up is one event from the host (`timerFired(clocks:)`), so it is ONE transaction even
/// when it finds the wall clock moved: the clock change and the firing are committed together
/// (ARCHITECTURE.md: one commit per event). Before, each was committed on its own.
@Suite struct WakeUpTransactionTests {
    static let start = Instant(milliseconds: 1_800_000_000_000)
    static let quiet = RefreshRuntime.Options(logger: Logger(label: "sim") { _ in SwiftLogNoOpLogHandler() })

    /// Holds every request until a minute after the start.
    struct HoldFirstMinute: AdmissionPolicy {
        func admission(for request: PendingRequest, at now: Instant) -> Admission {
            now < WakeUpTransactionTests.start + .seconds(60) ? .hold(until: WakeUpTransactionTests.start + .seconds(60)) : .admit
        }
    }

    @Test func aWakeUpThatFindsAClockJumpCommitsOnce() throws {
        let host = SimulatedHost(start: Self.start)
        let store = InMemoryStore()
        let runtime = try host.start(store: store, options: Self.quiet)
        runtime.register(TaskDefinition(identifier: "a.held", kind: .processing), handler: .command(CommandJob(argv: ["a"])))
        runtime.register(TaskDefinition(identifier: "b.later", kind: .processing), handler: .command(CommandJob(argv: ["b"])))
        runtime.restoreSavedState()
        runtime.setAdmissionPolicy(HoldFirstMinute())
        // a.held is due at 10 s and held until 60 s; b.later is due in half an hour.
        try runtime.submit(TaskRequest(identifier: "a.held", kind: .processing, earliestBeginDate: Self.start + .seconds(10)))
        try runtime.submit(TaskRequest(identifier: "b.later", kind: .processing, earliestBeginDate: Self.start + .seconds(1800)))
        host.advance(by: .seconds(30))
        #expect(runtime.snapshot().runs.isEmpty)

        // The wall clock jumps an hour with no notice; the wake-up at 60 s (monotonic) finds it:
        // the change launches b.later, now due, and the firing releases and launches a.held.
        host.stepClock(by: .seconds(3600), noticed: false)
        let batches = Mutex<[[StateChange]]>([])
        store.onCommit = { changes in batches.withLock { $0.append(changes) } }
        #expect(host.step())
        #expect(runtime.snapshot().runs.map(\.identifier).sorted() == ["a.held", "b.later"])
        // The wake-up's one batch holds both launches (each process's start is saved after it,
        // in a transaction of its own: the host reports it).
        let launches = batches.withLock { $0 }.map { changes in
            changes.compactMap { change -> String? in
                if case let .runStarted(run) = change { return run.identifier } else { return nil }
            }
        }.filter { !$0.isEmpty }
        #expect(launches == [["b.later", "a.held"]])
    }
}
