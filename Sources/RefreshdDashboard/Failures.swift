import RefreshdCore
import RefreshdRuntime

/// `/failures` and `/api/failures` (issue 33): what is failing, in one place. Facts only: the
/// failure streaks, pending requests and runs are the stores' (read by key and on their
/// indexes, `StoredFailures`), the held and given-up notifications the runtime's; whether
/// retries are exhausted is the retry policy's own `delay(forAttempt:)`, as `why` reads it.
/// Retry now is the control server's `submit`. A template is folded: one row with its
/// instances counted by state, and its first failing instances listed.
package struct FailuresData: Codable, Sendable {
    var now: Instant
    /// Jobs and instances failing with a retry still to come: its next attempt.
    package var retrying: [FailureRow]
    /// Jobs and instances whose failures used every retry their policy allows (or that have no
    /// retry policy): nothing retries them; a regular next run, if any, is `next`.
    package var exhausted: [FailureRow]
    /// More failing identifiers than the rows shown (`Views.maxFailureRows` a list, and each
    /// template's failing instances past its first `Views.failingShown`).
    var more: Int
    /// Each template with failing instances: its instances counted by state (the store's), and
    /// how many of its failing ones are listed in `retrying` and `exhausted`.
    var templates: [FailingTemplate]
    /// Runs of the last 24 h that expired or crashed, newest first (at most 100).
    var expiredOrCrashed: [StatusReport.Run]
    /// Failure notifications held (being retried) and those given up or dropped.
    var notifications: NotificationsData
    var actionsEnabled: Bool
}

/// A template on the Failures page: one row, however many of its instances fail.
struct FailingTemplate: Codable, Sendable {
    var identifier: String
    var instances: InstanceCounts
    /// Its failing instances listed (the first in key order).
    var listed: Int
}

/// What the Failures page reads from the stores, none of it every instance or request: each
/// plain job's identifiers (its own, a timeline job's providers) by key; each template's counts
/// and its first failing instances (the failing search), with their providers, by key; the
/// runs that expired or crashed by the run search.
package struct StoredFailures: Sendable {
    /// The identifiers that may be failing, in order: plain jobs', then each template's
    /// listed instances' (`T[K]`, then `T[K]#family`).
    var candidates: [String]
    var states: [String: IdentifierState]
    var templates: [FailingTemplate]
    var broken: [RunRecord]

    package static func read(_ state: StateReader, jobs: [JobSpec], since: Instant) throws -> StoredFailures {
        let specs = jobs.sorted { $0.identifier < $1.identifier }
        var candidates = specs.filter { $0.template == nil }.flatMap { spec in
            [spec.identifier] + (spec.widget?.families ?? []).map { WidgetSpec.providerIdentifier(job: spec.identifier, family: $0) }
        }
        var templates: [FailingTemplate] = []
        for spec in specs where spec.template != nil {
            let counts = try state.instanceCounts(of: spec.identifier)
            guard counts.failing > 0 else { continue }
            let failing = try state.searchInstances(InstanceSearch(template: spec.identifier, state: .failing), cursor: nil,
                                                    limit: Views.failingShown).items
            for instance in failing {
                let id = InstanceName.identifier(template: spec.identifier, key: instance.key)
                candidates += [id] + (spec.widget?.families ?? []).map { WidgetSpec.providerIdentifier(job: id, family: $0) }
            }
            templates.append(FailingTemplate(identifier: spec.identifier, instances: counts, listed: failing.count))
        }
        let broken = try state.searchRuns(RunSearch(ending: .outcomes([.expired, .crashed]), since: since), cursor: nil, limit: 100)
            .items.map { run -> RunRecord in var bare = run; bare.output = .none; return bare }
        return StoredFailures(candidates: candidates, states: try state.states(of: candidates), templates: templates, broken: broken)
    }
}

/// One failing job or instance.
package struct FailureRow: Codable, Sendable {
    package var identifier: String
    /// Consecutive failed attempts.
    var retryStreak: Int
    /// Its pending request's earliest begin date: the next attempt (retrying) or its next
    /// regular run (exhausted); none when nothing is pending.
    var next: Instant?
    var lastRun: StatusReport.Run?
    /// The pause that holds it, if any (a paused job's retry waits for the resume).
    var paused: SchedulerSnapshot.Paused?
}

extension Views {
    /// The most rows of each failing list on the page (and retried by its bulk button).
    package static let maxFailureRows = 500

    package static func failures(_ live: Live, stored: StoredFailures, notifications: NotificationsData, actionsEnabled: Bool) -> FailuresData {
        var retrying: [FailureRow] = []
        var exhausted: [FailureRow] = []
        for id in stored.candidates {
            guard let state = stored.states[id], state.failureStreak > 0 else { continue }
            let row = FailureRow(identifier: id, retryStreak: state.failureStreak, next: state.pending,
                                 lastRun: state.lastRun.map(StatusReport.Run.init),
                                 paused: WhyFacts.pause(of: id, among: live.snapshot.paused ?? []))
            // The retry policy decides, as `why` reads it: no delay for the next attempt means
            // no retry comes (no policy at all: none ever did).
            let retry = live.definitions[id]?.retry
            if let retry, retry.delay(forAttempt: state.failureStreak) != nil {
                retrying.append(row)
            } else {
                exhausted.append(row)
            }
        }
        // The next attempt first; the longest streaks first.
        retrying.sort { ($0.next ?? .latest, $0.identifier) < ($1.next ?? .latest, $1.identifier) }
        exhausted.sort { ($1.retryStreak, $0.identifier) < ($0.retryStreak, $1.identifier) }
        let unlisted = stored.templates.reduce(0) { $0 + $1.instances.failing - $1.listed }
        let more = max(0, retrying.count - maxFailureRows) + max(0, exhausted.count - maxFailureRows) + unlisted
        return FailuresData(now: live.now, retrying: Array(retrying.prefix(maxFailureRows)),
                            exhausted: Array(exhausted.prefix(maxFailureRows)), more: more, templates: stored.templates,
                            expiredOrCrashed: stored.broken.map(StatusReport.Run.init), notifications: notifications,
                            actionsEnabled: actionsEnabled)
    }
}
