extension SchedulerCore {
    // The rules that hold right after an event is handled (`checkInvariants(after:at:)`): what
    // is due was launched, expired or held as its policy says; nothing waits that may go.

    func checkNoOverdueRun(at now: Instant, into violations: inout [InvariantViolation]) {
        Self.inKeyOrder(active, into: &violations) { runID, run, violations in
            switch run.phase {
            case .running where run.order.deadline <= now:
                violations.append(.init(.overdueRunNotExpired, identifier: run.order.identifier, runID: runID,
                                        "running past its deadline \(run.order.deadline) at \(now)"))
            case let .expiring(killAt) where killAt < now:
                violations.append(.init(.overdueRunNotExpired, identifier: run.order.identifier, runID: runID,
                                        "not killed at \(now), kill was due \(killAt)"))
            default:
                break
            }
        }
    }

    func checkNothingDueLeft(at now: Instant, into violations: inout [InvariantViolation]) {
        guard !isStopping, active.count < configuration.maxConcurrentRuns else { return }
        // The first live entry first (no array, no sort after every step): when it is not due,
        // nothing is (it has the earliest wake-up), the common case; the sorted walk below
        // reports what a due entry breaks.
        let firstLive = queue.firstLive()
        if firstLive.map({ $0.due > now.milliseconds }) ?? true {
            if let first = firstLive, let request = queue.request(at: first.slot), request.earliest <= now {
                violations.append(.init(.dueLeftInHeap, identifier: request.identifier,
                                        "first in the heap, earliest \(request.earliest) passed at \(now) with \(active.count) of \(configuration.maxConcurrentRuns) runs"))
            }
            return
        }
        // The first live entry is due: every due one is reported, in wake-up order.
        for entry in queue.liveHeapEntries.sorted() where entry.due <= now.milliseconds {
            violations.append(.init(.dueLeftInHeap, identifier: queue.identifier(of: entry),
                                    "wake-up \(Instant(milliseconds: entry.due)) passed at \(now) with \(active.count) of \(configuration.maxConcurrentRuns) runs"))
        }
    }

    func checkNoHeldPastRelease(at now: Instant, into violations: inout [InvariantViolation]) {
        Self.inKeyOrder(held, into: &violations) { identifier, h, violations in
            guard h.until <= now else { return }
            violations.append(.init(.heldPastRelease, identifier: identifier,
                                    "still held at \(now), released at \(h.until)"))
        }
    }

    func checkWaitingDisallowed(into violations: inout [InvariantViolation]) {
        guard !isStopping, active.count < configuration.maxConcurrentRuns else { return }
        for identifier in waitingOnConditions.keys.sorted() {
            guard let request = queue[identifier],
                  conditions.allow(power: request.requiresExternalPower, network: request.requiresNetworkConnectivity)
            else { continue }
            violations.append(.init(.waitingThoughAllowed, identifier: identifier,
                                    "waits although \(conditions) allows power \(request.requiresExternalPower), network \(request.requiresNetworkConnectivity)"))
        }
    }
}
