import Foundation
import RefreshdCore
import RefreshdRuntime

/// What a simulation saw: the recent events (for a violation's context), every observation
/// (for the report), and an audit of every committed change against the end-to-end invariants
/// the engine cannot check on itself.
final class Journal: @unchecked Sendable {
    struct Found {
        var time: Instant
        var invariant: String
        var message: String
    }

    private let lock = NSLock()
    /// The last `recentCount` observations, oldest at `ringNext` once full.
    private var ring: [RuntimeObservation] = []
    private var ringNext = 0
    /// Only what the report needs (missed slots); the rest is seen once, for the audits and the
    /// recent-events ring.
    private var missed: [RuntimeObservation] = []
    private var running: [String: Int64] = [:]
    private var deadlines: [Int64: Instant] = [:]
    private var expiredAt: [Int64: Instant] = [:]
    /// Per identifier, the earliest begin dates its first attempts ran for, ascending. They
    /// come in ascending order almost always (an append); a year of a per-minute job is half
    /// a million of them, which a hash set rehashed as it grew.
    private var slotsRun: [String: [Int64]] = [:]
    private var found: Found?
    static let recentCount = 20

    func record(_ o: RuntimeObservation) {
        lock.withLock {
            if o.kind == .missed { missed.append(o) }
            if ring.count < Self.recentCount {
                ring.append(o)
            } else {
                ring[ringNext] = o
            }
            ringNext = (ringNext + 1) % Self.recentCount
            switch o.kind {
            case .expired:
                if let runID = o.runID {
                    expiredAt[runID] = o.time
                    if let deadline = deadlines[runID], o.time < deadline {
                        flag(o.time, "expiration-at-allowance",
                             "\(o.identifier ?? "?") run \(runID) expired at \(o.time), before its deadline \(deadline)")
                    }
                }
            case .killed:
                if let runID = o.runID, expiredAt[runID] == nil {
                    flag(o.time, "kill-after-grace", "\(o.identifier ?? "?") run \(runID) was killed before its expiration")
                }
            default:
                break
            }
        }
    }

    /// Audits a batch of changes that is being committed.
    func audit(_ changes: [StateChange], at now: Instant) {
        lock.withLock {
            for change in changes {
                switch change {
                case let .runStarted(r):
                    if r.started < r.earliest {
                        flag(now, "launch-before-earliest",
                             "\(r.identifier) run \(r.runID) launched at \(r.started), before its earliest begin date \(r.earliest)")
                    }
                    if let other = running[r.identifier] {
                        flag(now, "one-run-per-identifier",
                             "\(r.identifier) run \(r.runID) launched while run \(other) of it was in flight")
                    }
                    if !Self.insert(r.earliest.milliseconds, into: &slotsRun[r.identifier, default: []]), r.attempt == 1 {
                        flag(now, "slot-run-twice",
                             "\(r.identifier) ran twice for the request due \(r.earliest)")
                    }
                    running[r.identifier] = r.runID
                    deadlines[r.runID] = r.deadline
                case let .runEnded(runID, identifier, _, _, _, _):
                    if running[identifier] == runID { running[identifier] = nil }
                    // Its expiration and kill were seen before its end: nothing more to check.
                    deadlines[runID] = nil
                    expiredAt[runID] = nil
                default:
                    break
                }
            }
        }
    }

    /// Inserts `value` into an ascending array; false if it was there already.
    static func insert(_ value: Int64, into sorted: inout [Int64]) -> Bool {
        guard let last = sorted.last, value <= last else {
            sorted.append(value)
            return true
        }
        let low = sorted.lowerBound(of: value)
        if sorted[low] == value { return false }
        sorted.insert(value, at: low)
        return true
    }

    private func flag(_ time: Instant, _ invariant: String, _ message: String) {
        if found == nil { found = Found(time: time, invariant: invariant, message: message) }
    }

    func takeViolation() -> Found? {
        lock.withLock {
            defer { found = nil }
            return found
        }
    }

    /// The recent events, oldest first, as log lines.
    func recent() -> [String] {
        lock.withLock {
            let ordered = ring.count < Self.recentCount ? ring : Array(ring[ringNext...] + ring[..<ringNext])
            return ordered.map { "\($0.time.iso8601) \($0.message)" }
        }
    }

    func missedObservations() -> [RuntimeObservation] { lock.withLock { missed } }
}
