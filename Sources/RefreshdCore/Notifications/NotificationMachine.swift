import Foundation

/// Which runs notify, and when each notification is (re)tried: pure, on the runtime's one
/// timer, run alike by the daemon and the simulator (issue 25).
///
/// - **Which runs.** Once per run of a job with `on-failure:` that ended `failure`, `expired`
///   or `crashed`; never `interrupted`, which is refreshd's own stop or death (a restart would
///   otherwise page for every run it cut short). `on-recovery:` at the first success after one
///   or more notified failures.
/// - **Durable, after the commit.** A notification is a `putRecord` in the same effect list
///   as the run's end, so it is committed with it; its `.notify` effect follows, and the
///   runtime acts only after the commit. A delivery's outcome comes back as an event: delivered
///   deletes the record (a later commit); failed is retried at 1 s doubling (at most 5 min), at
///   most `maxAttempts` attempts, then given up. After a restart every held record is due.
/// - **Bounded.** At most `maxHeld` wait; beyond that the oldest is dropped and counted.
package struct NotificationMachine: Sendable {
    package static let maxHeld = 1000
    package static let maxAttempts = 8
    package static let firstRetry: Duration = .seconds(1)
    package static let maxRetry: Duration = .seconds(300)
    package static let tailLines = 20
    package static let tailBytes = 4096
    /// Record tables: held notifications (key: id) and jobs whose failures were notified and
    /// that have not recovered (key: job).
    package static let table = "notification"
    package static let failingTable = "notification-failing"

    /// Each job's notifiers (the config in force).
    package var notifiers: [String: JobNotifiers] = [:]
    /// Makes ids unique across states: the state's instance id.
    package var idPrefix = "refreshd"
    /// Waiting notifications, oldest first.
    package private(set) var held: [RunNotification] = []
    /// The next attempt of each held notification not in flight.
    package private(set) var due: [String: Instant] = [:]
    package private(set) var inFlight: Set<String> = []
    package private(set) var failing: Set<String> = []
    package private(set) var counts = NotificationCounts()
    /// Start and output tail of runs in flight of jobs with notifiers.
    private var runs: [Int64: (started: Instant, tail: [String], bytes: Int)] = [:]

    package init() {}

    /// When the one timer must wake for a retry.
    package var nextDeadline: Instant? { due.values.min() }

    /// A run of a job with notifiers was launched: its start and output are kept for its end.
    package mutating func launched(_ order: LaunchOrder) {
        guard !notifiers.isEmpty, let job = spec(of: order.identifier), !job.isEmpty else { return }
        runs[order.runID] = (order.started, [], 0)
    }

    /// A job's notifiers: its own, or for an instance (`template[key]`) its template's, so that
    /// `on-failure:` in a template file notifies for each instance (tracked per instance).
    private func spec(of job: String) -> JobNotifiers? {
        if let own = notifiers[job] { return own }
        guard job.utf8.last == UInt8(ascii: "]"), let name = InstanceName.split(job) else { return nil }
        return notifiers[name.template]
    }

    /// Lines a run printed (those logged): the last few are kept for its notification.
    package mutating func output(_ runID: Int64, _ lines: [String]) {
        guard !runs.isEmpty, var run = runs[runID] else { return }
        for line in lines {
            let kept = String(decoding: line.utf8.prefix(512), as: UTF8.self)
            run.tail.append(kept)
            run.bytes += kept.utf8.count
        }
        while run.tail.count > Self.tailLines || run.bytes > Self.tailBytes {
            run.bytes -= run.tail.removeFirst().utf8.count
        }
        runs[runID] = run
    }

    /// A run ended (its end is in the same effect list): a failure notified, a recovery, or nothing.
    package mutating func runEnded(runID: Int64, job: String, outcome: Outcome, exitStatus: Int32?, signal: Int32?,
                                   at now: Instant, stores: Bool, into effects: inout [SchedulerEffect]) {
        let run = runs.removeValue(forKey: runID)
        guard !notifiers.isEmpty, let spec = spec(of: job) else { return }
        let kind: RunNotification.Kind
        let notifier: Notifier
        switch outcome {
        case .failure, .expired, .crashed:
            guard let onFailure = spec.onFailure else { return }
            if failing.insert(job).inserted, stores {
                effects.append(.persist(.putRecord(MachineRecord(table: Self.failingTable, key: job, value: "{\"run\":\(runID)}"))))
            }
            kind = .failure
            notifier = onFailure
        case .success:
            guard failing.remove(job) != nil else { return }
            if stores { effects.append(.persist(.deleteRecord(table: Self.failingTable, key: job))) }
            guard let onRecovery = spec.onRecovery else { return }
            kind = .recovery
            notifier = onRecovery
        case .interrupted:
            return  // refreshd's own stop or death: not the job's failure
        }
        let notification = RunNotification(
            id: "\(idPrefix)-\(runID)-\(kind.rawValue)", kind: kind, job: job, runID: runID, outcome: outcome,
            exitStatus: exitStatus, signal: signal, started: run?.started, ended: now,
            outputTail: run?.tail ?? [], notifier: notifier)
        switch kind {
        case .failure: counts.failure += 1
        case .recovery: counts.recovery += 1
        }
        while held.count >= Self.maxHeld {
            let oldest = held.removeFirst()
            due[oldest.id] = nil
            inFlight.remove(oldest.id)
            counts.dropped += 1
            if stores { effects.append(.persist(.deleteRecord(table: Self.table, key: oldest.id))) }
            effects.append(.log(.notification(.dropped(oldest, held: Self.maxHeld))))
        }
        held.append(notification)
        if stores { effects.append(.persist(.putRecord(record(notification)))) }
        send(notification, into: &effects)
    }

    /// The host's report of one attempt.
    package mutating func finished(_ id: String, _ outcome: NotificationOutcome, at now: Instant, stores: Bool,
                                   into effects: inout [SchedulerEffect]) {
        guard inFlight.remove(id) != nil, let index = held.firstIndex(where: { $0.id == id }) else { return }
        var notification = held[index]
        notification.attempts += 1
        switch outcome {
        case .delivered:
            held.remove(at: index)
            counts.delivered += 1
            if stores { effects.append(.persist(.deleteRecord(table: Self.table, key: id))) }
            effects.append(.log(.notification(.delivered(notification, attempt: notification.attempts))))
        case let .failed(reason) where notification.attempts >= Self.maxAttempts:
            held.remove(at: index)
            counts.givenUp += 1
            if stores { effects.append(.persist(.deleteRecord(table: Self.table, key: id))) }
            effects.append(.log(.notification(.gaveUp(notification, attempts: notification.attempts, reason: reason))))
        case let .failed(reason):
            held[index] = notification
            let next = now + Self.backoff(afterAttempt: notification.attempts)
            due[id] = next
            if stores { effects.append(.persist(.putRecord(record(notification)))) }
            effects.append(.log(.notification(.retrying(notification, attempt: notification.attempts, reason: reason, next: next))))
        }
    }

    /// The wait after the `attempt`-th failed attempt: 1 s, 2 s, 4 s, ... at most 5 min.
    package static func backoff(afterAttempt attempt: Int) -> Duration {
        let shift = min(max(attempt - 1, 0), 20)
        return min(firstRetry * (1 << shift), maxRetry)
    }

    /// The one timer fired: every retry due is sent.
    package mutating func timerFired(at now: Instant, into effects: inout [SchedulerEffect]) {
        for notification in held where due[notification.id].map({ $0 <= now }) == true {
            counts.retries += 1
            send(notification, into: &effects)
        }
    }

    /// The saved records, at start: every held notification is due now (one in flight when
    /// refreshd died is sent again, under the same id), and the failing jobs are known again.
    package mutating func restore(_ records: [MachineRecord], into effects: inout [SchedulerEffect]) {
        let decoder = JSONDecoder()
        var restored: [RunNotification] = []
        for record in records {
            switch record.table {
            case Self.table:
                if let value = try? decoder.decode(RunNotification.self, from: Data(record.value.utf8)) { restored.append(value) }
            case Self.failingTable:
                failing.insert(record.key)
            default:
                break
            }
        }
        restored.sort { ($0.runID, $0.kind.rawValue) < ($1.runID, $1.kind.rawValue) }
        for notification in restored where !held.contains(where: { $0.id == notification.id }) {
            held.append(notification)
            send(notification, into: &effects)
        }
    }

    private mutating func send(_ notification: RunNotification, into effects: inout [SchedulerEffect]) {
        due[notification.id] = nil
        inFlight.insert(notification.id)
        effects.append(.notify(notification))
    }

    private func record(_ notification: RunNotification) -> MachineRecord {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let value = (try? encoder.encode(notification)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return MachineRecord(table: Self.table, key: notification.id, value: value)
    }
}
