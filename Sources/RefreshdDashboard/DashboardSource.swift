import Foundation
import Logging
import RefreshdCore
import RefreshdDaemon
import RefreshdRuntime
import RefreshdStore

/// What the dashboard reads and does, reached only through the daemon's thread-safe doors:
///
/// - **The loop** (`onLoop`): live facts (snapshot, widgets, activities, the jobs in force) and
///   every command (`ControlServer.answer`, the control socket's own code) are handed to the
///   libuv loop with `performOnLoop` (a locked queue plus `uv_async_send`, which coalesces), and
///   the reply comes back through a continuation. The loop does a few microseconds of work per
///   hop and never waits for the web side; live facts are shared by the requests of one 200 ms
///   window, so a flood of page loads costs the loop at most five gathers a second.
/// - **The state** (`readState`, a `StateReader`): runs, counters and widget records are read on a serial queue
///   of the dashboard's own, through a read-only SQLite connection (WAL: it never blocks the
///   writer), as `status` does on the control socket.
/// - **Observations** arrive from `RefreshRuntime.observe` (on the loop) into `EventFeed` under
///   its lock, and are taken from there by the SSE streams. A run's output is not kept here:
///   the store keeps it with the run (`RunOutput`), so it survives other runs and restarts.
package final class DashboardSource: @unchecked Sendable {
    package let parts: DaemonParts
    package let feed = EventFeed()
    package let simulations = SimulationRunner()
    package let replays = ReplayRunner()
    package let notices = NotificationNotices()
    private let storeQueue = DispatchQueue(label: "refreshd.web.store")
    /// Store queue only.
    private var store: StateStore?
    private let lock = Lock()
    /// Guarded by `lock`: the live facts of the last gather and the requests waiting for one.
    private var cached: (Live, ContinuousClock.Instant)?
    private var waiting: [CheckedContinuation<Live, any Error>]?
    /// Store reads queued or running (bounded: past `maxStoreReads` a page is answered 503).
    private var storeReads = 0
    static let maxStoreReads = 32
    static let liveReuse: Duration = .milliseconds(200)
    /// The scheduler's invariants, checked by a gather at most once a minute.
    let invariants: InvariantsCadence
    static let loopTimeout: Duration = .seconds(5)

    var runtime: RefreshRuntime { parts.scheduler.runtime }
    package var sharedContainer: String? { runtime.options.sharedContainer }

    package init(parts: DaemonParts, invariants: InvariantsCadence = InvariantsCadence()) {
        self.parts = parts
        self.invariants = invariants
        let feed = feed, notices = notices
        let observer: @Sendable (RuntimeObservation) -> Void = { observation in
            notices.record(observation)
            feed.publish(observation)
        }
        // A node: the observations of every shard it leads (other nodes' runs show at the next
        // event here, or the next page load).
        if let node = parts.node { node.observe(observer) } else { parts.scheduler.runtime.observe(observer) }
    }

    deinit { store?.close() }

    /// Runs `body` on the loop thread and returns its value; gives up after `loopTimeout`
    /// (refreshd stopping: the loop no longer runs queued work).
    func onLoop<T: Sendable>(_ body: @escaping @Sendable () -> T) async throws -> T {
        try await onLoop { done in done(body()) }
    }

    /// `onLoop` for a body that hands its result to `done` (at once, or later from any thread:
    /// a cluster node's command once its leaders applied it); the same 5 s bound.
    func onLoop<T: Sendable>(_ body: @escaping @Sendable (_ done: @escaping @Sendable (T) -> Void) -> Void) async throws -> T {
        let once = Once<T>()
        return try await withCheckedThrowingContinuation { continuation in
            once.set(continuation)
            parts.scheduler.performOnLoop { body { once.resume(.success($0)) } }
            Task {
                try? await Task.sleep(for: Self.loopTimeout)
                once.resume(.failure(WebError.unavailable("refreshd's loop did not answer within 5 s (it is stopping)")))
            }
        }
    }

    /// The live facts, gathered on the loop at most once per `liveReuse`.
    package func live() async throws -> Live {
        enum Step { case ready(Live), wait, gather }
        let step: Step = lock.withLock {
            if let (live, at) = cached, ContinuousClock.now - at < Self.liveReuse { return .ready(live) }
            if waiting != nil { return .wait }
            waiting = []
            return .gather
        }
        switch step {
        case let .ready(live): return live
        case .wait:
            return try await withCheckedThrowingContinuation { continuation in
                let queued = lock.withLock { () -> Bool in
                    guard waiting != nil else { return false }
                    waiting!.append(continuation)
                    return true
                }
                if !queued {
                    Task { do { continuation.resume(returning: try await self.live()) } catch { continuation.resume(throwing: error) } }
                }
            }
        case .gather:
            let control = parts.control, runtime = runtime
            let result: Result<Live, any Error>
            do {
                if let node = parts.node {
                    // A node's facts are the database's: read off the loop, on the store queue.
                    result = .success(try await readState { try Live.gather(node, $0) })
                } else {
                    result = .success(try await invariants.gather(\.violations) { check in
                        try await self.onLoop { Live.gather(runtime, control, checkInvariants: check) }
                    })
                }
            } catch {
                result = .failure(error)
            }
            let woken = lock.withLock { () -> [CheckedContinuation<Live, any Error>] in
                if case let .success(live) = result { cached = (live, ContinuousClock.now) }
                defer { waiting = nil }
                return waiting ?? []
            }
            for continuation in woken { continuation.resume(with: result) }
            return try result.get()
        }
    }

    /// The live facts with the pending requests of `identifiers` (instances: their requests
    /// are left out of the shared ones unless failing or paused), gathered for this request.
    package func live(also identifiers: [String]) async throws -> Live {
        guard !identifiers.isEmpty, parts.node == nil else { return try await live() }
        let control = parts.control, runtime = runtime
        var live = try await onLoop { Live.gather(runtime, control, also: identifiers, checkInvariants: false) }
        live.violations = invariants.latest
        return live
    }

    /// The jobs in force, without the other live facts (whose snapshot holds every pending
    /// request) and without a hop to the loop (the runtime keeps them under its lock): one
    /// machine's runtime's, a node's own list.
    package func jobs() -> [String: JobSpec] {
        if let node = parts.node { return Dictionary(node.jobs().map { ($0.identifier, $0) }, uniquingKeysWith: { first, _ in first }) }
        return runtime.jobsInForce
    }

    /// Drops the cached live facts (after an action, so its page shows what it did).
    func invalidate() { lock.withLock { cached = nil } }

    /// One control command, carried out on the loop by the control server's code.
    /// `invalidates`: false for a read (`instance-list`), which changes nothing.
    package func command(_ request: ControlRequest, invalidates: Bool = true) async throws -> ControlReply {
        let control = parts.control
        let reply: ControlReply = try await onLoop { done in control.answer(request, done: done) }
        if invalidates { invalidate() }
        return reply
    }

    /// Reads the state on the dashboard's queue: one machine's through its read-only SQLite
    /// connection, a node's every shard from the database (`StateReader` either way).
    package func readState<T: Sendable>(_ body: @escaping @Sendable (StateReader) throws -> T) async throws -> T {
        let admitted = lock.withLock { () -> Bool in
            guard storeReads < Self.maxStoreReads else { return false }
            storeReads += 1
            return true
        }
        guard admitted else { throw WebError.unavailable("too many pages are being read at once; try again") }
        let directory = parts.stateDirectory
        return try await withCheckedThrowingContinuation { continuation in
            storeQueue.async { [self] in
                defer { lock.withLock { storeReads -= 1 } }
                do {
                    if let node = parts.node {
                        continuation.resume(returning: try body(try node.reader()))
                        return
                    }
                    if store == nil { store = try StateStore.open(directory: directory, readOnly: true) }
                    continuation.resume(returning: try body(StateReader(stores: [store!], jobs: [])))
                } catch {
                    store?.close()
                    store = nil
                    continuation.resume(throwing: WebError.unavailable("the state could not be read: \(error)"))
                }
            }
        }
    }
}

