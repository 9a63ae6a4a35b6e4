extension SchedulerCore {
    /// The earliest begin date of the job's next request, made at a launch (`now`) of `request`.
    ///
    /// `after(d)`: launch + d. `calendar`: the next slot after the launch, so missed slots are
    /// skipped; with `missed: all`, the next slot after the one just run, so missed slots are
    /// replayed (within the catch-up window). Either way the base is at or after the slot just
    /// run, so a slot never runs twice, even after the clock steps back. Jitter is added last.
    func nextEarliest(_ definition: TaskDefinition, after request: PendingRequest, launchedAt now: Instant) -> Instant? {
        switch definition.resubmit {
        case .none:
            return nil
        case let .after(interval):
            let base = now + interval
            return base + jitter(definition, slot: base)
        case let .calendar(schedule):
            let base = definition.missed == .all ? slot(of: request, definition) : now
            guard var next = schedule.next(after: base) else { return nil }
            if definition.missed == .all, next < now - definition.catchUp {
                guard let inWindow = schedule.next(after: now - definition.catchUp - .milliseconds(1)) else { return nil }
                next = inWindow
            }
            return next + jitter(definition, slot: next)
        }
    }

    /// The calendar slot a request stands for: the slot in [earliest - jitter, earliest], or the
    /// earliest begin date itself for a request that is not on a slot (submitted by hand).
    func slot(of request: PendingRequest, _ definition: TaskDefinition) -> Instant {
        guard let schedule = definition.schedule,
              let candidate = schedule.next(after: request.earliest - definition.jitter - .milliseconds(1)),
              candidate <= request.earliest
        else { return request.earliest }
        return candidate
    }

    /// A seeded delay in [0, jitter): per slot, or per job with `fixedJitter`.
    func jitter(_ definition: TaskDefinition, slot: Instant) -> Duration {
        let span = definition.jitter.wholeMilliseconds
        guard span > 0 else { return .zero }
        var key = Self.mix(configuration.seed ^ Self.stableHash(definition.identifier))
        if !definition.fixedJitter { key = Self.mix(key ^ UInt64(bitPattern: slot.milliseconds)) }
        return .milliseconds(Int64(key % UInt64(span)))
    }

    /// When to wake for a request: the end of its accuracy window (its latest allowed start).
    ///
    /// Each wake-up launches every request whose earliest begin date has passed, so requests due
    /// within one accuracy window of the first share its wake-up: 1,000 requests due at scattered
    /// seconds of a minute, with accuracy 1m, make one wake-up.
    ///
    /// `queueSlot`, when known, finds the definition by slot (nothing hashed) where the queue
    /// shares the definitions' table.
    func wakeKey(_ request: PendingRequest, queueSlot: Int32? = nil) -> Int64 {
        let accuracy: Duration
        if let queueSlot, queue.ids.sharesNames(with: definitions.table) {
            accuracy = definitions.accuracy(at: queueSlot) ?? .zero
        } else {
            accuracy = definitions[request.identifier]?.accuracy ?? .zero
        }
        return (request.earliest + max(.zero, accuracy)).milliseconds
    }

    /// Applies missed-slot policies to calendar requests whose slot passed in `(since, now]`
    /// (`since` nil: any time before now, i.e. while refreshd was down), of the identifiers
    /// `only` accepts (all by default). A paused identifier's slots wait for its resume, which
    /// applies its policy to every slot passed since.
    mutating func applyMissedPolicies(since: Instant?, at now: Instant, only: ((String) -> Bool)? = nil,
                                      into effects: inout [SchedulerEffect]) {
        for request in queue.sorted(earliestThrough: now) {
            guard request.earliest <= now, since.map({ request.earliest > $0 }) ?? true,
                  only?(request.identifier) ?? true, pausedBy(request.identifier) == nil,
                  let definition = definitions[request.identifier], let schedule = definition.schedule
            else { continue }
            let first = slot(of: request, definition)
            let count = max(1, schedule.count(from: first, through: now))
            tally(request.identifier, at: now, into: &effects) { $0.missed += count }
            switch definition.missed {
            case .once:
                effects.append(.log(.missedSlots(identifier: request.identifier, count: count, policy: .once, next: now)))
            case .skip:
                let next = schedule.next(after: now)
                effects.append(.log(.missedSlots(identifier: request.identifier, count: count, policy: .skip, next: next)))
                if let next {
                    enqueueLogged(makePending(definition, earliest: next + jitter(definition, slot: next), at: now,
                                              origin: request.origin), into: &effects)
                } else {
                    cancel(request.identifier, into: &effects)
                }
            case .all:
                var from = first
                if from < now - definition.catchUp, let inWindow = schedule.next(after: now - definition.catchUp - .milliseconds(1)) {
                    from = inWindow
                    enqueueLogged(makePending(definition, earliest: from + jitter(definition, slot: from), at: now,
                                              origin: request.origin), into: &effects)
                }
                let replay = from <= now ? schedule.count(from: from, through: now) : 0
                effects.append(.log(.missedSlots(identifier: request.identifier, count: count, policy: .all,
                                                 next: replay > 0 ? from : schedule.next(after: now))))
            }
        }
    }

    /// FNV-1a of the text: stable across runs and machines, unlike `Hasher`, so seeds and jitter
    /// derived from names repeat.
    package static func stableHash(_ text: String) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 { h = (h ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return h
    }

    /// SplitMix64's finaliser.
    static func mix(_ x: UInt64) -> UInt64 { SplitMix64.mix(x) }
}
