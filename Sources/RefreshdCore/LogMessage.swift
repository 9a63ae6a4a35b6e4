/// One line of the daemon's log, as data; the shell formats it with the time.
package enum LogMessage: Sendable, Hashable, CustomStringConvertible {
    case submitted(PendingRequest, replaced: Bool)
    case rejected(identifier: String, SchedulerError)
    case cancelled(identifier: String)
    case launched(LaunchOrder, lateness: Duration)
    case waitingForConditions(identifier: String, needsPower: Bool, needsNetwork: Bool)
    case expirationDelivered(runID: Int64, identifier: String)
    case killed(runID: Int64, identifier: String)
    /// A run ended: `reason` when the outcome needs one ("memory limit"), `usage` what it used.
    case finished(runID: Int64, identifier: String, outcome: Outcome, exit: RunExit, duration: Duration,
                  reason: String? = nil, usage: RunUsage = .none)
    case retryScheduled(identifier: String, attempt: Int, at: Instant)
    case retriesExhausted(identifier: String, attempts: Int)
    case recoveredInterrupted(runID: Int64, identifier: String)
    case droppedUndeclared(identifier: String)
    case conditions(Conditions)
    case stopping(running: Int)
    case missedSlots(identifier: String, count: Int, policy: MissedPolicy, next: Instant?)
    case clockChanged(Instant, expected: Instant)
    /// A due request the admission policy holds back until an instant.
    case held(identifier: String, until: Instant)
    /// An operator paused a job, an instance or a template (`template`: its instances too).
    case paused(identifier: String, template: Bool)
    /// An operator resumed it, after this long paused.
    case resumed(identifier: String, pausedFor: Duration)
    /// Something the widget timeline machine did (published, reload asked or deferred, stale).
    case timeline(TimelineLog)
    /// Something the live activity machine did (a transition, a held or ignored update).
    indirect case activity(ActivityLog)
    /// An instance of a template added, kept, removed or refused.
    case instance(InstanceLog)
    /// A failure or recovery notification delivered, retried, given up or dropped.
    indirect case notification(NotificationLog)
    /// The runtime's own decisions (`RuntimeLog`: a run's processes, results and output,
    /// publications, reloads, the store's failure, the stop), worded by its machine.
    indirect case runtime(RuntimeLog)

    package var description: String {
        switch self {
        case let .submitted(p, replaced):
            "\(replaced ? "replaced" : "submitted") \(p.identifier) (\(p.kind.rawValue), \(p.origin.rawValue)) earliest \(p.earliest)"
        case let .rejected(id, error):
            "rejected \(id): \(error)"
        case let .cancelled(id):
            "cancelled \(id)"
        case let .launched(order, lateness):
            "launched \(order.identifier) run \(order.runID) attempt \(order.attempt), deadline \(order.deadline), \(formatDuration(lateness)) after earliest"
        case let .waitingForConditions(id, power, network):
            "waiting \(id): needs \([power ? "external power" : nil, network ? "network" : nil].compactMap { $0 }.joined(separator: " and "))"
        case let .expirationDelivered(runID, id):
            "expired \(id) run \(runID): allowance used up, expiration delivered"
        case let .killed(runID, id):
            "killed \(id) run \(runID): grace period over"
        case let .finished(runID, id, outcome, exit, duration, reason, usage):
            "finished \(id) run \(runID): \(outcome.rawValue) (\(reason.map { "\($0), " } ?? "")\(describe(exit))) after "
                + formatDuration(duration) + (usage.summary.map { "; \($0)" } ?? "")
        case let .retryScheduled(id, attempt, at):
            "retry \(id) attempt \(attempt) at \(at)"
        case let .retriesExhausted(id, attempts):
            "retries exhausted for \(id) after \(attempts) attempts"
        case let .recoveredInterrupted(runID, id):
            "interrupted \(id) run \(runID): refreshd stopped during the run"
        case let .droppedUndeclared(id):
            "dropped pending request \(id): no longer declared"
        case let .conditions(c):
            "conditions: external power \(c.externalPower ? "yes" : "no"), network \(c.network ? "yes" : "no")"
        case let .missedSlots(id, count, policy, next):
            switch policy {
            case .once: "missed \(count) slot\(count == 1 ? "" : "s") of \(id): running once now"
            case .skip: "missed \(count) slot\(count == 1 ? "" : "s") of \(id): skipped, next \(next.map(\.iso8601) ?? "never")"
            case .all: "missed \(count) slot\(count == 1 ? "" : "s") of \(id): replaying from \(next.map(\.iso8601) ?? "never")"
            }
        case let .clockChanged(now, expected):
            "wall clock changed by \(formatDuration(now.duration(since: expected))): now \(now), expected \(expected)"
        case let .held(id, until):
            "held \(id): due, admitted at \(until) at the earliest"
        case let .paused(id, template):
            "paused \(id)\(template ? " and its instances" : ""): its pending request is kept, nothing launches until it is resumed"
        case let .resumed(id, pausedFor):
            "resumed \(id) after \(formatDuration(pausedFor)) paused"
        case let .stopping(running):
            "stopping: \(running) run\(running == 1 ? "" : "s") in flight"
        case let .timeline(log):
            log.description
        case let .notification(log):
            log.description
        case let .activity(log):
            log.description
        case let .instance(log):
            log.description
        case let .runtime(log):
            log.description
        }
    }

    private func describe(_ exit: RunExit) -> String {
        switch exit {
        case let .exited(code): "exit \(code)"
        case let .signaled(sig): "signal \(sig)"
        case let .completed(success): "completed success=\(success)"
        case .abandoned: "abandoned"
        case let .spawnFailed(reason): "could not start: \(reason)"
        case .noHandler: "no handler registered"
        }
    }
}

/// `1.234s`, `250ms`, `2h03m`: compact and readable.
package func formatDuration(_ d: Duration) -> String {
    let ms = d.wholeMilliseconds
    let sign = ms < 0 ? "-" : ""
    let a = ms == Int64.min ? Int64.max : abs(ms)
    if a < 1000 { return "\(sign)\(a)ms" }
    if a < 60_000 { return "\(sign)\(a / 1000).\(String(a % 1000 + 1000).dropFirst())s" }
    if a < 3_600_000 { return "\(sign)\(a / 60_000)m\(String(a / 1000 % 60 + 100).dropFirst())s" }
    return "\(sign)\(a / 3_600_000)h\(String(a / 60_000 % 60 + 100).dropFirst())m"
}
