import Logging
import RefreshdCore

/// One thing that happened in the runtime, as data: what a watcher, a test, the status command
/// and the simulation report read, instead of parsing log lines.
///
/// Published to every observer whatever the log level (a quiet log never hides an event from a
/// watcher). Flat and Codable so that `--json` output and the simulator's report share one
/// shape; `message` is the same one-line text the log shows.
public struct RuntimeObservation: Sendable, Hashable, Codable {
    /// What kind of event, a stable lowercase name.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// Requests: made, replaced, refused, withdrawn, held back, waiting for conditions; runs:
        /// started, told to expire, killed after their grace.
        case submitted, replaced, rejected, cancelled, held, waiting, launched, expired, killed
        /// A run's end, its retry scheduled or given up, a run found interrupted at a restart, a request
        /// for an undeclared identifier dropped.
        case finished, retry, retriesExhausted = "retries-exhausted", interrupted, dropped
        /// Conditions changed, calendar slots missed, the wall clock stepped, the scheduler stopping and
        /// stopped.
        case conditions, missed, clockChanged = "clock-changed", stopping, stopped
        /// A job's output line, output dropped by the rate limit, leftover processes reaped, results lines.
        case output, outputDropped = "output-dropped", reaped, results
        /// Job files reloaded or refused, a commit failed (the scheduler stops), the shard fenced.
        case reloaded, reloadRefused = "reload-refused", storeFailed = "store-failed", fenced
        /// A file written to the shared container, or its write failed.
        case published, publishFailed = "publish-failed"
        /// Widget timelines: an entry shown, a provider asked, a reload deferred or coalesced, a
        /// timeline accepted or refused, a stale span begun or ended, anything else.
        case widgetShown = "widget-shown", widgetReload = "widget-reload", widgetDeferred = "widget-deferred"
        case widgetTimeline = "widget-timeline", widgetFailed = "widget-failed", widgetStale = "widget-stale"
        case widgetFresh = "widget-fresh", widget
        /// Live activities: a transition (`state` is the new one), an update held or ignored, a refusal.
        case activity, activityHeld = "activity-held", activityIgnored = "activity-ignored"
        case activityRefused = "activity-refused"
        /// Failure notifications: delivered, an attempt failed (retried), given up, dropped unsent.
        case notified, notificationRetry = "notification-retry", notificationGivenUp = "notification-given-up"
        case notificationDropped = "notification-dropped"
        /// Instances of templates (issue 23): added, removed, or kept/refused.
        case instanceAdded = "instance-added", instanceRemoved = "instance-removed", instance
        /// An operator paused a job, an instance or a template, or resumed it (issue 33).
        case paused, resumed
    }

    /// When it happened (the runtime's clock: real or virtual).
    public var time: Instant
    /// What happened.
    public var kind: Kind
    /// The identifier it is about, if any.
    public var identifier: String?
    /// The run it is about, if any.
    public var runID: Int64?
    /// `success`, `failure`, `expired`, `crashed`, `interrupted` for `finished`.
    public var outcome: Outcome?
    /// The instant the event is about: a request's earliest begin, a run's deadline, a retry's
    /// date, a held request's release, a skipped calendar's next slot.
    public var at: Instant?
    /// A count: missed slots, dropped output lines, reaped processes, runs in flight.
    public var count: Int?
    /// The log line, without the time (formatted when first read: a simulation that never
    /// prints most of its events never pays for their text). Always one line: what came from
    /// outside (an identifier, an activity type, a widget kind, a job's output line, a file
    /// name) is escaped here (`EchoText`), so neither the log nor a watcher's terminal sees a
    /// raw line break, carriage return or terminal escape.
    public var message: String {
        get {
            switch source {
            case let .text(text): EchoText.escaped(text, limit: nil)
            case let .log(log): EchoText.escaped(log.description, limit: nil)
            }
        }
        set { source = .text(newValue) }
    }
    private var source: Source

    private enum Source: Sendable, Hashable {
        case text(String)
        case log(LogMessage)
    }

    /// An observation from its parts (a test's expected value, or one read back from JSON).
    public init(time: Instant, kind: Kind, identifier: String? = nil, runID: Int64? = nil,
                outcome: Outcome? = nil, at: Instant? = nil, count: Int? = nil, message: String) {
        self.time = time
        self.kind = kind
        self.identifier = identifier
        self.runID = runID
        self.outcome = outcome
        self.at = at
        self.count = count
        self.source = .text(message)
    }

    /// The observation for one of the core's log messages.
    package init(_ message: LogMessage, at time: Instant) {
        let text = ""
        switch message {
        case let .submitted(p, replaced):
            self.init(time: time, kind: replaced ? .replaced : .submitted, identifier: p.identifier,
                      at: p.earliest, message: text)
        case let .rejected(id, _):
            self.init(time: time, kind: .rejected, identifier: id, message: text)
        case let .cancelled(id):
            self.init(time: time, kind: .cancelled, identifier: id, message: text)
        case let .launched(order, _):
            self.init(time: time, kind: .launched, identifier: order.identifier, runID: order.runID,
                      at: order.deadline, message: text)
        case let .waitingForConditions(id, _, _):
            self.init(time: time, kind: .waiting, identifier: id, message: text)
        case let .expirationDelivered(runID, id):
            self.init(time: time, kind: .expired, identifier: id, runID: runID, message: text)
        case let .killed(runID, id):
            self.init(time: time, kind: .killed, identifier: id, runID: runID, message: text)
        case let .finished(runID, id, outcome, _, _, _, _):
            self.init(time: time, kind: .finished, identifier: id, runID: runID, outcome: outcome, message: text)
        case let .retryScheduled(id, attempt, date):
            self.init(time: time, kind: .retry, identifier: id, at: date, count: attempt, message: text)
        case let .retriesExhausted(id, attempts):
            self.init(time: time, kind: .retriesExhausted, identifier: id, count: attempts, message: text)
        case let .recoveredInterrupted(runID, id):
            self.init(time: time, kind: .interrupted, identifier: id, runID: runID, outcome: .interrupted,
                      message: text)
        case let .droppedUndeclared(id):
            self.init(time: time, kind: .dropped, identifier: id, message: text)
        case .conditions:
            self.init(time: time, kind: .conditions, message: text)
        case let .stopping(running):
            self.init(time: time, kind: .stopping, count: running, message: text)
        case let .missedSlots(id, count, _, next):
            self.init(time: time, kind: .missed, identifier: id, at: next, count: count, message: text)
        case .clockChanged:
            self.init(time: time, kind: .clockChanged, message: text)
        case let .held(id, until):
            self.init(time: time, kind: .held, identifier: id, at: until, message: text)
        case let .paused(id, _):
            self.init(time: time, kind: .paused, identifier: id, message: text)
        case let .resumed(id, _):
            self.init(time: time, kind: .resumed, identifier: id, message: text)
        case let .instance(log):
            switch log {
            case let .added(id):
                self.init(time: time, kind: .instanceAdded, identifier: id, message: text)
            case let .removed(id, _, running):
                self.init(time: time, kind: .instanceRemoved, identifier: id, runID: running, message: text)
            case let .kept(id, _):
                self.init(time: time, kind: .instance, identifier: id, message: text)
            case .refused:
                self.init(time: time, kind: .instance, message: text)
            case let .ignoredLine(owner, _):
                self.init(time: time, kind: .instance, identifier: owner, message: text)
            case let .widgetTaken(id, _, _):
                self.init(time: time, kind: .instance, identifier: id, message: text)
            case let .batch(template, added, _, _, _, _):
                self.init(time: time, kind: .instance, identifier: template, count: added, message: text)
            }
        case let .timeline(log):
            switch log {
            case let .published(id, date):
                self.init(time: time, kind: .widgetShown, identifier: id.description, at: date, message: text)
            case let .withdrawn(id), let .droppedRecord(id), let .ignoredResult(id), let .waiting(id, _):
                self.init(time: time, kind: .widget, identifier: id.description, message: text)
            case let .providerAsked(id, _, _, used, _, _):
                self.init(time: time, kind: .widgetReload, identifier: id.description, count: used, message: text)
            case let .deferred(id, _, used, _, _, release):
                self.init(time: time, kind: .widgetDeferred, identifier: id.description, at: release, count: used, message: text)
            case let .heldLowPower(id, _):
                self.init(time: time, kind: .widgetDeferred, identifier: id.description, message: text)
            case let .spaced(id, _, _, _, release):
                self.init(time: time, kind: .widgetDeferred, identifier: id.description, at: release, message: text)
            case let .coalesced(id, _, _):
                self.init(time: time, kind: .widgetDeferred, identifier: id.description, message: text)
            case let .accepted(id, entries, _, next):
                self.init(time: time, kind: .widgetTimeline, identifier: id.description, at: next, count: entries, message: text)
            case let .failed(id, _, _, _), let .interrupted(id, _):
                self.init(time: time, kind: .widgetFailed, identifier: id.description, message: text)
            case let .staleStarted(id, since, _):
                self.init(time: time, kind: .widgetStale, identifier: id.description, at: since, message: text)
            case let .staleEnded(id, since, _):
                self.init(time: time, kind: .widgetFresh, identifier: id.description, at: since, message: text)
            case .unknownKind:
                self.init(time: time, kind: .widget, message: text)
            }
        case let .notification(log):
            let n = log.notification
            let kind: Kind = switch log {
            case .delivered: .notified
            case .retrying: .notificationRetry
            case .gaveUp: .notificationGivenUp
            case .dropped: .notificationDropped
            }
            let at: Instant? = if case let .retrying(_, _, _, next) = log { next } else { nil }
            self.init(time: time, kind: kind, identifier: n.job, runID: n.runID, outcome: n.outcome, at: at,
                      count: n.attempts, message: text)
        case let .activity(log):
            switch log {
            case let .transition(transition, _):
                self.init(time: time, kind: .activity, identifier: transition.id, at: transition.due, message: text)
            case let .updateHeld(id, _, release, coalesced, _):
                self.init(time: time, kind: .activityHeld, identifier: id, at: release, count: coalesced, message: text)
            case let .updateIgnored(id, _, _), let .endContentDropped(id, _, _):
                self.init(time: time, kind: .activityIgnored, identifier: id, message: text)
            case .refused:
                self.init(time: time, kind: .activityRefused, message: text)
            case let .updated(activity):
                self.init(time: time, kind: .activity, identifier: activity.id, message: text)
            case .restored, .clockChanged:
                self.init(time: time, kind: .activity, message: text)
            }
        case let .runtime(log):
            switch log {
            case let .processStarted(id, runID, _):
                self.init(time: time, kind: .launched, identifier: id, runID: runID, message: text)
            case let .reapedAtStart(id, runID, count), let .sweptAtEnd(id, runID, count):
                self.init(time: time, kind: .reaped, identifier: id, runID: runID, count: count, message: text)
            case let .notifiersReapedAtStart(count):
                self.init(time: time, kind: .reaped, count: count, message: text)
            case let .resultRefused(id, runID, _), let .resultsGraceEnded(id, runID, _):
                self.init(time: time, kind: .results, identifier: id, runID: runID, message: text)
            case let .resultsReported(id, runID, count):
                self.init(time: time, kind: .results, identifier: id, runID: runID, count: count, message: text)
            case let .output(id, runID, _, _):
                self.init(time: time, kind: .output, identifier: id, runID: runID, message: text)
            case let .outputDropped(id, runID, lines, _, _):
                self.init(time: time, kind: .outputDropped, identifier: id, runID: runID, count: lines, message: text)
            case .notPublished, .notContained:
                self.init(time: time, kind: .publishFailed, message: text)
            case .storeFailed:
                self.init(time: time, kind: .storeFailed, message: text)
            case .shardFenced:
                self.init(time: time, kind: .fenced, message: text)
            case .stopSignal:
                self.init(time: time, kind: .stopping, message: text)
            case let .killingNow(_, running):
                self.init(time: time, kind: .stopping, count: running, message: text)
            case .stopped:
                self.init(time: time, kind: .stopped, message: text)
            case let .reloaded(_, _, jobs):
                self.init(time: time, kind: .reloaded, count: jobs, message: text)
            case .reloadRefused:
                self.init(time: time, kind: .reloadRefused, message: text)
            case let .reloadKept(_, problems, _):
                self.init(time: time, kind: .reloadRefused, count: problems, message: text)
            case let .seedRefused(id, _):
                self.init(time: time, kind: .rejected, identifier: id, message: text)
            }
        }
        source = .log(message)
    }

    /// The core's log message this observation was made from, if it was made from one (never
    /// for a decoded observation): gives readers in the same process the typed details, such as
    /// a launch's lateness.
    package var logMessage: LogMessage? {
        if case let .log(message) = source { message } else { nil }
    }

    /// Its level in the log: critical for a failure to save (refreshd stops); a warning for
    /// refusals, exhausted retries, lost output; information for the rest.
    package var level: Logger.Level {
        switch kind {
        case .storeFailed: .critical
        case .rejected, .retriesExhausted, .outputDropped, .reaped, .reloadRefused, .fenced, .publishFailed,
             .widgetStale, .widgetFailed, .activityRefused, .notificationRetry, .notificationGivenUp,
             .notificationDropped: .warning
        default: .info
        }
    }
}

