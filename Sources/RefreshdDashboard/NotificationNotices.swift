import Foundation
import RefreshdCore
import RefreshdRuntime

/// What the pages show of failure notifications besides the held ones (which the runtime
/// gives, `heldNotifications`): those given up or dropped, which leave the store when they
/// go, so only the observation stream tells of them, and each held one's last failed attempt
/// (why, and when the next is due). Kept from the observations while this refreshd runs,
/// bounded: the latest 100 given up or dropped, and the last attempt of at most 1,000 runs (the
/// machine holds at most 1,000 notifications).
package final class NotificationNotices: @unchecked Sendable {
    struct Notice: Codable, Sendable {
        var time: Instant
        /// `notification-given-up` or `notification-dropped`.
        var kind: String
        var job: String
        var runID: Int64?
        var attempts: Int?
        var message: String
    }

    struct Attempt: Sendable {
        var time: Instant
        var next: Instant?
        var message: String
    }

    static let keptNotices = 100
    static let keptAttempts = 1000
    private let lock = Lock()
    private var notices: [Notice] = []
    private var attempts: [Int64: Attempt] = [:]

    func record(_ observation: RuntimeObservation) {
        switch observation.kind {
        case .notificationGivenUp, .notificationDropped:
            let notice = Notice(time: observation.time, kind: observation.kind.rawValue, job: observation.identifier ?? "",
                                runID: observation.runID, attempts: observation.count, message: observation.message)
            lock.withLock {
                notices.append(notice)
                if notices.count > Self.keptNotices { notices.removeFirst() }
                if let run = observation.runID { attempts[run] = nil }
            }
        case .notificationRetry:
            guard let run = observation.runID else { return }
            lock.withLock {
                if attempts.count >= Self.keptAttempts, attempts[run] == nil, let oldest = attempts.min(by: { $0.value.time < $1.value.time }) {
                    attempts[oldest.key] = nil
                }
                attempts[run] = Attempt(time: observation.time, next: observation.at, message: observation.message)
            }
        case .notified:
            guard let run = observation.runID else { return }
            lock.withLock { attempts[run] = nil }
        default:
            return
        }
    }

    /// Given up and dropped notifications, newest first.
    var gone: [Notice] { lock.withLock { notices.reversed() } }

    func lastAttempt(_ run: Int64) -> Attempt? { lock.withLock { attempts[run] } }
}

/// One held notification as the pages show it: the runtime's record, and its last failed
/// attempt when this refreshd saw one.
struct HeldNotification: Codable, Sendable {
    var id: String
    var kind: String
    var job: String
    var runID: Int64
    var outcome: String
    /// `webhook URL` or `command PROGRAM`.
    var notifier: String
    /// Attempts that failed so far.
    var attempts: Int
    var lastFailure: String?
    var nextAttempt: Instant?
}

/// Notifications on the overview (and, for one job, on its page).
package struct NotificationsData: Codable, Sendable {
    var counts: NotificationCounts
    var held: [HeldNotification]
    var givenUp: [NotificationNotices.Notice]

    package static func make(held: [RunNotification], counts: NotificationCounts, notices: NotificationNotices,
                     job: String? = nil) -> NotificationsData {
        let mine = { (id: String) in job.map { Views.belongs(id, to: $0) || id.hasPrefix($0 + "[") } ?? true }
        let rows = held.filter { mine($0.job) }.map { n in
            let attempt = notices.lastAttempt(n.runID)
            return HeldNotification(id: n.id, kind: n.kind.rawValue, job: n.job, runID: n.runID, outcome: n.outcome.rawValue,
                                    notifier: n.notifier.summary, attempts: n.attempts, lastFailure: attempt?.message,
                                    nextAttempt: attempt?.next)
        }
        return NotificationsData(counts: counts, held: rows, givenUp: notices.gone.filter { mine($0.job) })
    }
}
