import Testing
@testable import RefreshdCore

/// Drives a `TimelineMachine` on virtual time, the way the runtime will: it fires `.timerFired`
/// at the machine's `nextDeadline`, answers provider calls after a latency with a provider
/// function, folds `.persist` changes into a store, and checks the invariants after every step.
struct TimelineDriver {
    var machine = TimelineMachine()
    var now: Instant
    var effects: [TimelineEffect] = []
    /// Every provider call, in order.
    var calls: [(WidgetID, ReloadReason, Instant)] = []
    /// Provider calls not yet answered: when they end.
    var running: [(id: WidgetID, endsAt: Instant)] = []
    /// What each family shows now (nil: nothing, or withdrawn), and every publication.
    var shown: [WidgetID: TimelineEntry] = [:]
    var publications: [(WidgetID, TimelineEntry?, Instant)] = []
    /// The store: records and counter rows by key, as the runtime would keep them.
    var records: [String: WidgetRecord] = [:]
    var counterRows: [String: WidgetDayCounter] = [:]
    var definitions: [WidgetDefinition] = []
    /// Answers provider calls (nil: calls stay running until `complete` is called).
    var provider: ((WidgetID, Instant) -> ProviderResult)?
    var latency: Duration = .seconds(2)
    var checksInvariants = true

    static let start = Instant(milliseconds: 1_795_305_600_000)  // 2026-11-22T00:00:00Z

    init(_ definitions: [WidgetDefinition], start: Instant = TimelineDriver.start,
         provider: ((WidgetID, Instant) -> ProviderResult)? = nil) {
        now = start
        self.provider = provider
        self.definitions = definitions
        for d in definitions { send(.declare(d)) }
        send(.restore(.init()))
    }

    mutating func send(_ event: TimelineEvent) {
        var out: [TimelineEffect] = []
        machine.handle(event, at: now, into: &out)
        effects += out
        for effect in out {
            switch effect {
            case let .runProvider(id, reason):
                calls.append((id, reason, now))
                running.append((id, now + latency))
            case let .publish(id, entry):
                shown[id] = entry
                publications.append((id, entry, now))
            case let .persist(change):
                switch change {
                case let .putWidget(record): records[change.key] = record
                case .deleteWidget: records[change.key] = nil
                case let .putCounters(row): counterRows[change.key] = row
                }
            case .log: break
            }
        }
        if checksInvariants {
            let violations = machine.checkInvariants()
            #expect(violations.isEmpty, "after \(event) at \(now): \(violations)")
        }
    }

    /// Ends the oldest running call of `id` with `result`.
    mutating func complete(_ id: WidgetID, _ result: ProviderResult) {
        if let i = running.firstIndex(where: { $0.id == id }) { running.remove(at: i) }
        send(.providerFinished(id, result))
    }

    /// Advances to `end`, firing the timer at each deadline and answering provider calls.
    mutating func advance(to end: Instant) {
        while true {
            let deadline = machine.nextDeadline
            let answer = provider == nil ? nil : running.min { $0.endsAt < $1.endsAt }
            let next = [deadline, answer?.endsAt].compactMap { $0 }.min()
            guard let next, next <= end else { break }
            now = max(now, next)
            if let answer, answer.endsAt == next, let provider {
                if let i = running.firstIndex(where: { $0.id == answer.id && $0.endsAt == answer.endsAt }) {
                    running.remove(at: i)
                }
                send(.providerFinished(answer.id, provider(answer.id, now)))
            } else {
                send(.timerFired)
            }
        }
        now = max(now, end)
    }

    mutating func advance(by span: Duration) { advance(to: now + span) }

    /// Kill -9 and start again on the same store: a new machine, the same declarations, the
    /// records and the latest day's rows, at `at`.
    /// `waiting`: widgets whose provider request was still pending (never launched).
    mutating func restart(at instant: Instant, providersWaiting waiting: Set<WidgetID> = []) {
        machine = TimelineMachine()
        running.removeAll()
        now = instant
        for d in definitions { send(.declare(d)) }
        let latestDay = counterRows.values.map(\.day).max()
        send(.restore(.init(records: records.values.sorted { $0.widget < $1.widget },
                            counters: counterRows.values.filter { $0.day == latestDay }, providersWaiting: waiting)))
    }

    func calls(of id: WidgetID) -> [Instant] { calls.filter { $0.0 == id }.map(\.2) }

    func row(_ day: String, _ id: WidgetID) -> WidgetDayCounter? { counterRows["\(day) \(id)"] }

    var logs: [TimelineLog] { effects.compactMap { if case let .log(l) = $0 { l } else { nil } } }
}

extension Instant {
    /// 2026-11-22 at `h:m` UTC plus `day` days (tests read better with clock times).
    static func at(day: Int64 = 0, _ h: Int64, _ m: Int64 = 0) -> Instant {
        TimelineDriver.start + .seconds(day * 86_400 + h * 3600 + m * 60)
    }
}

/// A timeline of `content` entries at the given instants.
func timeline(_ dates: [Instant], _ policy: TimelinePolicy, content: String = "{}") -> Timeline {
    Timeline(entries: dates.map { TimelineEntry(date: $0, content: content) }, policy: policy)
}