/// The scheduler's invariants as the dashboard shows them. A full check reads every pending
/// request (about 1 s of the loop at 1,000,000 instances), so a gather checks them when the last
/// check is `every` old (or there was none) and otherwise shows what that check found.
package final class InvariantsCadence: @unchecked Sendable {
    let every: Duration
    private let now: @Sendable () -> ContinuousClock.Instant
    private let lock = Lock()
    /// Guarded by `lock`: the last check's findings, and when it was made.
    private var last: (violations: [InvariantViolation], at: ContinuousClock.Instant)?

    /// `now`: the instant source (a test's own).
    init(every: Duration = .seconds(60), now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }) {
        (self.every, self.now) = (every, now)
    }

    /// What the last check found (none before the first).
    var latest: [InvariantViolation] { lock.withLock { last?.violations ?? [] } }

    /// The facts `gather` takes, told whether to check the invariants (a check due), with
    /// `violations` the check's or, when none was due, the last check's.
    func gather<Facts>(_ violations: WritableKeyPath<Facts, [InvariantViolation]>,
                       _ gather: (_ check: Bool) async throws -> Facts) async rethrows -> Facts {
        let previous = lock.withLock { last }
        let check = previous.map { now() - $0.at >= every } ?? true
        var facts = try await gather(check)
        if check {
            let at = now()
            lock.withLock { last = (facts[keyPath: violations], at) }
        } else {
            facts[keyPath: violations] = previous?.violations ?? []
        }
        return facts
    }
}

