import Foundation
import RefreshdConfig
import RefreshdCore
import RefreshdRuntime

/// What the failure notifications came to in a simulation (issue 25): counted from the
/// runtime's observations, so kills and restarts (which restore held notifications) count once.
package struct NotificationFigures: Codable, Sendable, Equatable {
    /// Failure notifications written (one per failed run of a job with `on-failure:`).
    package var failure = 0
    /// Recovery notifications written.
    package var recovery = 0
    package var delivered = 0
    /// Attempts that failed and were tried again.
    package var retries = 0
    package var givenUp = 0
    /// Dropped unsent (more than `NotificationMachine.maxHeld` waiting).
    package var dropped = 0
    /// Still waiting at the simulation's end.
    package var held = 0

    package init() {}
}

/// Counts notification observations by id, behind a lock (observers run on any thread).
final class NotificationTally: @unchecked Sendable {
    private let lock = NSLock()
    private var kinds: [String: RunNotification.Kind] = [:]
    private var figures = NotificationFigures()

    func record(_ o: RuntimeObservation) {
        guard case let .notification(log)? = o.logMessage else { return }
        lock.withLock {
            let n = log.notification
            kinds[n.id] = n.kind
            switch log {
            case .delivered: figures.delivered += 1
            case .retrying: figures.retries += 1
            case .gaveUp: figures.givenUp += 1
            case .dropped: figures.dropped += 1
            }
        }
    }

    /// The figures at the end, or nil when no job notifies (the report leaves them out).
    func figures(_ sim: Simulation) -> NotificationFigures? {
        guard sim.scenario.jobs.contains(where: { !$0.spec.notifiers.isEmpty }) else { return nil }
        return lock.withLock {
            var figures = self.figures
            var kinds = self.kinds
            let held = sim.host.runtime?.heldNotifications ?? []
            for n in held { kinds[n.id] = n.kind }
            figures.held = held.count
            figures.failure = kinds.values.filter { $0 == .failure }.count
            figures.recovery = kinds.values.filter { $0 == .recovery }.count
            return figures
        }
    }

    /// The modelled receiver: every attempt fails inside a `notifier-down` span, the rest are
    /// delivered at once.
    static func receiver(_ scenario: Scenario) -> @Sendable (RunNotification, Instant) -> NotificationOutcome {
        let spans = scenario.faults.compactMap { fault -> (Instant, Instant)? in
            guard case let .notifierDown(span) = fault else { return nil }
            let start = span.start.instant(start: scenario.start)
            return (start, start + span.duration)
        }
        guard !spans.isEmpty else { return { _, _ in .delivered } }
        return { _, now in
            spans.contains { now >= $0.0 && now < $0.1 } ? .failed("receiver down (notifier-down fault)") : .delivered
        }
    }
}

extension SimulationReport {
    /// `notifications: 3 failure, 1 recovery; 4 delivered, 5 retries, 0 given up, 0 dropped`.
    var notificationText: [String] {
        guard let n = notifications else { return [] }
        return ["", "notifications: \(n.failure) failure, \(n.recovery) recovery; \(n.delivered) delivered, "
            + "\(n.retries) retr\(n.retries == 1 ? "y" : "ies"), \(n.givenUp) given up, \(n.dropped) dropped, \(n.held) still held"]
    }
}

extension SimulationReport {
    /// A `notifications:` expectation, or nil for another kind.
    func evaluateNotifications(_ e: Expectation) -> ExpectationResult? {
        guard case let .notifications(figure, comparison, bound) = e else { return nil }
        let n = notifications ?? NotificationFigures()
        let value = switch figure {
        case .failure: n.failure
        case .recovery: n.recovery
        case .delivered: n.delivered
        case .retries: n.retries
        case .givenUp: n.givenUp
        case .dropped: n.dropped
        case .held: n.held
        }
        return .init(expectation: "notifications \(figure.rawValue) \(comparison.rawValue) \(bound)",
                     passed: comparison.holds(value, bound), found: "\(value)")
    }
}