extension RuntimeObservation {
    private enum CodingKeys: String, CodingKey {
        case time, kind, identifier, runID, outcome, at, count, message
    }

    /// Flat: the message is written as text whichever way it was made.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(time, forKey: .time)
        try c.encode(kind, forKey: .kind)
        try c.encodeIfPresent(identifier, forKey: .identifier)
        try c.encodeIfPresent(runID, forKey: .runID)
        try c.encodeIfPresent(outcome, forKey: .outcome)
        try c.encodeIfPresent(at, forKey: .at)
        try c.encodeIfPresent(count, forKey: .count)
        try c.encode(message, forKey: .message)
    }

    /// Reads the flat JSON object `encode(to:)` writes.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(time: try c.decode(Instant.self, forKey: .time), kind: try c.decode(Kind.self, forKey: .kind),
                  identifier: try c.decodeIfPresent(String.self, forKey: .identifier),
                  runID: try c.decodeIfPresent(Int64.self, forKey: .runID),
                  outcome: try c.decodeIfPresent(Outcome.self, forKey: .outcome),
                  at: try c.decodeIfPresent(Instant.self, forKey: .at),
                  count: try c.decodeIfPresent(Int.self, forKey: .count),
                  message: try c.decode(String.self, forKey: .message))
    }
}
