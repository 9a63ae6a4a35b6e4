import Testing
@testable import RefreshdCore

/// Low Power Mode: counted reloads are held while it is on (stale if the policy asked), released
/// when it ends; exempt reloads (a widget intent) still happen. Input -> exact effects.
@Suite struct TimelineLowPowerTests {
    static let id = WidgetID(kind: "hourly", family: .systemSmall)
    static let t0 = TimelineDriver.start
    static let day = Duration.seconds(86_400)

    static func acts(_ effects: [TimelineEffect]) -> [TimelineEffect] {
        effects.filter { if case .persist = $0 { false } else { true } }
    }

    @Test func aPolicyReloadIsHeldUntilLowPowerEndsAndAnIntentStillGoesThrough() {
        var machine = TimelineMachine()
        _ = machine.handle(.declare(WidgetDefinition(kind: "hourly", families: [.systemSmall], job: "hourly.provider")), at: Self.t0)
        _ = machine.handle(.restore(.init()), at: Self.t0)
        let hour = Self.t0 + .seconds(3600)
        _ = machine.handle(.providerFinished(Self.id, .timeline(timeline([hour], .atEnd), upstreamFetch: false)), at: Self.t0 + .seconds(2))
        #expect(Self.acts(machine.handle(.lowPower(true), at: Self.t0 + .seconds(60))).isEmpty)
        // The policy's reload at the entry's date is held, and the widget is stale from then.
        let entry = TimelineEntry(date: hour, content: "{}")
        #expect(Self.acts(machine.handle(.timerFired, at: hour))
            == [.publish(Self.id, entry: entry), .log(.published(Self.id, entryDate: hour)),
                .log(.heldLowPower(Self.id, .policyAtEnd)), .log(.staleStarted(Self.id, since: hour, .lowPower))])
        #expect(machine.nextDeadline == nil || machine.nextDeadline! > hour + Self.day / 2)
        #expect(machine.checkInvariants().isEmpty)
        // A tap on the widget's button: exempt, at once (and it stands for the held reload).
        let tap = hour + .seconds(600)
        #expect(Self.acts(machine.handle(.reload(kind: "hourly", reason: .widgetIntent), at: tap))
            == [.runProvider(Self.id, reason: .policyAtEnd),
                .log(.providerAsked(Self.id, .policyAtEnd, exempt: true, used: nil, limit: nil, window: Self.day))])
        _ = machine.handle(.providerFinished(Self.id, .timeline(timeline([tap], .atEnd), upstreamFetch: false)), at: tap + .seconds(2))
        // Fresh for an instant: the tap's timeline (one entry, atEnd) is due at once, and held again.
        #expect(machine.record(Self.id)?.recentSpans == [StaleSpan(start: hour, end: tap + .seconds(2), reason: .lowPower)])
        #expect(machine.record(Self.id)?.stale == StaleSpan(start: tap + .seconds(2), reason: .lowPower))
        #expect(machine.record(Self.id)?.queued?.reason == .policyAtEnd)
        #expect(machine.checkInvariants().isEmpty)
        // Low power ends: the held reload goes through at once.
        let off = hour + .seconds(7200)
        #expect(Self.acts(machine.handle(.lowPower(false), at: off)).first == .runProvider(Self.id, reason: .policyAtEnd))
        #expect(machine.checkInvariants().isEmpty)
    }

    /// A reload already deferred for the budget when Low Power Mode starts is held too (the
    /// exploration found it kept its budget release).
    @Test func aReloadDeferredBeforeLowPowerIsHeldToo() {
        var machine = TimelineMachine()
        _ = machine.handle(.declare(WidgetDefinition(kind: "hourly", families: [.systemSmall], job: "hourly.provider",
                                                     budget: .limited(1))), at: Self.t0)
        _ = machine.handle(.restore(.init()), at: Self.t0)
        _ = machine.handle(.providerFinished(Self.id, .timeline(timeline([Self.t0], .never), upstreamFetch: false)), at: Self.t0 + .seconds(2))
        _ = machine.handle(.reload(kind: "hourly", reason: .explicitAPI), at: Self.t0 + .seconds(60))
        #expect(machine.record(Self.id)?.release == Self.t0 + Self.day)
        _ = machine.handle(.lowPower(true), at: Self.t0 + .seconds(120))
        #expect(machine.record(Self.id)?.release == nil)
        #expect(machine.checkInvariants().isEmpty)
        _ = machine.handle(.lowPower(false), at: Self.t0 + .seconds(180))
        #expect(machine.record(Self.id)?.release == Self.t0 + Self.day)
        #expect(machine.checkInvariants().isEmpty)
    }
}
