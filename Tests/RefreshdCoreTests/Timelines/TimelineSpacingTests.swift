import Foundation
import Testing
@testable import RefreshdCore

/// The minimum interval between one widget's reloads: a counted reload asked for sooner waits
/// for it (without going stale), exempt reloads do not wait but start the interval, and a
/// budget that is spent too releases at the later of the two instants. Input -> exact effects.
@Suite struct TimelineSpacingTests {
    static let id = WidgetID(kind: "single", family: .systemSmall)
    static let t0 = TimelineDriver.start
    static let fiveMinutes = Duration.seconds(300)

    static func definition(interval: Duration = fiveMinutes, budget: ReloadBudget = .limited(50)) -> WidgetDefinition {
        WidgetDefinition(kind: "single", families: [.systemSmall], job: "single.provider", budget: budget,
                         minReloadInterval: interval)
    }

    /// The effects without the store writes (they are checked by the invariants and restores).
    static func acts(_ effects: [TimelineEffect]) -> [TimelineEffect] {
        effects.filter { if case .persist = $0 { false } else { true } }
    }

    /// One entry dated at the run with `atEnd`: due again as soon as it arrives.
    static func oneEntryNow(_ at: Instant) -> ProviderResult {
        .timeline(timeline([at], .atEnd), upstreamFetch: false)
    }

    @Test func aOneEntryAtEndTimelineWaitsFiveMinutesBetweenReloads() {
        var machine = TimelineMachine()
        _ = machine.handle(.declare(Self.definition()), at: Self.t0)
        #expect(Self.acts(machine.handle(.restore(.init()), at: Self.t0))
            == [.runProvider(Self.id, reason: .added),
                .log(.providerAsked(Self.id, .added, exempt: false, used: 1, limit: 50, window: .seconds(86_400)))])
        let entry = TimelineEntry(date: Self.t0, content: "{}")
        let back = Self.t0 + .seconds(2)
        #expect(Self.acts(machine.handle(.providerFinished(Self.id, Self.oneEntryNow(Self.t0)), at: back))
            == [.log(.accepted(Self.id, entries: 1, policy: .atEnd, nextReload: Self.t0)),
                .publish(Self.id, entry: entry),
                .log(.published(Self.id, entryDate: Self.t0)),
                .log(.spaced(Self.id, .policyAtEnd, last: Self.t0, interval: Self.fiveMinutes, release: Self.t0 + Self.fiveMinutes))])
        #expect(machine.nextDeadline == Self.t0 + Self.fiveMinutes)
        #expect(machine.record(Self.id)?.stale == nil)  // pacing is not staleness
        #expect(machine.checkInvariants().isEmpty)
        // Early or spurious wake-ups do nothing.
        #expect(Self.acts(machine.handle(.timerFired, at: Self.t0 + .seconds(299))).isEmpty)
        #expect(Self.acts(machine.handle(.timerFired, at: Self.t0 + Self.fiveMinutes))
            == [.runProvider(Self.id, reason: .policyAtEnd),
                .log(.providerAsked(Self.id, .policyAtEnd, exempt: false, used: 2, limit: 50, window: .seconds(86_400)))])
        #expect(machine.todaysCounters.first?.spaced == 1)
        #expect(machine.checkInvariants().isEmpty)
    }

    @Test func withoutAnIntervalTheSameTimelineReloadsBackToBack() {
        var machine = TimelineMachine()
        _ = machine.handle(.declare(Self.definition(interval: .zero)), at: Self.t0)
        _ = machine.handle(.restore(.init()), at: Self.t0)
        let effects = Self.acts(machine.handle(.providerFinished(Self.id, Self.oneEntryNow(Self.t0)), at: Self.t0 + .seconds(2)))
        #expect(effects.contains(.runProvider(Self.id, reason: .policyAtEnd)))
    }

    @Test func anExemptReloadDoesNotWaitButStartsTheInterval() {
        var machine = TimelineMachine()
        _ = machine.handle(.declare(Self.definition()), at: Self.t0)
        _ = machine.handle(.restore(.init()), at: Self.t0)
        let never = ProviderResult.timeline(timeline([Self.t0], .never), upstreamFetch: false)
        _ = machine.handle(.providerFinished(Self.id, never), at: Self.t0 + .seconds(2))
        // A widget intent (an interactive button) a minute after the first reload: at once.
        let tap = Self.t0 + .seconds(60)
        #expect(Self.acts(machine.handle(.reload(kind: "single", reason: .widgetIntent), at: tap))
            == [.runProvider(Self.id, reason: .widgetIntent),
                .log(.providerAsked(Self.id, .widgetIntent, exempt: true, used: nil, limit: nil, window: .seconds(86_400)))])
        _ = machine.handle(.providerFinished(Self.id, never), at: tap + .seconds(2))
        // The app's explicit reload right after waits five minutes from the tap, not stale.
        let explicit = tap + .seconds(10)
        #expect(Self.acts(machine.handle(.reload(kind: "single", reason: .explicitAPI), at: explicit))
            == [.log(.spaced(Self.id, .explicitAPI, last: tap, interval: Self.fiveMinutes, release: tap + Self.fiveMinutes))])
        #expect(machine.record(Self.id)?.stale == nil)
        // A second request meanwhile coalesces into it, still not stale.
        #expect(Self.acts(machine.handle(.reload(kind: "single", reason: .explicitJob), at: explicit + .seconds(5)))
            == [.log(.coalesced(Self.id, .explicitJob, into: .deferred(until: tap + Self.fiveMinutes)))])
        #expect(machine.record(Self.id)?.stale == nil)
        #expect(machine.checkInvariants().isEmpty)
        #expect(Self.acts(machine.handle(.timerFired, at: tap + Self.fiveMinutes)).first
            == .runProvider(Self.id, reason: .explicitAPI))
    }

    @Test func aSpentBudgetReleasesAtTheLaterOfItsSlotAndTheInterval() {
        var machine = TimelineMachine()
        _ = machine.handle(.declare(Self.definition(interval: .seconds(3600), budget: .limited(1))), at: Self.t0)
        _ = machine.handle(.restore(.init()), at: Self.t0)
        let never = ProviderResult.timeline(timeline([Self.t0], .never), upstreamFetch: false)
        _ = machine.handle(.providerFinished(Self.id, never), at: Self.t0 + .seconds(2))
        let ask = Self.t0 + .seconds(60)
        let effects = Self.acts(machine.handle(.reload(kind: "single", reason: .explicitAPI), at: ask))
        let slot = Self.t0 + .seconds(86_400)
        #expect(effects.first == .log(.deferred(Self.id, .explicitAPI, used: 1, limit: 1, window: .seconds(86_400), release: slot)))
        #expect(machine.record(Self.id)?.stale?.reason == .budgetSpent)
        #expect(machine.checkInvariants().isEmpty)
    }

    /// A record saved before the setting existed (no `lastReload`) decodes and is not spaced.
    @Test func aRecordWithoutLastReloadDecodes() throws {
        let json = #"{"widget":{"kind":"single","family":"systemSmall"},"ledger":[],"ledgerCeiling":0,"recentSpans":[]}"#
        let record = try JSONDecoder().decode(WidgetRecord.self, from: Data(json.utf8))
        #expect(record.lastReload == nil)
    }
}