/// The live facts of one moment, taken on the loop thread.
package struct Live: Sendable {
    package var now: Instant
    /// The core's state, without the pending requests of templates' instances that are neither
    /// failing nor paused (`RefreshRuntime.snapshot(quietInstances:also:)`): at a million
    /// instances, copying and sorting theirs took the loop seconds a gather. The store counts
    /// them (`InstanceCounts`).
    package var snapshot: SchedulerSnapshot
    /// Every pending request, counted.
    package var pendingCount: Int
    package var timelines: TimelineSnapshot
    package var activities: ActivitySnapshot
    package var jobs: [String: JobSpec]
    package var violations: [InvariantViolation]
    var definitions: TaskDefinitions
    var maxConcurrentRuns: Int
    /// The control server's latest observations, oldest first (what `why` reads).
    var recent: [RuntimeObservation]
    /// Failure notifications waiting (held) and what they came to since this refreshd started.
    package var heldNotifications: [RunNotification]
    package var notificationCounts: NotificationCounts
    /// A node's facts, read from the database (one machine's come from its scheduler's memory).
    var fromDatabase = false

    /// What `why` takes from one machine's live facts.
    var whyMemory: WhyFacts.Memory {
        WhyFacts.Memory(snapshot: snapshot, definitions: definitions, timelines: timelines, activities: activities,
                        recent: recent, maxConcurrentRuns: maxConcurrentRuns)
    }

    /// A node's: every shard's pending requests, runs in flight, widgets, activities and held
    /// notifications from the database. What only a shard's live core knows (failure streaks,
    /// the invariants, the latest observations) is not here: `why` and the pages say less.
    static func gather(_ node: NodeFacts, _ reader: StateReader) throws -> Live {
        let (snapshot, _) = try node.view()
        let saved = try reader.savedMachineState()
        let now = Instant(secondsSinceEpoch: Date().timeIntervalSince1970)
        let jobs = node.jobs()
        var definitions = TaskDefinitions()
        for spec in jobs where spec.template == nil { definitions[spec.identifier] = spec.definition }
        return Live(now: now, snapshot: snapshot, pendingCount: snapshot.pending.count, timelines: saved.timelineSnapshot(at: now), activities: saved.activitySnapshot(at: now),
                    jobs: Dictionary(jobs.map { ($0.identifier, $0) }, uniquingKeysWith: { first, _ in first }),
                    violations: [], definitions: definitions, maxConcurrentRuns: node.maxConcurrentRuns, recent: [],
                    heldNotifications: try reader.heldNotifications(), notificationCounts: NotificationCounts(),
                    fromDatabase: true)
    }

    /// `checkInvariants`: false leaves `violations` empty (the caller has them from earlier).
    static func gather(_ runtime: RefreshRuntime, _ control: ControlServer, also: [String] = [], checkInvariants: Bool = true) -> Live {
        let (snapshot, pendingCount) = runtime.snapshot(quietInstances: false, also: also)
        return Live(now: runtime.now, snapshot: snapshot, pendingCount: pendingCount, timelines: runtime.timelineSnapshot(),
             activities: runtime.activitySnapshot(), jobs: runtime.jobsInForce,
             violations: checkInvariants ? runtime.checkInvariants() : [], definitions: runtime.definitions,
             maxConcurrentRuns: runtime.options.configuration.maxConcurrentRuns,
             recent: control.recentObservations, heldNotifications: runtime.heldNotifications,
             notificationCounts: runtime.notificationCounts)
    }
}

/// Why a request could not be served, with its HTTP status.
package enum WebError: Error, CustomStringConvertible {
    case unavailable(String)
    case notFound(String)
    case badRequest(String)

    package var description: String {
        switch self {
        case let .unavailable(text), let .notFound(text), let .badRequest(text): text
        }
    }
}

/// A continuation resumed once, by whichever of the loop's answer and the timeout comes first.
final class Once<T: Sendable>: @unchecked Sendable {
    private let lock = Lock()
    private var continuation: CheckedContinuation<T, any Error>?
    private var early: Result<T, any Error>?

    func set(_ continuation: CheckedContinuation<T, any Error>) {
        let ready: Result<T, any Error>? = lock.withLock {
            if let early { return early }
            self.continuation = continuation
            return nil
        }
        if let ready { continuation.resume(with: ready) }
    }

    func resume(_ result: Result<T, any Error>) {
        let continuation: CheckedContinuation<T, any Error>? = lock.withLock {
            guard let continuation = self.continuation else {
                if early == nil { early = result }
                return nil
            }
            self.continuation = nil
            early = result
            return continuation
        }
        continuation?.resume(with: result)
    }
}
