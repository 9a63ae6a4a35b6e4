/// Runs in flight and their clock: a run starts with a deadline (its allowance), gets its
/// expiration at the deadline, is killed when its grace is over, and ends when the host says so.
///
/// The scheduler core owns one; the widget-timeline and live-activity machines to come reuse it
/// for provider runs and reloads, so every kind of run expires and is killed by the same rules.
/// It is keyed by run id, with at most one run per key (an identifier).
package struct RunLifecycle: Sendable {
    /// A run in flight.
    package struct ActiveRun: Sendable {
        package enum Phase: Sendable, Hashable {
            case running
            /// Expiration delivered; killed at this instant if still running.
            case expiring(killAt: Instant)
            /// Kill sent; waiting for the host to report the end.
            case killed
        }
        package var order: LaunchOrder
        package var phase: Phase = .running
        package var stoppedByShutdown = false

        package init(order: LaunchOrder) { self.order = order }

        /// Whether the expiration went out: every phase after `running` follows it.
        package var expirationDelivered: Bool { phase != .running }

        /// When this run must be looked at again without an outside event.
        var deadline: Instant? {
            switch phase {
            case .running: order.deadline
            case let .expiring(killAt): killAt
            case .killed: nil
            }
        }
    }

    var active: [Int64: ActiveRun] = [:]
    var byKey: [String: Int64] = [:]

    package init() {}

    package var count: Int { active.count }
    package var isEmpty: Bool { active.isEmpty }

    /// The run in flight for a key (identifier), if any.
    package func run(for key: String) -> Int64? { byKey[key] }

    /// Starts tracking a launched run.
    package mutating func start(_ order: LaunchOrder) {
        active[order.runID] = ActiveRun(order: order)
        byKey[order.identifier] = order.runID
    }

    /// Stops tracking a run that ended; nil if it was not in flight (a late or repeated report).
    package mutating func end(_ runID: Int64) -> ActiveRun? {
        guard let run = active.removeValue(forKey: runID) else { return nil }
        if byKey[run.order.identifier] == runID { byKey.removeValue(forKey: run.order.identifier) }
        return run
    }

    /// The earliest deadline or kill instant of the runs in flight.
    package var nextDeadline: Instant? {
        var next: Instant?
        for run in active.values {
            if let t = run.deadline, next == nil || t < next! { next = t }
        }
        return next
    }

    /// What falls due at `now`, in run-id order: expirations whose allowance is over, kills
    /// whose grace is over. Appends the log lines and the host's orders.
    package mutating func expireOverdue(at now: Instant, grace: (String) -> Duration,
                                       into effects: inout [SchedulerEffect]) {
        // Most wake-ups find nothing overdue: then no sorted copy of the run ids is made.
        guard let next = nextDeadline, next <= now else { return }
        for runID in active.keys.sorted() {
            guard var run = active[runID] else { continue }
            switch run.phase {
            case .running where run.order.deadline <= now:
                run.phase = .expiring(killAt: now + grace(run.order.identifier))
                effects.append(.log(.expirationDelivered(runID: runID, identifier: run.order.identifier)))
                effects.append(.expire(runID: runID))
            case let .expiring(killAt) where killAt <= now:
                run.phase = .killed
                effects.append(.log(.killed(runID: runID, identifier: run.order.identifier)))
                effects.append(.kill(runID: runID))
            default:
                break
            }
            active[runID] = run
        }
    }

    /// A stop: every running run gets its expiration now and is killed after its grace.
    package mutating func expireAll(at now: Instant, grace: (String) -> Duration, into effects: inout [SchedulerEffect]) {
        for runID in active.keys.sorted() {
            guard var run = active[runID] else { continue }
            if case .running = run.phase {
                run.phase = .expiring(killAt: now + grace(run.order.identifier))
                run.stoppedByShutdown = true
                effects.append(.expire(runID: runID))
            }
            active[runID] = run
        }
    }

    /// The outcome of a run: the host reports what happened, the lifecycle knows why. A run
    /// the kernel killed a process of over its memory limit (`usage.memoryLimitKills`) is
    /// `crashed`, whatever its leader's exit said (a shell reports its child's SIGKILL as
    /// status 137), unless refreshd had already ended it (stop, expiration).
    package static func outcome(of run: ActiveRun, exit: RunExit, usage: RunUsage = .none) -> Outcome {
        if run.stoppedByShutdown { return .interrupted }
        if run.expirationDelivered { return .expired }
        if usage.memoryLimitKills > 0 { return .crashed }
        switch exit {
        case .exited(0): return .success
        case .exited: return .failure
        case .signaled: return .crashed
        case let .completed(success): return success ? .success : .failure
        case .abandoned: return .expired
        case .spawnFailed, .noHandler: return .failure
        }
    }

    /// Why a run ended as it did, in words, when the outcome and the exit do not say it: "memory
    /// limit" for a run crashed by its memory limit; nil otherwise.
    package static func reason(outcome: Outcome, usage: RunUsage) -> String? {
        outcome == .crashed && usage.memoryLimitKills > 0 ? RunUsage.memoryLimitReason : nil
    }
}
