import Testing
@testable import RefreshdCore

/// Seeded random walks of events (reloads of every reason, provider results good and bad, early,
/// late and spurious wake-ups, clock steps, config reloads, kill -9 and restart on the saved
/// records) with `checkInvariants()` after every step, plus checks from outside the machine:
/// every published entry is one a provider returned, and counted calls never exceed the budget
/// in any 24 h.
@Suite struct TimelineRandomWalkTests {
    static let kinds = ["clock", "photos", "weather"]

    struct Walk {
        var rng: SplitMix64
        var d: TimelineDriver
        var budgets: [String: Int] = [:]
        /// Entries providers returned, by widget.
        var returned: [WidgetID: Set<TimelineEntry>] = [:]
        /// Counted provider calls by widget, from the `providerAsked` logs.
        var counted: [WidgetID: [Instant]] = [:]
        var nextContent = 0
        /// What the walk went through, so a walk that exercises nothing fails.
        var seen: Set<String> = []
        let changesBudgets: Bool
        let stepsClockBack: Bool

        init(seed: UInt64, changesBudgets: Bool, stepsClockBack: Bool) {
            rng = SplitMix64(seed: seed)
            self.changesBudgets = changesBudgets
            self.stepsClockBack = stepsClockBack
            var definitions: [WidgetDefinition] = []
            var budgets: [String: Int] = [:]
            for kind in Self.kindsToDeclare {
                let limit = rng.pick([0, 1, 2, 3, 5, 12])
                budgets[kind] = limit
                definitions.append(Self.randomDefinition(kind, limit: limit, rng: &rng))
            }
            self.budgets = budgets
            d = TimelineDriver(definitions)
            d.checksInvariants = true
        }

        static let kindsToDeclare = TimelineRandomWalkTests.kinds

        static func randomDefinition(_ kind: String, limit: Int, rng: inout SplitMix64) -> WidgetDefinition {
            var families = Set(WidgetFamily.allCases.filter { _ in rng.chance(0.35) })
            if families.isEmpty { families = [rng.pick(WidgetFamily.allCases)] }
            return WidgetDefinition(kind: kind, families: families, job: "\(kind).provider",
                                    budget: limit < 0 ? .unlimited : .limited(limit),
                                    failureRetry: rng.chance(0.7) ? .minutes(Int64(rng.int(1...60))) : nil)
        }

        mutating func randomTimeline() -> Timeline {
            let now = d.now
            let entries = (0..<rng.int(0...4)).map { _ -> TimelineEntry in
                nextContent += 1
                return TimelineEntry(date: now + .minutes(Int64(rng.int(-120...720))), content: "{\"n\":\(nextContent)}")
            }
            let policy: TimelinePolicy = switch rng.int(0...2) {
            case 0: .atEnd
            case 1: .after(now + .minutes(Int64(rng.int(-60...600))))
            default: .never
            }
            return Timeline(entries: entries, policy: policy)
        }

