import Testing
@testable import RefreshdCore

/// Issue 33: the light snapshot (`snapshot(quietInstances: false, also:)`) finds what it keeps
/// without a pass over the instances (plain identifiers by their own index, a request's wake-up
/// from its record, its place from the side tables), and must show exactly what the full
/// snapshot shows of the same requests: same requests, order, place, wake-up and hold. Checked
/// after every step of seeded random walks over plain jobs and a template's instances: submits,
/// adds and removals, launches and ends, failures, pauses, conditions, the admission policy's
/// holds, clock changes and reloads with another accuracy (some past the record's 32-bit reach).
@Suite struct SnapshotLightPropertyTests {
    static let start = Instant(milliseconds: 1_800_000_000_000)
    static let keys = (0..<10).map { "k\($0)" }
    /// Accuracy windows of a reload: none, minutes, and one past 2^32 ms (the overflow's).
    static let accuracies: [Duration] = [.zero, .seconds(300), .seconds(60 * 86_400)]

    /// The full snapshot's requests that the light one keeps: plain identifiers', and the
    /// instances' that fail, are paused or are asked for.
    static func kept(_ full: SchedulerSnapshot, of core: SchedulerCore, also: [String]) -> [SchedulerSnapshot.Pending] {
        let ids = core.queue.identifiers
        let shown = Set(full.failureStreaks.map(\.identifier) + (full.paused ?? []).map(\.identifier) + also)
        return full.pending.filter { p in
            guard let slot = ids.slot(of: p.identifier), ids.isInstance(slot) else { return true }
            return shown.contains(p.identifier)
        }
    }

    struct Walk {
        var rng: SplitMix64
        var core: SchedulerCore
        var now = SnapshotLightPropertyTests.start
        var armed: Instant?
        var running: [Int64] = []
        var plain: [TaskDefinition]
        var template: TaskDefinition
        var failures: [String] = []
        /// The places of the instances' requests the light snapshot kept, and whether one woke
        /// past the record's reach.
        var seen: Set<String> = []
        var steps = 0
        let seed: UInt64

        init(seed: UInt64) {
            self.seed = seed
            rng = SplitMix64(seed: seed)
            plain = SchedulerCoreInvariantTests.randomDefinitions(&rng)
                + [TaskDefinition(identifier: "odd[x]", kind: .processing), TaskDefinition(identifier: "feed[k1]#small")]
            template = TaskDefinition(
                identifier: "feed", kind: .processing, namespace: "feed", allowance: .seconds(Int64(rng.int(30...1800))),
                resubmit: .after(.seconds(Int64(rng.int(60...7200)))), retry: RetryPolicy(initial: .seconds(60), limit: 3),
                requiresExternalPower: rng.chance(0.5), requiresNetworkConnectivity: rng.chance(0.5),
                accuracy: rng.pick(SnapshotLightPropertyTests.accuracies))
            let configuration = SchedulerConfiguration(maxConcurrentRuns: rng.int(1...3), maxPendingAppRefresh: rng.int(1...3),
                                                       maxPendingProcessing: rng.int(2...10), seed: rng.next())
            core = SchedulerCore(configuration: configuration, definitions: plain)
            _ = core.handle(.declareTemplate(template, TemplateSpec(parameters: ["user"])), at: now)
            if rng.chance(0.6) {
                core.admissionPolicy = SchedulerCoreInvariantTests.Discretion(
                    step: Int64(rng.pick([60_000, 900_000])), odds: UInt64(rng.int(2...3)))
            }
        }

        mutating func fail(_ message: String) {
            if failures.count < 10 { failures.append("seed \(seed) step \(steps) at \(now): \(message)") }
        }

        /// Notes the effects, then compares the light snapshot with the full one filtered.
        mutating func after(_ effects: [SchedulerEffect]) {
            steps += 1
            for effect in effects {
                switch effect {
                case let .armTimer(at): armed = at
                case .disarmTimer: armed = nil
                case let .launch(order): running.append(order.runID)
                default: break
                }
            }
            let instances = SnapshotLightPropertyTests.keys.map { "feed[\($0)]" }
            let also = rng.chance(0.5) ? [] : (0..<rng.int(1...3)).map { _ in rng.pick(instances + ["feed[none]", "undeclared"]) }
            let light = core.snapshot(quietInstances: false, also: also)
            var expected = core.snapshot()
            expected.pending = SnapshotLightPropertyTests.kept(expected, of: core, also: also)
            if light != expected {
                fail("light \(light.pending) != full, filtered \(expected.pending)")
            }
            for v in core.checkInvariants() { fail("\(v)") }
            for p in light.pending where p.identifier.hasPrefix("feed[") && p.identifier.hasSuffix("]") {
                seen.insert(p.place.map { "\($0)" } ?? "nowhere")
                if let wake = p.wake, wake.milliseconds - p.earliest.milliseconds >= Int64(UInt32.max) { seen.insert("overflow") }
            }
        }

