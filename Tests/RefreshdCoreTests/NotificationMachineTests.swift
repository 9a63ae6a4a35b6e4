import Foundation
import Testing
@testable import RefreshdCore

/// Which runs notify and when each notification is (re)tried (issue 25), as input -> exact
/// effects: the notification machine alone, and through `RuntimeMachine` for a run's end (the
/// record in the same effect list as the run's end, the delivery after it).
@Suite struct NotificationMachineTests {
    static let t0 = Instant(milliseconds: 1_800_000_000_000)
    static let hook = Notifier(.webhook(url: "http://127.0.0.1:9/hook"))
    static let page = Notifier(.command(argv: ["/bin/true"], workingDirectory: "/"), timeout: .seconds(2))

    static func machine(recovery: Bool = true) -> NotificationMachine {
        var machine = NotificationMachine()
        machine.idPrefix = "test"
        machine.notifiers = ["app.job": JobNotifiers(onFailure: hook, onRecovery: recovery ? page : nil)]
        return machine
    }

    static func notification(_ run: Int64, _ kind: RunNotification.Kind = .failure, outcome: Outcome = .failure,
                             exit: Int32? = 1, at: Instant = t0, attempts: Int = 0) -> RunNotification {
        RunNotification(id: "test-\(run)-\(kind.rawValue)", kind: kind, job: "app.job", runID: run, outcome: outcome,
                        exitStatus: exit, signal: nil, started: nil, ended: at, outputTail: [],
                        notifier: kind == .failure ? hook : page, attempts: attempts)
    }

    /// The record: the notification's JSON, as the machine writes it.
    static func record(_ n: RunNotification) -> SchedulerEffect {
        return .persist(.putRecord(MachineRecord(table: NotificationMachine.table, key: n.id, value: json(n))))
    }

