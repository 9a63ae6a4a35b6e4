import Foundation

/// One notification about one run: what the receiver is told, where it goes, and how many
/// attempts to deliver it failed. Written in the same commit as the run's end (a record of the
/// `notification` table), deleted in a later commit once delivered or given up.
///
/// `id` is stable (the state's instance, the run, the kind): it is sent as `Idempotency-Key`
/// and `REFRESHD_NOTIFICATION_ID`, so a receiver can drop the one repeat a kill -9 between its
/// answer and the delivered commit can cause.
package struct RunNotification: Sendable, Hashable, Codable {
    package enum Kind: String, Sendable, Hashable, Codable {
        case failure, recovery
    }

    package var id: String
    package var kind: Kind
    package var job: String
    package var runID: Int64
    package var outcome: Outcome
    package var exitStatus: Int32?
    package var signal: Int32?
    package var started: Instant?
    package var ended: Instant
    /// The run's last lines of output (at most `NotificationMachine.tailLines` lines and
    /// `tailBytes` bytes), oldest first.
    package var outputTail: [String]
    package var notifier: Notifier
    /// Attempts that failed so far.
    package var attempts: Int

    package init(id: String, kind: Kind, job: String, runID: Int64, outcome: Outcome, exitStatus: Int32?,
                signal: Int32?, started: Instant?, ended: Instant, outputTail: [String], notifier: Notifier,
                attempts: Int = 0) {
        self.id = id
        self.kind = kind
        self.job = job
        self.runID = runID
        self.outcome = outcome
        self.exitStatus = exitStatus
        self.signal = signal
        self.started = started
        self.ended = ended
        self.outputTail = outputTail
        self.notifier = notifier
        self.attempts = attempts
    }

    /// What a webhook receives: `{id, kind, job, run, outcome, exitStatus, signal, started,
    /// ended, outputTail}`, keys sorted, dates in ISO 8601, the tail one string.
    package var webhookBody: String {
        struct Body: Encodable {
            var id: String, kind: String, job: String, run: Int64, outcome: String
            var exitStatus: Int32?, signal: Int32?, started: String?, ended: String, outputTail: String
            func encode(to encoder: any Encoder) throws {
                // Nulls written, not left out: a receiver sees every field every time.
                var c = encoder.container(keyedBy: CodingKeys.self)
                try c.encode(id, forKey: .id); try c.encode(kind, forKey: .kind); try c.encode(job, forKey: .job)
                try c.encode(run, forKey: .run); try c.encode(outcome, forKey: .outcome)
                try c.encode(exitStatus, forKey: .exitStatus); try c.encode(signal, forKey: .signal)
                try c.encode(started, forKey: .started); try c.encode(ended, forKey: .ended)
                try c.encode(outputTail, forKey: .outputTail)
            }
            enum CodingKeys: String, CodingKey {
                case id, kind, job, run, outcome, exitStatus, signal, started, ended, outputTail
            }
        }
        let body = Body(id: id, kind: kind.rawValue, job: job, run: runID, outcome: outcome.rawValue,
                        exitStatus: exitStatus, signal: signal, started: started?.iso8601, ended: ended.iso8601,
                        outputTail: outputTail.joined(separator: "\n"))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(body)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// What a notifier command gets on top of refreshd's own environment.
    package var environment: [String: String] {
        var values = [
            "REFRESHD_NOTIFICATION_ID": id,
            "REFRESHD_NOTIFICATION_KIND": kind.rawValue,
            "REFRESHD_JOB": job,
            "REFRESHD_RUN_ID": String(runID),
            "REFRESHD_OUTCOME": outcome.rawValue,
            "REFRESHD_ENDED": ended.iso8601,
            "REFRESHD_OUTPUT_TAIL": outputTail.joined(separator: "\n"),
        ]
        if let exitStatus { values["REFRESHD_EXIT_STATUS"] = String(exitStatus) }
        if let signal { values["REFRESHD_SIGNAL"] = String(signal) }
        if let started { values["REFRESHD_STARTED"] = started.iso8601 }
        return values
    }
}

/// How one delivery attempt went, as the host reports it back to the machine.
package enum NotificationOutcome: Sendable, Hashable {
    /// The webhook answered 2xx, or the command exited 0.
    case delivered
    /// Anything else: the text says what (`HTTP 503`, `exit 1`, `timed out after 10 s`, ...).
    case failed(String)
}

/// What the notifications came to, for the simulation's report and the metrics.
package struct NotificationCounts: Sendable, Hashable, Codable {
    /// Failure and recovery notifications written (one per failed run, one per recovery).
    package var failure = 0
    package var recovery = 0
    /// Delivered: the receiver took it.
    package var delivered = 0
    /// Attempts after a failed one.
    package var retries = 0
    /// Dropped after `NotificationMachine.maxAttempts` failed attempts.
    package var givenUp = 0
    /// Dropped unsent because `NotificationMachine.maxHeld` were already waiting (oldest first).
    package var dropped = 0

    package init() {}
}