        mutating func send(_ event: SchedulerEvent) {
            if case let .runFinished(runID, _, _, _) = event { running.removeAll { $0 == runID } }
            if event == .timerFired { armed = nil }
            after(core.handle(event, at: now))
        }

        /// Calls a core method that throws (a refusal is fine) and checks after it.
        mutating func call(_ body: (inout SchedulerCore, inout [SchedulerEffect]) throws -> Void) {
            var effects: [SchedulerEffect] = []
            try? body(&core, &effects)
            after(effects)
        }

        mutating func step() {
            let instance = "feed[\(rng.pick(SnapshotLightPropertyTests.keys))]"
            let at = now
            switch rng.int(0...99) {
            case 0..<12:
                let id = rng.pick(plain).identifier
                let earliest = at + .seconds(Int64(rng.int(-600...10_800)))
                call { core, effects in try core.submit(TaskRequest(identifier: id, earliestBeginDate: earliest), at: at, into: &effects) }
            case 12..<22:
                let earliest = at + .seconds(Int64(rng.int(-600...10_800)))
                call { core, effects in
                    try core.submit(TaskRequest(identifier: instance, kind: .processing, earliestBeginDate: earliest), at: at, into: &effects)
                }
            case 22..<30:
                let key = String(instance.dropFirst(5).dropLast())
                send(.addInstance(InstanceRecord(template: "feed", key: key, values: ["user": key])))
            case 30..<33:
                send(.removeInstance(template: "feed", key: String(instance.dropFirst(5).dropLast())))
            case 33..<50:
                if let t = armed { now = max(now, t) }
                send(.timerFired)
            case 50..<56:
                now = now + .seconds(Int64(rng.int(1...3600)))
                send(.timerFired)
            case 56..<70:
                guard !running.isEmpty else { return }
                let exit: RunExit = rng.pick([.exited(0), .exited(1), .completed(success: false), .signaled(9)])
                send(.runFinished(runID: rng.pick(running), exit: exit))
            case 70..<77:
                send(.conditionsChanged(Conditions(externalPower: rng.chance(0.5), network: rng.chance(0.5))))
            case 77..<85:
                let id = rng.pick([instance, instance, "feed", rng.pick(plain).identifier])
                call { core, effects in
                    if core.paused[id] != nil { try core.resume(id, at: at, into: &effects) } else { try core.pause(id, at: at, into: &effects) }
                }
            case 85..<88:
                send(.cancel(identifier: rng.pick([instance, rng.pick(plain).identifier])))
            case 88..<94:
                // A reload with another accuracy (of a plain job or of the template).
                let accuracy = rng.pick(SnapshotLightPropertyTests.accuracies)
                if rng.chance(0.5) {
                    var definition = rng.pick(plain)
                    definition.accuracy = accuracy
                    send(.declare(definition))
                } else {
                    template.accuracy = accuracy
                    send(.declareTemplate(template, TemplateSpec(parameters: ["user"])))
                }
            case 94..<97:
                let expected = now
                now = now + .seconds(Int64(rng.int(60...6 * 3600)))
                send(.clockChanged(expected: expected))
            default:
                let definition = rng.pick(plain)
                send(core.definitions[definition.identifier] == nil ? .declare(definition) : .undeclare(identifier: definition.identifier))
            }
        }
    }

    @Test func theLightSnapshotIsTheFullOneFiltered() {
        var seen: Set<String> = []
        var steps = 0
        for seed in UInt64(1)...30 {
            var walk = Walk(seed: seed &* 0x9E37_79B9 &+ 33)
            for _ in 0..<300 { walk.step() }
            for failure in walk.failures { Issue.record("\(failure)") }
            seen.formUnion(walk.seen)
            steps += walk.steps
        }
        // The walks reach every place with an instance kept, and a wake-up past 2^32 ms.
        #expect(seen.isSuperset(of: ["queued", "waitingOnConditions", "blockedByRun", "held", "paused", "overflow"]), "\(seen)")
        #expect(steps > 6_000)
    }
}
