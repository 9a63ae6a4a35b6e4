import Foundation
import Logging
import Synchronization
import Testing
import RefreshdCore
@testable import RefreshdRuntime
@testable import RefreshdStore
@testable import RefreshdSimulation

/// Failure notifications through the runtime on the simulated host and the in-memory store
/// (issue 25): the record is committed with the run's end, retried on the one timer while the
/// receiver fails, survives a kill -9 (the new runtime sends it again, same id) and is deleted
/// once delivered.
@Suite struct NotificationRuntimeTests {
    static let start = Instant(milliseconds: 1_800_000_000_000)
    static let quiet = RefreshRuntime.Options(logger: Logger(label: "sim") { _ in SwiftLogNoOpLogHandler() })

    @Test func aHeldNotificationSurvivesAKillAndIsDeliveredOnceAfterTheRestart() throws {
        let host = SimulatedHost(start: Self.start) { _, _ in .init(duration: .seconds(1), exit: .exited(4)) }
        let receiverUp = Mutex(false)
        let delivered = Mutex<[String]>([])
        host.notificationReceiver = { n, _ in
            guard receiverUp.withLock({ $0 }) else { return .failed("HTTP 503") }
            delivered.withLock { $0.append(n.id) }
            return .delivered
        }
        let store = InMemoryStore()
        var spec = JobSpec(definition: TaskDefinition(identifier: "test.fails", kind: .processing, retry: RetryPolicy(limit: 0)),
                           command: CommandJob(argv: ["fails"]))
        spec.notifiers = JobNotifiers(onFailure: Notifier(.webhook(url: "http://127.0.0.1:9/hook")))
        let first = try host.start(store: store, options: Self.quiet)
        first.load([spec])
        host.advance(by: .milliseconds(1500))
        // Run 1 failed: its notification is committed, its first attempt failed, the retry is
        // on the one timer (1 s later).
        let held = try store.restoredState().records.filter { $0.table == NotificationMachine.table }
        #expect(held.map(\.key) == ["\(first.instance)-1-failure"])
        #expect(host.notificationAttempts.count == 1)
        host.advance(by: .seconds(1))
        #expect(host.notificationAttempts.count == 2)  // the retry, at its instant

        host.crash()
        receiverUp.withLock { $0 = true }
        host.advance(by: .seconds(30))
        #expect(host.notificationAttempts.count == 2)  // nothing delivers while refreshd is dead
        let second = try host.start(store: store, options: Self.quiet)
        second.load([spec])
        host.advance(by: .milliseconds(10))
        #expect(delivered.withLock { $0 } == ["\(first.instance)-1-failure"])  // same id, once
        #expect(try store.restoredState().records.filter { $0.table == NotificationMachine.table }.isEmpty)
        #expect(second.heldNotifications.isEmpty)
    }
}
