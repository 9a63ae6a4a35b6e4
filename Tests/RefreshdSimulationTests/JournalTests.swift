import Foundation
import Testing
import RefreshdConfig
import RefreshdCore
import RefreshdRuntime
@testable import RefreshdSimulation

/// The simulator's end-to-end invariants, fed changes and observations by hand: each fires on
/// the sequence that breaks it and stays quiet on the one next to it that does not.
@Suite struct JournalTests {
    static func at(_ seconds: Int64) -> Instant { Instant(milliseconds: 1_800_000_000_000 + seconds * 1000) }

    /// A run started at its earliest date unless `started` says otherwise.
    static func run(_ id: Int64, _ identifier: String = "a", earliest: Int64 = 0, started: Int64? = nil,
                    deadline: Int64 = 60, attempt: Int = 1) -> StateChange {
        .runStarted(RunRecord(runID: id, identifier: identifier, kind: .processing, submitted: at(0),
                              earliest: at(earliest), started: at(started ?? earliest), deadline: at(deadline), attempt: attempt))
    }

    static func end(_ id: Int64, _ identifier: String = "a", at seconds: Int64 = 5, outcome: Outcome = .success) -> StateChange {
        .runEnded(runID: id, identifier: identifier, ended: at(seconds), outcome: outcome, exitStatus: 0, signal: nil)
    }

    static func seen(_ kind: RuntimeObservation.Kind, _ id: Int64, at seconds: Int64) -> RuntimeObservation {
        RuntimeObservation(time: at(seconds), kind: kind, identifier: "a", runID: id, message: "\(kind)")
    }

    /// Audits the batches in order; the first invariant flagged, if any.
    static func audit(_ batches: [[StateChange]], then observations: [RuntimeObservation] = []) -> String? {
        let journal = Journal()
        for batch in batches { journal.audit(batch, at: at(0)) }
        for o in observations { journal.record(o) }
        return journal.takeViolation()?.invariant
    }

    @Test func aLaunchBeforeItsEarliestDateIsFlagged() {
        #expect(Self.audit([[Self.run(1, earliest: 10, started: 9)]]) == "launch-before-earliest")
        #expect(Self.audit([[Self.run(1, earliest: 10, started: 10)]]) == nil)
    }