    static func json(_ n: RunNotification) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try! encoder.encode(n), as: UTF8.self)
    }

    static let failing = SchedulerEffect.persist(.putRecord(MachineRecord(
        table: NotificationMachine.failingTable, key: "app.job", value: "{\"run\":1}")))

    @Test func aFailedRunIsRecordedThenSentRetriedWithBackoffThenDelivered() {
        var machine = Self.machine()
        let t0 = Self.t0
        var effects: [SchedulerEffect] = []
        machine.runEnded(runID: 1, job: "app.job", outcome: .failure, exitStatus: 1, signal: nil,
                         at: t0, stores: true, into: &effects)
        let n = Self.notification(1)
        #expect(effects == [Self.failing, Self.record(n), .notify(n)])
        #expect(machine.nextDeadline == nil)  // in flight: no timer

        // The receiver is down: the attempt is recorded, the next is 1 s later.
        effects = []
        machine.finished(n.id, .failed("HTTP 503"), at: t0 + .seconds(2), stores: true, into: &effects)
        let once = Self.notification(1, attempts: 1)
        #expect(effects == [Self.record(once),
                            .log(.notification(.retrying(once, attempt: 1, reason: "HTTP 503", next: t0 + .seconds(3))))])
        #expect(machine.nextDeadline == t0 + .seconds(3))

        // Not before its instant; then sent again, the same id.
        effects = []
        machine.timerFired(at: t0 + .milliseconds(2999), into: &effects)
        #expect(effects == [])
        machine.timerFired(at: t0 + .seconds(3), into: &effects)
        #expect(effects == [.notify(once)])
        #expect(machine.counts.retries == 1)

        // A late report of an id not in flight changes nothing.
        effects = []
        machine.finished("test-99-failure", .delivered, at: t0 + .seconds(3), stores: true, into: &effects)
        #expect(effects == [])

        machine.finished(n.id, .delivered, at: t0 + .seconds(4), stores: true, into: &effects)
        let twice = Self.notification(1, attempts: 2)
        #expect(effects == [.persist(.deleteRecord(table: NotificationMachine.table, key: n.id)),
                            .log(.notification(.delivered(twice, attempt: 2)))])
        #expect(machine.held.isEmpty)
        #expect(machine.counts.failure == 1 && machine.counts.delivered == 1)
    }

    /// Regression: a template's `on-failure:` never notified, since an instance's runs were looked
    /// up by the instance's own identifier. Each instance notifies, and recovers, on its own.
    @Test func anInstanceNotifiesWithItsTemplatesNotifiers() {
        var machine = Self.machine()
        machine.notifiers = ["app.feed": JobNotifiers(onFailure: Self.hook, onRecovery: Self.page)]
        var effects: [SchedulerEffect] = []
        machine.runEnded(runID: 7, job: "app.feed[alice]", outcome: .expired, exitStatus: nil, signal: 15,
                         at: Self.t0, stores: true, into: &effects)
        let n = RunNotification(id: "test-7-failure", kind: .failure, job: "app.feed[alice]", runID: 7, outcome: .expired,
                                exitStatus: nil, signal: 15, started: nil, ended: Self.t0, outputTail: [], notifier: Self.hook)
        #expect(effects == [.persist(.putRecord(MachineRecord(table: NotificationMachine.failingTable, key: "app.feed[alice]",
                                                              value: "{\"run\":7}"))),
                            Self.record(n), .notify(n)])
        // Another instance's success is no recovery of alice's; hers is.
        effects = []
        machine.runEnded(runID: 8, job: "app.feed[bob]", outcome: .success, exitStatus: 0, signal: nil,
                         at: Self.t0, stores: true, into: &effects)
        #expect(effects.isEmpty)
        machine.runEnded(runID: 9, job: "app.feed[alice]", outcome: .success, exitStatus: 0, signal: nil,
                         at: Self.t0, stores: true, into: &effects)
        #expect(effects.contains { if case let .notify(r) = $0 { r.kind == .recovery && r.job == "app.feed[alice]" } else { false } })
        // Not an instance: an identifier that only looks like one of another template.
        effects = []
        machine.runEnded(runID: 10, job: "app.other[alice]", outcome: .failure, exitStatus: 1, signal: nil,
                         at: Self.t0, stores: true, into: &effects)
        #expect(effects.isEmpty)
    }

    @Test func backoffDoublesFromOneSecondAndGivesUpAfterEightAttempts() {
        #expect((1...10).map { NotificationMachine.backoff(afterAttempt: $0) }
            == [1, 2, 4, 8, 16, 32, 64, 128, 256, 300].map { Duration.seconds($0) })
        var machine = Self.machine()
        var effects: [SchedulerEffect] = []
        var now = Self.t0
        machine.runEnded(runID: 1, job: "app.job", outcome: .expired, exitStatus: nil, signal: 15,
                         at: now, stores: true, into: &effects)
        for attempt in 1...8 {
            effects = []
            machine.finished("test-1-failure", .failed("connection refused"), at: now, stores: true, into: &effects)
            if attempt < 8 {
                now = now + NotificationMachine.backoff(afterAttempt: attempt)
                #expect(machine.nextDeadline == now)
                machine.timerFired(at: now, into: &effects)
                #expect(effects.last.map { if case .notify = $0 { true } else { false } } == true)
            }
        }
        #expect(effects.count == 2)
        #expect(effects.first == .persist(.deleteRecord(table: NotificationMachine.table, key: "test-1-failure")))
        guard case let .log(.notification(.gaveUp(n, attempts, reason))) = effects.last else {
            Issue.record("expected a give-up, got \(effects)")
            return
        }
        #expect(n.outcome == .expired && n.signal == 15 && attempts == 8 && reason == "connection refused")
        #expect(machine.counts.givenUp == 1 && machine.counts.retries == 7 && machine.held.isEmpty)
        #expect(machine.nextDeadline == nil)
    }

    @Test func interruptedAndSuccessfulRunsDoNotNotifyAndRecoveryComesOnce() {
        var machine = Self.machine()
        var effects: [SchedulerEffect] = []
        // refreshd's own stop or death: never a page.
        machine.runEnded(runID: 1, job: "app.job", outcome: .interrupted, exitStatus: nil, signal: 9,
                         at: Self.t0, stores: true, into: &effects)
        machine.runEnded(runID: 2, job: "app.job", outcome: .success, exitStatus: 0, signal: nil,
                         at: Self.t0, stores: true, into: &effects)
        machine.runEnded(runID: 3, job: "other.job", outcome: .failure, exitStatus: 1, signal: nil,
                         at: Self.t0, stores: true, into: &effects)
        #expect(effects == [])

        // Two failures: two notifications, one failing record.
        machine.runEnded(runID: 4, job: "app.job", outcome: .crashed, exitStatus: nil, signal: 11,
                         at: Self.t0, stores: true, into: &effects)
        machine.runEnded(runID: 5, job: "app.job", outcome: .failure, exitStatus: 2, signal: nil,
                         at: Self.t0, stores: true, into: &effects)
        #expect(effects.filter { if case .notify = $0 { true } else { false } }.count == 2)
        #expect(effects.filter { if case .persist(.putRecord(let r)) = $0 { r.table == NotificationMachine.failingTable } else { false } }.count == 1)

        // The first success after them: one recovery; the next success: nothing.
        effects = []
        machine.runEnded(runID: 6, job: "app.job", outcome: .success, exitStatus: 0, signal: nil,
                         at: Self.t0, stores: true, into: &effects)
        let recovery = Self.notification(6, .recovery, outcome: .success, exit: 0)
        #expect(effects == [.persist(.deleteRecord(table: NotificationMachine.failingTable, key: "app.job")),
                            Self.record(recovery), .notify(recovery)])
        effects = []
        machine.runEnded(runID: 7, job: "app.job", outcome: .success, exitStatus: 0, signal: nil,
                         at: Self.t0, stores: true, into: &effects)
        #expect(effects == [])
        #expect(machine.counts.failure == 2 && machine.counts.recovery == 1)
    }

    @Test func aRestartSendsEveryHeldNotificationAgainAndRemembersFailingJobs() {
        let held = Self.notification(3, attempts: 2)
        let records = [MachineRecord(table: NotificationMachine.table, key: held.id, value: Self.json(held)),
                       MachineRecord(table: NotificationMachine.failingTable, key: "app.job", value: "{\"run\":3}"),
                       MachineRecord(table: "widget", key: "x", value: "{}")]
        var machine = Self.machine()
        var effects: [SchedulerEffect] = []
        machine.restore(records, into: &effects)
        #expect(effects == [.notify(held)])  // due at once, the same id (and its attempts)
        effects = []
        machine.runEnded(runID: 4, job: "app.job", outcome: .success, exitStatus: 0, signal: nil,
                         at: Self.t0, stores: true, into: &effects)
        #expect(effects.contains(.notify(Self.notification(4, .recovery, outcome: .success, exit: 0))))
    }

    @Test func atMostAThousandAreHeldTheOldestDropped() {
        var machine = Self.machine(recovery: false)
        var effects: [SchedulerEffect] = []
        for run in 1...Int64(NotificationMachine.maxHeld) {
            machine.runEnded(runID: run, job: "app.job", outcome: .failure, exitStatus: 1, signal: nil,
                             at: Self.t0, stores: false, into: &effects)
        }
        effects = []
        machine.runEnded(runID: 1001, job: "app.job", outcome: .failure, exitStatus: 1, signal: nil,
                         at: Self.t0, stores: true, into: &effects)
        let newest = Self.notification(1001)
        #expect(effects == [.persist(.deleteRecord(table: NotificationMachine.table, key: "test-1-failure")),
                            .log(.notification(.dropped(Self.notification(1), held: 1000))),
                            Self.record(newest), .notify(newest)])
        #expect(machine.held.count == 1000 && machine.counts.dropped == 1)
        // The dropped one's late answer is ignored.
        effects = []
        machine.finished("test-1-failure", .delivered, at: Self.t0, stores: true, into: &effects)
        #expect(effects == [])
    }

    /// Through the runtime's machine: a failed run's end carries its notification (with the
    /// run's start, exit and last output lines) in the same effect list, after the run's end is
    /// recorded; the delivery comes after both.
    @Test func aRunsEndCarriesItsNotificationInTheSameCommit() throws {
        var configuration = SchedulerConfiguration()
        configuration.emitsStateChanges = true
        configuration.emitsRoutineLogs = false
        configuration.emitsRunEnds = true
        let job = TaskDefinition(identifier: "app.job", allowance: .seconds(30), grace: .seconds(5))
        var machine = RuntimeMachine(scheduler: SchedulerCore(configuration: configuration, definitions: [job]))
        machine.machines.notifications.idPrefix = "test"
        machine.machines.notifications.notifiers = ["app.job": JobNotifiers(onFailure: Self.hook)]
        var effects: [SchedulerEffect] = []
        let t0 = Self.t0
        machine.handle(.restore(SchedulerCore.RestoredState()), at: t0, into: &effects)
        try machine.submit(TaskRequest(identifier: "app.job"), at: t0, into: &effects)
        effects = []
        machine.handle(.timerFired, at: t0, into: &effects)
        let order = try #require(effects.compactMap { if case let .launch(o) = $0 { o } else { nil } }.first)
        _ = machine.outputLines(order, (1...25).map { "line \($0)" }, at: t0 + .seconds(1))
        effects = []
        machine.handle(.runFinished(runID: order.runID, exit: .exited(3)), at: t0 + .seconds(2), into: &effects)
        let notify = try #require(effects.firstIndex { if case .notify = $0 { true } else { false } })
        let ended = try #require(effects.firstIndex { if case .persist(.runEnded) = $0 { true } else { false } })
        let recorded = try #require(effects.firstIndex {
            if case let .persist(.putRecord(r)) = $0 { r.table == NotificationMachine.table } else { false }
        })
        #expect(ended < notify && recorded < notify)
        guard case let .notify(n) = effects[notify] else { return }
        #expect(n.id == "test-\(order.runID)-failure" && n.exitStatus == 3 && n.signal == nil)
        #expect(n.started == t0 && n.ended == t0 + .seconds(2))
        #expect(n.outputTail == (6...25).map { "line \($0)" })
        // The delivery's outcome is an event of the composed machines.
        effects = []
        machine.machines.handle(notification: n.id, .failed("HTTP 500"), at: t0 + .seconds(3), into: &effects)
        #expect(effects.contains(.armTimer(at: t0 + .seconds(4))))
        // Once refreshd has stopped, a late report is not recorded (the store is closing): the
        // record stays held, and the next start sends it again.
        effects = []
        machine.handle(.timerFired, at: t0 + .seconds(4), into: &effects)
        #expect(effects.contains(.notify(RunNotification(id: n.id, kind: .failure, job: "app.job", runID: n.runID,
                                                         outcome: .failure, exitStatus: 3, signal: nil, started: t0,
                                                         ended: t0 + .seconds(2), outputTail: n.outputTail,
                                                         notifier: Self.hook, attempts: 1))))
        effects = []
        machine.handle(.shutdown, at: t0 + .seconds(5), into: &effects)
        #expect(effects.contains(.stopped))
        effects = []
        machine.machines.handle(notification: n.id, .delivered, at: t0 + .seconds(6), into: &effects)
        #expect(effects == [])
    }
}
