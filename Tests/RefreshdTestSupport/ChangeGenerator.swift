import RefreshdCore

/// Random batches of state changes around a UTC midnight, mostly valid, some refused: ends of
/// unknown, ended or mismatched runs, duplicate run ids, processes of unknown runs; and prunes
/// of the run history at random instants (after which records of pruned runs are refused too).
///
/// It follows what was committed (`batch()` then `committed(_:)` if the stores took it), so
/// most ends and process records hit a run that is open at that point of the batch.
package struct ChangeGenerator {
    /// Includes a pair equal to Swift's `==` but not to SQLite (é precomposed and decomposed),
    /// and a pair differing only by case.
    package static let identifiers = [
        "com.example.feed", "com.example.backup", "mail", "caf\u{E9}", "cafe\u{301}", "Zeta", "zeta",
    ]

    private struct Runs {
        var all: [(id: Int64, identifier: String)] = []
        var open: [(id: Int64, identifier: String)] = []
        var next: Int64 = 1
    }

    private var random: SplitMix64
    /// Runs as committed, and as the batch being made would leave them.
    private var committedRuns = Runs()
    private var runs = Runs()

    package init(seed: UInt64) { random = SplitMix64(seed: seed) }

    /// 0 to 6 changes; about one batch in four has a change the stores must refuse.
    package mutating func batch() -> [StateChange] {
        runs = committedRuns
        return (0..<random.int(0...6)).map { _ in change(valid: !random.chance(0.06)) }
    }

    /// The stores took the last batch.
    package mutating func committed() { committedRuns = runs }

    private mutating func change(valid: Bool) -> StateChange {
        switch random.int(0...99) {
        case 0..<18: .savePending(pending())
        case 18..<26: deletePending()
        case 26..<44: .runStarted(run(valid: valid))
        case 44..<66: runEnded(valid: valid)
        case 66..<74: failureStreak()
        case 74..<82: counters()
        case 82..<88: processStarted(valid: valid)
        case 88..<92: random.chance(0.7)
            ? .putRecord(MachineRecord(table: random.pick(["widget", "activity", "Widget"]), key: identifier(),
                                       value: random.pick(["{}", "{\"a\":1}", "", "é"])))
            : .deleteRecord(table: random.pick(["widget", "activity"]), key: identifier())
        case 92..<96: .pruneRuns(endedBefore: instant())
        case 96..<98: runOutput()
        default: seedSpec()
        }
    }

    private mutating func identifier() -> String { random.pick(Self.identifiers) }

    /// A slot hint (`SlotHint`) for an identifier: mostly its index in `identifiers` (a core's
    /// slot), sometimes another identifier's (a hint from another table: the one of the pair
    /// `café`/`cafe\u{301}` that compares equal as Swift strings included), none, or far out.
    private mutating func hint(for identifier: String) -> SlotHint {
        let own = Int32(Self.identifiers.firstIndex(of: identifier)!)
        switch random.int(0...9) {
        case 0...5: return SlotHint(own)
        case 6, 7: return SlotHint(Int32(random.int(0...(Self.identifiers.count - 1))))
        case 8: return SlotHint(Int32(random.int(50...70)))
        default: return .none
        }
    }

    /// A random identifier and a random hint for it.
    private mutating func hinted() -> (String, SlotHint) {
        let identifier = identifier()
        return (identifier, hint(for: identifier))
    }

    private mutating func deletePending() -> StateChange {
        let (identifier, hint) = hinted()
        return .deletePending(identifier: identifier, slot: hint)
    }

    private mutating func failureStreak() -> StateChange {
        let (identifier, hint) = hinted()
        return .failureStreak(identifier: identifier, count: random.int(-1...4), slot: hint)
    }

    private mutating func counters() -> StateChange {
        let (identifier, hint) = hinted()
        var counter = DailyCounter(day: ISO8601.day(instant()), identifier: identifier,
                                   launches: random.int(0...5), successes: random.int(0...3),
                                   failures: random.int(0...2), expired: random.int(0...1),
                                   crashed: random.int(0...1), interrupted: random.int(0...1),
                                   missed: random.int(0...5))
        counter.slot = hint
        return .counters(counter)
    }

    private mutating func seedSpec() -> StateChange {
        let (identifier, hint) = hinted()
        return .seedSpec(identifier: identifier, spec: random.pick(["", "2026-11-22 04:00", "daily", "+1h"]), slot: hint)
    }

    /// 2026-11-21T22:00Z ± 5 h (crossing midnight), now and then days away or far off.
    private mutating func instant() -> Instant {
        let base = ISO8601.days(year: 2026, month: 11, day: 21) * 86_400_000 + 22 * 3_600_000
        switch random.int(0...19) {
        case 0: return Instant(milliseconds: base + Int64(random.int(-5...5)) * 86_400_000)
        case 1: return random.pick([Instant(milliseconds: 0), Instant(milliseconds: -1), .latest, .earliest])
        default: return Instant(milliseconds: base + Int64(random.int(-18_000_000...18_000_000)))
        }
    }

    private mutating func pending() -> PendingRequest {
        // Small sequences and repeated instants make ties; a sequence past Int64.max sorts first
        // in SQLite (stored as its bit pattern).
        let sequence: UInt64 = random.chance(0.1) ? UInt64.max - UInt64(random.int(0...2)) : UInt64(random.int(0...4))
        let earliest = random.chance(0.3) ? Instant(milliseconds: 1_795_000_000_000) : instant()
        var request = PendingRequest(
            identifier: identifier(), namespace: random.pick(["ns", "other"]), kind: random.pick(TaskKind.allCases),
            earliest: earliest, submitted: instant(), sequence: sequence,
            requiresExternalPower: random.chance(0.5), requiresNetworkConnectivity: random.chance(0.5),
            origin: random.pick(PendingRequest.Origin.allCases))
        request.slot = hint(for: request.identifier)
        return request
    }

    private mutating func run(valid: Bool) -> RunRecord {
        let id: Int64
        if !valid, !runs.all.isEmpty {
            id = random.pick(runs.all).id  // a duplicate
        } else {
            switch random.int(0...9) {
            case 0: id = Int64(random.int(-3...0)) - Int64(runs.all.count) * 10  // SQLite takes any integer
            case 1: id = runs.next + Int64(random.int(2...20))  // a gap, and later ids below it
            default: id = runs.next
            }
        }
        let identifier = identifier()
        let started = instant()
        let alreadyEnded = random.chance(0.1)
        if valid {
            runs.next = max(runs.next, id + 1)
            runs.all.append((id, identifier))
            if !alreadyEnded { runs.open.append((id, identifier)) }
        }
        var record = RunRecord(
            runID: id, identifier: identifier, kind: random.pick(TaskKind.allCases), submitted: instant(),
            earliest: instant(), started: started, deadline: started + .seconds(random.int(1...600)),
            attempt: random.int(1...4), ended: alreadyEnded ? instant() : nil,
            outcome: alreadyEnded ? random.pick(Outcome.allCases) : nil,
            exitStatus: random.chance(0.2) ? Int32(random.int(-1...255)) : nil,
            signal: random.chance(0.1) ? random.pick([9, 15, Int32.min, Int32.max]) : nil,
            processGroup: random.chance(0.2) ? Int32(random.int(1...99_999)) : nil,
            processStartTicks: random.chance(0.2) ? random.pick([0, 12_345, UInt64.max]) : nil)
        record.slot = hint(for: identifier)
        return record
    }

    /// A run's kept output (issue 33): of a run known, pruned or never started (no error in
    /// any store), lines with an empty one, a NUL and non-ASCII text, or nothing.
    private mutating func runOutput() -> StateChange {
        let id = runs.all.isEmpty || random.chance(0.2) ? runs.next + Int64(random.int(0...5)) : random.pick(runs.all).id
        let output = random.chance(0.2) ? RunOutput.none
            : RunOutput(lines: random.pick([[], ["one"], ["", "caf\u{E9}", "a\0b"], ["x  y", ""]]),
                        earlier: random.pick([0, 0, 3, 1_000_000]),
                        results: random.pick([[], ["{\"a\":1}"], ["{}", "{\"b\":\"\\n\"}"]]))
        return .runOutput(runID: id, output: output)
    }

    private mutating func runEnded(valid: Bool) -> StateChange {
        if valid, runs.open.isEmpty { return .runStarted(run(valid: true)) }
        let outcome = random.pick(Outcome.allCases)
        let ended = instant()
        let exitStatus = outcome == .failure ? Int32(random.int(1...255)) : nil
        let signal = outcome == .crashed ? random.pick([9, 11, Int32.max]) : nil
        if valid {
            let (id, identifier) = runs.open.remove(at: random.int(0...(runs.open.count - 1)))
            // What the run used (issue 35), where measured; the memory-limit reason of a crash.
            let usage = random.chance(0.5) ? RunUsage.none
                : RunUsage(cpuMicroseconds: random.pick([0, 212_345, Int64.max]),
                           peakMemoryBytes: random.chance(0.3) ? nil : random.pick([1, 33_554_432, Int64.max]))
            let reason = outcome == .crashed && random.chance(0.5) ? RunUsage.memoryLimitReason : nil
            return .runEnded(runID: id, identifier: identifier, ended: ended, outcome: outcome,
                             exitStatus: exitStatus, signal: signal, reason: reason, usage: usage)
        }
        // An ended run, an unknown run, or an open run under another identifier: all refused
        // (unless the other identifier happens to be the run's own).
        let (id, identifier): (Int64, String) = switch random.int(0...2) {
        case 0 where !runs.all.isEmpty: random.pick(runs.all)
        case 1 where !runs.open.isEmpty: (random.pick(runs.open).id, self.identifier())
        default: (runs.next + Int64(random.int(0...5)), self.identifier())
        }
        return .runEnded(runID: id, identifier: identifier, ended: ended, outcome: outcome,
                         exitStatus: exitStatus, signal: signal)
    }

    private mutating func processStarted(valid: Bool) -> StateChange {
        if valid, runs.all.isEmpty { return .runStarted(run(valid: true)) }
        let id = !valid ? runs.next + Int64(random.int(0...5)) : random.pick(runs.all).id
        return .processStarted(runID: id, processGroup: random.pick([1, 4242, Int32.max, -5]),
                               startTicks: random.chance(0.3) ? nil : random.pick([0, 99, UInt64.max]))
    }
}

/// The core's seeded generator: each seed's batches are the same on every run.