extension TimelineSpacingTests {
    /// A wall clock stepped back an hour does not hold the next reload for the hour too.
    @Test func aClockSteppedBackDoesNotStretchTheInterval() {
        var machine = TimelineMachine()
        _ = machine.handle(.declare(Self.definition()), at: Self.t0 + .seconds(3600))
        _ = machine.handle(.restore(.init()), at: Self.t0 + .seconds(3600))
        let never = ProviderResult.timeline(timeline([Self.t0], .never), upstreamFetch: false)
        _ = machine.handle(.providerFinished(Self.id, never), at: Self.t0 + .seconds(3602))
        _ = machine.handle(.clockChanged, at: Self.t0)  // stepped back an hour
        #expect(machine.record(Self.id)?.lastReload == Self.t0)
        #expect(Self.acts(machine.handle(.reload(kind: "single", reason: .explicitAPI), at: Self.t0 + .seconds(10)))
            == [.log(.spaced(Self.id, .explicitAPI, last: Self.t0, interval: Self.fiveMinutes, release: Self.t0 + Self.fiveMinutes))])
        #expect(machine.checkInvariants().isEmpty)
    }

    /// What holds a queued reload is the machine's data (`TimelineSnapshot.Widget.nextReloadWhy`):
    /// the minimum interval when the budget has a slot (`spaced`), the budget when it has none
    /// and frees a slot after the interval ends (`deferred`). Before, every queued reload read
    /// "deferred for the budget", the interval's too.
    @Test func theSnapshotSaysWhetherTheIntervalOrTheBudgetHoldsAReload() {
        var machine = TimelineMachine()
        _ = machine.handle(.declare(Self.definition()), at: Self.t0)
        _ = machine.handle(.restore(.init()), at: Self.t0)
        _ = machine.handle(.providerFinished(Self.id, Self.oneEntryNow(Self.t0)), at: Self.t0 + .seconds(2))
        let spaced = machine.snapshot(at: Self.t0 + .seconds(60)).widgets.first
        #expect(spaced?.nextReloadWhy == .spaced)
        #expect(spaced?.nextReload == Self.t0 + Self.fiveMinutes)

        // A budget of 1, spent by the first reload: the window frees a slot a day later, long
        // after the five minutes: the budget holds it.
        var spent = TimelineMachine()
        _ = spent.handle(.declare(Self.definition(budget: .limited(1))), at: Self.t0)
        _ = spent.handle(.restore(.init()), at: Self.t0)
        _ = spent.handle(.providerFinished(Self.id, Self.oneEntryNow(Self.t0)), at: Self.t0 + .seconds(2))
        let deferred = spent.snapshot(at: Self.t0 + .seconds(60)).widgets.first
        #expect(deferred?.nextReloadWhy == .deferred)
        #expect(deferred?.nextReload == Self.t0 + .seconds(86_400))
    }
}