        mutating func step() {
            let roll = rng.int(0...99)
            switch roll {
            case 0..<25:
                let kind: String? = rng.chance(0.1) ? nil : rng.chance(0.05) ? "unknown" : rng.pick(Self.kindsToDeclare)
                d.send(.reload(kind: kind, reason: rng.pick(ReloadReason.allCases)))
            case 25..<50:
                guard !d.running.isEmpty else { fire(); return }
                let call = d.running[rng.int(0...(d.running.count - 1))]
                let result: ProviderResult
                switch rng.int(0...9) {
                case 0: result = .failed(reason: "exit 1", expired: false)
                case 1: result = .failed(reason: "allowance used up", expired: true)
                default:
                    let t = randomTimeline()
                    returned[call.id, default: []].formUnion(t.entries)
                    result = .timeline(t, upstreamFetch: rng.chance(0.5))
                }
                d.complete(call.id, result)
            case 50..<80:
                fire()
            case 80..<86:
                d.now = d.now + .minutes(Int64(rng.int(1...30)))
                d.send(.timerFired)  // late, early or spurious: whatever is due then
            case 86..<88:
                let back = stepsClockBack && rng.chance(0.4)
                d.now = back ? d.now - .minutes(Int64(rng.int(1...300))) : d.now + .minutes(Int64(rng.int(1...600)))
                d.send(.clockChanged)
            case 88..<92:
                let kind = rng.pick(Self.kindsToDeclare)
                let limit = changesBudgets ? rng.pick([-1, 0, 1, 3, 12]) : budgets[kind] ?? 3
                budgets[kind] = limit
                let definition = Self.randomDefinition(kind, limit: limit, rng: &rng)
                d.definitions.removeAll { $0.kind == kind }
                d.definitions.append(definition)
                d.send(.declare(definition))
            case 92..<94:
                let kind = rng.pick(Self.kindsToDeclare)
                d.definitions.removeAll { $0.kind == kind }
                d.send(.undeclare(kind: kind))
            case 94..<96:
                d.send(.providerFinished(WidgetID(kind: rng.pick(Self.kindsToDeclare), family: rng.pick(WidgetFamily.allCases)),
                                         .failed(reason: "stray", expired: false)))
            case 96..<98:
                if rng.chance(0.5) { d.send(.shutdown) }
                d.restart(at: d.now + .minutes(Int64(rng.int(0...600))))
            default:
                d.advance(by: .minutes(Int64(rng.int(1...360))))
            }
        }

        mutating func fire() {
            guard let t = d.machine.nextDeadline else {
                d.now = d.now + .minutes(Int64(rng.int(1...30)))
                d.send(.timerFired)
                return
            }
            d.now = max(d.now, t)
            d.send(.timerFired)
        }

        /// The outside checks, over the effects since the last call.
        mutating func audit(from start: Int) {
            for effect in d.effects[start...] {
                if case let .log(line) = effect { seen.insert(String(String(describing: line).prefix(12))) }
                switch effect {
                case let .publish(id, entry?):
                    if returned[id]?.contains(entry) != true {
                        Issue.record("published \(entry) for \(id), which no provider returned")
                    }
                case let .publish(id, nil):
                    counted[id] = nil  // withdrawn: a family placed again is a new widget, with a new budget
                case let .log(.providerAsked(id, _, exempt, used, _, _)) where !exempt && used != nil:
                    counted[id, default: []].append(d.now)
                default: break
                }
            }
        }
    }

    static func run(seed: UInt64, steps: Int, changesBudgets: Bool, stepsClockBack: Bool) {
        var walk = Walk(seed: seed, changesBudgets: changesBudgets, stepsClockBack: stepsClockBack)
        walk.d.effects.removeAll()
        for _ in 0..<steps {
            let mark = walk.d.effects.count
            walk.step()
            walk.audit(from: mark)
            if walk.d.effects.count > 10_000 { walk.d.effects.removeAll() }
        }
        for line in ["reload defer", "reload coale", "reload faile", "stale ", "fresh ", "published ", "timeline ",
                     "withdrawn "] where !walk.seen.contains(where: { $0.hasPrefix(line) }) {
            Issue.record("seed \(seed): the walk never logged \"\(line)...\" (budgets \(walk.budgets), seen \(walk.seen.sorted()))")
        }
        guard !changesBudgets, !stepsClockBack else { return }
        for (id, calls) in walk.counted {
            let limit = walk.budgets[id.kind] ?? 0
            var low = 0
            for high in calls.indices {
                while calls[low] + .hours(24) <= calls[high] { low += 1 }
                if high - low + 1 > limit {
                    Issue.record("seed \(seed): \(high - low + 1) counted calls of \(id) in 24 h up to \(calls[high]), budget \(limit)")
                    break
                }
            }
        }
    }

    @Test(arguments: 1...10 as ClosedRange<UInt64>)
    func fixedBudgetsForwardClock(seed: UInt64) {
        Self.run(seed: seed, steps: 2000, changesBudgets: false, stepsClockBack: false)
    }

    @Test(arguments: 100...109 as ClosedRange<UInt64>)
    func everything(seed: UInt64) {
        Self.run(seed: seed, steps: 2000, changesBudgets: true, stepsClockBack: true)
    }
}
