import Foundation  // JSON of the snapshot
import Testing
@testable import RefreshdCore

/// Deliberately corrupted machines that each invariant must catch, so `checkInvariants()`
/// cannot pass by checking nothing; and the status and log lines as people read them.
@Suite struct TimelineInvariantTests {
    static let small = WidgetID(kind: "photos", family: .systemSmall)
    static let definition = WidgetDefinition(kind: "photos", families: [.systemSmall], job: "photos.provider",
                                             budget: .limited(2))

    /// A machine at 03:00 with a 4-entry `atEnd` timeline shown and its budget spent: a
    /// reload deferred to 24 h after the first call.
    static func healthy() -> TimelineMachine {
        var d = TimelineDriver([definition])
        d.complete(small, .timeline(timeline([.at(0, 0), .at(1, 0), .at(2, 0), .at(12, 0)], .atEnd), upstreamFetch: true))
        d.advance(to: .at(1, 0))
        d.send(.reload(kind: "photos", reason: .explicitAPI))
        d.complete(small, .timeline(timeline([.at(0, 0), .at(1, 0), .at(2, 0), .at(12, 0)], .atEnd), upstreamFetch: true))
        d.advance(to: .at(3, 0))
        d.send(.reload(kind: "photos", reason: .explicitAPI))
        return d.machine
    }

    static func violations(_ corrupt: (inout TimelineMachine) -> Void) -> Set<TimelineViolation.Invariant> {
        var machine = healthy()
        corrupt(&machine)
        return Set(machine.checkInvariants().map(\.invariant))
    }

    @Test func theHealthyMachineIsDeferredAndClean() {
        let machine = Self.healthy()
        #expect(machine.checkInvariants().isEmpty)
        #expect(machine.record(Self.small)?.release == .at(day: 1, 0, 0))
    }

    @Test func eachCorruptionIsCaught() {
        let small = Self.small
        let overBudget = Self.violations { m in m.widgets[small]?.ledger.append(.at(2, 30)) }
        #expect(overBudget.contains(.budgetExceeded))
        let unordered = Self.violations { m in m.widgets[small]?.ledger.swapAt(0, 1) }
        #expect(unordered.contains(.ledgerInvalid))
        let forged = Self.violations { m in m.widgets[small]?.shown?.entry.content = "{\"forged\":1}" }
        #expect(forged == [.publishedNotReturned])
        let missed = Self.violations { m in
            // Still showing the 01:00 entry at 03:00: the 02:00 switch was missed.
            let earlier = m.widgets[small]?.timeline?.entries[1]
            m.widgets[small]?.shown = earlier.map { ShownEntry(entry: $0, since: .at(1, 0), index: 1) }
        }
        #expect(missed == [.entryNotPublished])
        let lateRelease = Self.violations { m in
            m.widgets[small]?.release = .at(day: 1, 0, 0) + .milliseconds(1)
            m.dueAt[small] = m.widgets[small].flatMap { m.widgetDeadline($0, at: .at(3, 0)) }
            m.nextDeadline = m.dueAt.values.min()
        }
        #expect(lateRelease == [.releaseWrong])
        let forgotten = Self.violations { m in m.widgets[small]?.policyDue = .at(2, 0) }
        #expect(forgotten.isSuperset(of: [.dueNotActed, .deadlineMismatch]))
        let wrongDeadline = Self.violations { m in m.nextDeadline = .at(4, 0) }
        #expect(wrongDeadline == [.deadlineMismatch])
        let unaccounted = Self.violations { m in m.widgets[small]?.staleAccountedUntil = nil }
        #expect(unaccounted == [.staleSpanInvalid])
        let unlisted = Self.violations { m in m.order.removeAll() }
        #expect(unlisted.contains(.widgetIndexMismatch))
        let undeclared = Self.violations { m in m.definitions["photos"] = nil }
        #expect(undeclared.contains(.widgetIndexMismatch))
        let slotFree = Self.violations { m in m.definitions["photos"]?.budget = .limited(5) }
        #expect(slotFree == [.releaseWrong])  // a slot is free, yet the reload still waits
    }

    @Test func theSnapshotSaysWhatStatusShows() throws {
        let machine = Self.healthy()
        let status = machine.snapshot()
        #expect(status.at == .at(3, 0))
        let widget = try #require(status.widgets.first)
        #expect(widget.shown?.date == .at(2, 0) && widget.shownSince == .at(2, 0))
        #expect(widget.nextEntrySwitch == .at(12, 0))
        #expect(widget.policy == .atEnd && widget.entries == 4)
        #expect(widget.nextReload == .at(day: 1, 0, 0) && widget.nextReloadWhy == .deferred)
        #expect(widget.budgetLimit == 2 && widget.budgetUsed == 2 && widget.budgetLeft == 0)
        #expect(widget.staleSince == .at(3, 0) && widget.staleReason == .budgetSpent)
        #expect(widget.windowSeconds == 86_400 && widget.job == "photos.provider")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = String(decoding: try encoder.encode(status), as: UTF8.self)
        #expect(json.contains("\"staleReason\":\"budgetSpent\""))
        #expect(try JSONDecoder().decode(TimelineSnapshot.self, from: Data(json.utf8)) == status)
        // Later, between events: the window has freed both slots.
        #expect(machine.snapshot(at: .at(day: 1, 2, 0)).widgets.first?.budgetLeft == 2)
    }

    @Test func logLinesReadAsSentences() {
        let release = Instant.at(day: 1, 9, 14)
        #expect(TimelineLog.deferred(Self.small, .explicitJob, used: 50, limit: 50, window: .hours(24), release: release).description
            == "reload deferred photos/systemSmall (explicit (job)): budget 50/50 used in 24 h, next slot 2026-11-23T09:14:00.000Z")
        #expect(TimelineLog.providerAsked(Self.small, .policyAtEnd, exempt: false, used: 12, limit: 50, window: .hours(24)).description
            == "reload photos/systemSmall (policy atEnd): provider asked, budget 12/50 used in 24 h")
        #expect(TimelineLog.staleStarted(Self.small, since: .at(11, 42), .budgetSpent).description
            == "stale photos/systemSmall since 2026-11-22T11:42:00.000Z: budget spent")
        #expect(TimelineLog.failed(Self.small, reason: "exit 3", expired: false, keptEntries: 1).description
            == "reload failed photos/systemSmall: exit 3; keeping the last good timeline (1 entry)")
    }
}