    @Test func aSecondRunOfAnIdentifierInFlightIsFlagged() {
        #expect(Self.audit([[Self.run(1, earliest: 0)], [Self.run(2, earliest: 60)]]) == "one-run-per-identifier")
        #expect(Self.audit([[Self.run(1, earliest: 0)], [Self.end(1)], [Self.run(2, earliest: 60)]]) == nil)
        #expect(Self.audit([[Self.run(1, earliest: 0)], [Self.run(2, "b", earliest: 0)]]) == nil)
        // The end of an older run does not free the identifier for a newer one still in flight.
        #expect(Self.audit([[Self.run(1, earliest: 0)], [Self.end(7)], [Self.run(2, earliest: 60)]])
                == "one-run-per-identifier")
    }

    @Test func aSlotRunTwiceByFirstAttemptsIsFlaggedButARetryIsNot() {
        let twice: [[StateChange]] = [[Self.run(1, earliest: 0)], [Self.end(1)], [Self.run(2, earliest: 0, started: 30)]]
        #expect(Self.audit(twice) == "slot-run-twice")
        let retry: [[StateChange]] = [[Self.run(1, earliest: 0)], [Self.end(1)], [Self.run(2, earliest: 0, started: 30, attempt: 2)]]
        #expect(Self.audit(retry) == nil)
        // Slots are per identifier, and come in any order.
        #expect(Self.audit([[Self.run(1, earliest: 120, started: 120)], [Self.end(1)], [Self.run(2, earliest: 60, started: 130)],
                            [Self.end(2)], [Self.run(3, "b", earliest: 120, started: 130)]]) == nil)
        #expect(Self.audit([[Self.run(1, earliest: 120, started: 120)], [Self.end(1)], [Self.run(2, earliest: 60, started: 130)],
                            [Self.end(2)], [Self.run(3, earliest: 60, started: 140)]]) == "slot-run-twice")
    }

    /// An interruption is refreshd's doing (a stop or a crash during the run), not the job's:
    /// its slot runs again as a first attempt. That rerun is not a slot run twice; a third run,
    /// or a rerun after a run that was not interrupted, is (issue 34's finding: a `down` fault
    /// landing on a launch instant tripped the audit).
    @Test func aSlotRunAgainAfterAnInterruptionIsNotTwice() {
        #expect(Self.audit([[Self.run(1, earliest: 0)], [Self.end(1, outcome: .interrupted)],
                            [Self.run(2, earliest: 0, started: 120)]]) == nil)
        #expect(Self.audit([[Self.run(1, earliest: 0)], [Self.end(1, outcome: .interrupted)],
                            [Self.run(2, earliest: 0, started: 120)], [Self.end(2)],
                            [Self.run(3, earliest: 0, started: 130)]]) == "slot-run-twice")
        #expect(Self.audit([[Self.run(1, earliest: 0)], [Self.end(1, outcome: .failure)],
                            [Self.run(2, earliest: 0, started: 120)]]) == "slot-run-twice")
    }

    @Test func anExpirationBeforeTheDeadlineIsFlagged() {
        #expect(Self.audit([[Self.run(1, deadline: 60)]], then: [Self.seen(.expired, 1, at: 59)]) == "expiration-at-allowance")
        #expect(Self.audit([[Self.run(1, deadline: 60)]], then: [Self.seen(.expired, 1, at: 60)]) == nil)
        // A run not started in the audit has no deadline to compare with.
        #expect(Self.audit([], then: [Self.seen(.expired, 1, at: 1)]) == nil)
    }

    @Test func aKillWithoutAnExpirationFirstIsFlagged() {
        #expect(Self.audit([[Self.run(1)]], then: [Self.seen(.killed, 1, at: 65)]) == "kill-after-grace")
        #expect(Self.audit([[Self.run(1)]], then: [Self.seen(.expired, 1, at: 60), Self.seen(.killed, 1, at: 65)]) == nil)
        #expect(Self.audit([], then: [Self.seen(.expired, 3, at: 60), Self.seen(.killed, 3, at: 65)]) == nil)
        // An expiration of another run does not cover this one.
        #expect(Self.audit([[Self.run(1), Self.run(2, "b")]],
                           then: [Self.seen(.expired, 2, at: 60), Self.seen(.killed, 1, at: 65)]) == "kill-after-grace")
    }

    /// The expiration and kill audits read observations, and the simulator observes without the
    /// per-run events: expirations and kills must still reach the journal. A job that ignores
    /// SIGTERM and outlives its allowance is expired, then killed, every night.
    @Test func expirationsAndKillsReachTheJournalWithThePerRunEventsOff() {
        let job = SimulationTests.nightly(missed: .once, model: JobModel(duration: .fixed(.seconds(3600)), ignoresTerminate: true))
        let simulation = Simulation(scenario: Scenario(name: "overrun", jobs: [job], device: DeviceModel(discretion: .exact),
                                                       start: SimulationTests.monday, days: 1, seed: 2))
        #expect(!simulation.routineEvents)
        let report = simulation.run()
        #expect(report.violations.isEmpty, "\(report.violations)")
        #expect(report.jobs[0].figures.expired == 1)
        let recent = simulation.journal.recent()
        #expect(recent.contains { $0.contains("expired test.nightly run 1") }, "\(recent)")
        #expect(recent.contains { $0.contains("killed test.nightly run 1") }, "\(recent)")
        #expect(!recent.contains { $0.contains("launched ") }, "the per-run events are off: \(recent)")
    }

    /// The cluster's audit (`auditReloads`, every shard's commits): a widget's day row counting
    /// more provider calls than provider runs started, plus the one that may wait for its
    /// launch, is a reload counted twice; the other audits are not made there.
    @Test func aReloadCountedTwiceIsFlaggedByTheReloadsAuditAlone() throws {
        func row(calls: Int) throws -> StateChange {
            var counter = WidgetDayCounter(day: "2027-01-15", widget: WidgetID(kind: "w", family: .systemSmall))
            counter.providerCalls = calls
            let text = String(decoding: try JSONEncoder().encode(counter), as: UTF8.self)
            return .putRecord(MachineRecord(table: TimelineChange.counterTable, key: "2027-01-15 w systemSmall", value: text))
        }
        for (calls, flagged) in [(2, false), (3, true)] {
            let journal = Journal()
            journal.providerWidgets = ["t#systemSmall": "w/systemSmall"]
            // A launch before its earliest date: not this audit's.
            journal.auditReloads([Self.run(1, "t#systemSmall", earliest: 10, started: 5)], at: Self.at(5))
            journal.auditReloads([try row(calls: calls)], at: Self.at(6))
            #expect((journal.takeViolation()?.invariant == "reload-counted-once") == flagged, "\(calls) calls")
        }
    }

    @Test func theFirstViolationIsKeptAndTakenOnce() {
        let journal = Journal()
        journal.audit([Self.run(1, earliest: 10, started: 9), Self.run(2, earliest: 20, started: 9)], at: Self.at(9))
        let found = journal.takeViolation()
        #expect(found?.invariant == "launch-before-earliest")
        #expect(found?.message.contains("run 1") == true)
        #expect(journal.takeViolation() == nil)
    }
}
