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
    /// What the audit keeps of a job: its run in flight, and the earliest begin dates its runs
    /// ran for, ascending. They come in ascending order almost always (an append); a year of a
    /// per-minute job is half a million of them, which a hash set rehashed as it grew.
    private struct JobAudit {
        var running: Int64?
        var slotsRun: [Int64] = []
        /// Slots whose last run was interrupted (refreshd stopped or died during it): run again
        /// by a first attempt, as an interruption is not the job's fault (not a slot run twice).
        var interruptedSlots: [Int64] = []
    }

    /// What the audit keeps of a run in flight: its deadline, when its expiration came, and
    /// its job's index in `jobAudits` (-1 before its start was seen).
    /// The runs the batch last committed ended after their expiration: an in-process run's kill
    /// ends it in the same transaction (`RuntimeMachine.inProcessRuns`), and the kill's log line
    /// is reported after that commit.
    private var endedExpired: Set<Int64> = []

    private struct RunAudit {
        var deadline: Instant?
        var expiredAt: Instant?
        var job: Int32 = -1
        var earliest: Int64 = 0
    }

    /// Jobs by identifier, looked up once a run (at its start); a run's end finds its job through
    /// the run (an instance's name is a fresh string each run: hashing it and comparing it with
    /// the stored key, cold, was most of the audit's time in a month of 10,000 instances).
    private var jobs = HintedNames()
    private var jobAudits: [JobAudit] = []
    private var runs: [Int64: RunAudit] = [:]
    private var found: Found?
    static let recentCount = 20
    /// Each plain timeline job's provider identifier (`JOB#family`) and its widget
    /// (`kind/family`), set from the scenario: the audit of reloads counted once.
    var providerWidgets: [String: String] = [:]
    /// By widget: the provider calls its committed day rows count (by day), and its provider
    /// runs committed as started.
    private var callsCounted: [String: [String: Int]] = [:]
    private var providerRuns: [String: Int] = [:]
    private static let counterDecoder = JSONDecoder()

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
                    let deadline = Self.noteExpiration(at: o.time, in: &runs[runID, default: RunAudit()])
                    if let deadline, o.time < deadline {
                        flag(o.time, "expiration-at-allowance",
                             "\(o.identifier ?? "?") run \(runID) expired at \(o.time), before its deadline \(deadline)")
                    }
                }
            case .killed:
                if let runID = o.runID, runs[runID]?.expiredAt == nil, !endedExpired.contains(runID) {
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
            if !endedExpired.isEmpty { endedExpired.removeAll(keepingCapacity: true) }
            for change in changes {
                switch change {
                case let .runStarted(r):
                    if r.started < r.earliest, !Self.launchedNow(r.identifier, in: changes) {
                        flag(now, "launch-before-earliest",
                             "\(r.identifier) run \(r.runID) launched at \(r.started), before its earliest begin date \(r.earliest)")
                    }
                    let job = jobIndex(r.identifier, hint: r.slot)
                    let (other, fresh) = Self.noteStart(r, in: &jobAudits[Int(job)])
                    if let other {
                        flag(now, "one-run-per-identifier",
                             "\(r.identifier) run \(r.runID) launched while run \(other) of it was in flight")
                    }
                    if !fresh, r.attempt == 1, !Self.takeInterrupted(r.earliest.milliseconds, from: &jobAudits[Int(job)]) {
                        flag(now, "slot-run-twice",
                             "\(r.identifier) ran twice for the request due \(r.earliest)")
                    }
                    Self.noteRun(r, job: job, in: &runs[r.runID, default: RunAudit()])
                    noteProviderStart(r)
                case let .runEnded(runID, identifier, _, outcome, _, _, _, _, _):
                    let job = runs[runID].map(\.job).flatMap { $0 >= 0 ? $0 : nil } ?? jobs.number(of: identifier)
                    if let job, jobAudits[Int(job)].running == runID {
                        jobAudits[Int(job)].running = nil
                    }
                    if outcome == .interrupted, let job, let earliest = runs[runID]?.earliest {
                        jobAudits[Int(job)].interruptedSlots.append(earliest)
                    }
                    // Its expiration was seen before its end, and its kill too unless this batch
                    // holds both (`endedExpired`): nothing more to check.
                    if runs[runID]?.expiredAt != nil { endedExpired.insert(runID) }
                    runs[runID] = nil
                case let .putRecord(record) where record.table == TimelineChange.counterTable && !providerWidgets.isEmpty:
                    countCalls(record, at: now)
                case let .putRecord(record) where record.table == WorldEvent.table && record.key.contains(" simulate-expiration "):
                    // An operator's expiration now (`ctl simulate-expiration`) ends its run's
                    // allowance now (`SchedulerCore.expireNow`): its deadline is now.
                    if case let .order(.expireNow(identifier))? = WorldEvent(record)?.what, let job = jobs.number(of: identifier),
                       let runID = jobAudits[Int(job)].running {
                        runs[runID]?.deadline = now
                    }
                default:
                    break
                }
            }
        }
    }

    /// Whether the batch is an operator's launch of `identifier` now (`ctl simulate-launch`,
    /// whatever its earliest begin date): it records the order (`OperatorOrder.launchNow`).
    static func launchedNow(_ identifier: String, in changes: [StateChange]) -> Bool {
        changes.contains {
            guard case let .putRecord(record) = $0, record.table == WorldEvent.table,
                  case .order(.launchNow(identifier))? = WorldEvent(record)?.what else { return false }
            return true
        }
    }

    /// Audits only the reloads of a batch being committed (`reload-counted-once`): what the
    /// cluster simulator checks of every shard's commits (issue 32), whose other audits are the
    /// cluster's own (a slot run twice across a takeover is `duplicates`).
    func auditReloads(_ changes: [StateChange], at now: Instant) {
        guard !providerWidgets.isEmpty else { return }
        lock.withLock {
            for change in changes {
                switch change {
                case let .runStarted(r): noteProviderStart(r)
                case let .putRecord(record) where record.table == TimelineChange.counterTable: countCalls(record, at: now)
                default: break
                }
            }
        }
    }

    /// Under `lock`: a provider run committed as started.
    private func noteProviderStart(_ r: RunRecord) {
        if !providerWidgets.isEmpty, let widget = providerWidgets[r.identifier] { providerRuns[widget, default: 0] += 1 }
    }

    /// Under `lock`: a widget's day row committed. Every provider call it counts is a provider
    /// run; one call at a time may be counted before its run starts (asked, its request not yet
    /// launched). More is a reload counted twice (issue 32: a restore re-asked an interrupted
    /// call, the run's interrupted end then failed that new call and another was asked beside it).
    private func countCalls(_ record: MachineRecord, at now: Instant) {
        guard let row = try? Self.counterDecoder.decode(WidgetDayCounter.self, from: Data(record.value.utf8)) else { return }
        let widget = "\(row.kind)/\(row.family.rawValue)"
        callsCounted[widget, default: [:]][row.day] = row.providerCalls
        let counted = callsCounted[widget]!.values.reduce(0, +)
        let started = providerRuns[widget] ?? 0
        if counted > started + 1 {
            flag(now, "reload-counted-once",
                 "\(widget): \(counted) provider calls counted for \(started) provider runs started (one may wait for its launch)")
        }
    }

    /// Under `lock`: the index of an identifier's audit, made at its first run.
    private func jobIndex(_ identifier: String, hint: SlotHint) -> Int32 {
        let (index, added) = jobs.number(of: identifier, hint: hint)
        if added { jobAudits.append(JobAudit()) }
        return index
    }

    private static func noteRun(_ r: RunRecord, job: Int32, in run: inout RunAudit) {
        run.deadline = r.deadline
        run.job = job
        run.earliest = r.earliest.milliseconds
    }

    /// Whether `slot`'s last run was interrupted (and forgets it: one rerun each).
    private static func takeInterrupted(_ slot: Int64, from job: inout JobAudit) -> Bool {
        guard let index = job.interruptedSlots.firstIndex(of: slot) else { return false }
        job.interruptedSlots.remove(at: index)
        return true
    }

    /// A run of the job starts: the run in flight before it, and whether its slot is new.
    private static func noteStart(_ r: RunRecord, in job: inout JobAudit) -> (other: Int64?, fresh: Bool) {
        let other = job.running
        let fresh = insert(r.earliest.milliseconds, into: &job.slotsRun)
        job.running = r.runID
        return (other, fresh)
    }

    /// A run's expiration came at `time`: its deadline, if its start was seen.
    private static func noteExpiration(at time: Instant, in run: inout RunAudit) -> Instant? {
        run.expiredAt = time
        return run.deadline
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
