import RefreshdCore
import RefreshdRuntime

/// The runtime's host in virtual time: a virtual clock, modelled processes, modelled conditions.
///
/// It is the swift-nio `EmbeddedEventLoop` of refreshd: the same `RefreshRuntime` that runs under
/// libuv runs here, and cannot tell. Nothing sleeps: `advance(by:)` jumps the clock from one
/// deadline to the next (the wake-up timer, a modelled process's end), delivering each event in
/// a fixed order, so days of a job's life take milliseconds and repeat exactly.
///
/// Faults are explicit calls: `crash()` drops the runtime as a kill -9 would (the store keeps only
/// what was committed; modelled processes live on until a new runtime reaps them), `stepClock`
/// moves the wall clock, `suspend` sleeps, `setConditions` changes power and network. Like the
/// libuv host it only reports: clock readings (a wall and a monotonic clock) at each wake-up and
/// clock notice, condition readings when asked; the runtime decides what they mean.
///
/// Single-threaded: call it from one thread; the runtime's effects run inline.
package final class SimulatedHost: RuntimeHost, @unchecked Sendable {
    /// A modelled run's processes: the leader, alive from its start until `endsAt` (or a
    /// signal), the children it leaves in its group, a holder of its results channel outside
    /// it. The run's entry lives until all are gone or its sweep kills them.
    struct Process {
        var order: LaunchOrder
        var instance: String
        var pid: Int32
        var endsAt: Instant
        var exit: RunExit
        var ignoresTerminate: Bool
        var results: [String]
        /// Live lines still to write, by instant (oldest first).
        var timed: [(at: Instant, line: String)] = []
        /// Whether the leader has exited (and the runtime was told).
        var exited = false
        /// Whether its group was SIGKILLed from outside the loop (`killLiveGroups`): the leader
        /// is dead, its exit not yet reported (the loop may be blocked in a call).
        var killed = false
        /// The children alive in its group, by pid.
        var children: [Int32] = []
        /// The holder outside its group, while alive, and when it closes the channel (nil: never).
        var holder: Int32?
        var holderModel: ResultsHolder?
        var holderCloses: Instant?
        /// Whether the host still reads the results channel.
        var resultsOpen = true

        /// The instant of its next event on its own: the leader's end, its next live line, the
        /// holder closing the channel.
        var nextEvent: Instant? {
            guard exited else {
                if let first = timed.first, first.at < endsAt { return first.at }
                return endsAt
            }
            return resultsOpen && holder != nil ? holderCloses : nil
        }

        /// Every process of the run alive now.
        var living: [Int32] { (exited || killed ? [] : [pid]) + children + (holder.map { [$0] } ?? []) }
    }

    /// The virtual wall clock.
    package internal(set) var clock: Instant
    /// The wall-clock instant at which the virtual monotonic clock read zero: it moves with
    /// every step and suspend, so the monotonic clock (`clock` minus it) does not.
    var monotonicOrigin: Instant
    /// Power and network as the modelled machine has them.
    package internal(set) var conditions: Conditions
    /// How each launched command behaves (default: a quick success).
    package var behaviour: @Sendable (LaunchOrder, CommandJob) -> Behaviour
    /// How each launched built-in action behaves (default: its body's result at once).
    package var actionBehaviour: @Sendable (LaunchOrder, BuiltInAction) -> ActionBehaviour = { _, _ in ActionBehaviour() }
    /// When set, commands run as real processes instead of `behaviour`'s models
    /// (`refreshd simulate --exec`; `SimulatedHost+Real`).
    package var real: (any RealCommands)?
    /// The modelled receiver of failure notifications: how an attempt at an instant goes
    /// (`SimulatedHost+Notifications`); by default every one is delivered at once.
    package var notificationReceiver: @Sendable (RunNotification, Instant) -> NotificationOutcome = { _, _ in .delivered }
    /// Every delivery attempt made, in order (the notification's id and the instant).
    package internal(set) var notificationAttempts: [(id: String, at: Instant)] = []
    /// The runtime running on this host now (nil after `crash()`, before `start`).
    package internal(set) var runtime: RefreshRuntime?
    /// Whether the current runtime has stopped (graceful stop complete).
    package internal(set) var stopped = false

    var wakeUp: Instant?
    var watchingConditions = false
    var conditionsReportDue = false
    var processes: [Int64: Process] = [:]
    /// What each modelled run uses (its `memory:` against its job's limit), until its end is reported.
    var usages: [Int64: RunUsage] = [:]
    /// Built-in actions running, by run id.
    var actionRuns: [Int64: ActionRun] = [:]
    var nextPID: Int32 = 1000
    /// Until when the runtime's loop is blocked in a call (`freeze(until:)`), and what waits
    /// for it, in order: its orders to the host, drains asked for, bodies (`performOnLoop`).
    package internal(set) var frozenUntil: Instant?
    var onLoop: [() -> Void] = []

    package init(start: Instant, conditions: Conditions = Conditions(externalPower: true, network: true),
                behaviour: @escaping @Sendable (LaunchOrder, CommandJob) -> Behaviour = { _, _ in .quickSuccess }) {
        clock = start
        monotonicOrigin = start
        self.conditions = conditions
        self.behaviour = behaviour
    }

    /// Starts a runtime on `store` (a new one after a crash or a stop: a restart). Its saved
    /// state is restored, and what a dead runtime left running is reaped, by the same rules as
    /// the real daemon.
    @discardableResult
    package func start(store: (any StateStoring)?, options: RefreshRuntime.Options = .init()) throws -> RefreshRuntime {
        let runtime = try RefreshRuntime(store: store, options: options)
        runtime.attach(self)
        self.runtime = runtime
        stopped = false
        wakeUp = nil
        watchingConditions = false
        conditionsReportDue = false
        return runtime
    }

    /// kill -9: the runtime vanishes mid-whatever; only what its store committed survives.
    /// Modelled processes keep running (they lead their own sessions) until reaped.
    package func crash() {
        runtime = nil
        // The thread blocked in a call dies with the process.
        frozenUntil = nil
        onLoop = []
        wakeUp = nil
        watchingConditions = false
        // Bodies in refreshd's process die with it; worker processes live on until reaped.
        actionRuns = actionRuns.filter { $0.value.workerPID != nil }
    }

    // MARK: Driving virtual time

    /// The next instant at which something happens on its own, if any.
    package var nextEventTime: Instant? {
        // A loop blocked in a call handles nothing before the call returns.
        if let frozenUntil { return frozenUntil }
        if conditionsReportDue { return clock }
        var next = wakeUp
        for a in actionRuns.values where next == nil || a.endsAt < next! { next = a.endsAt }
        for p in processes.values {
            if let at = p.nextEvent, next == nil || at < next! { next = at }
        }
        return next
    }

    /// Delivers the next event (at its instant); false when nothing is scheduled at all.
    @discardableResult
    package func step() -> Bool {
        guard let t = nextEventTime else { return false }
        clock = max(clock, t)
        deliver(at: clock)
        return true
    }

    /// Runs every event up to `end`, then leaves the clock at `end`.
    package func advance(to end: Instant) {
        var guardCount = 0
        while true {
            let next = nextEventTime
            if real != nil, passRealTime(until: min(next ?? end, end)) { continue }
            guard let t = next, t <= end else { break }
            clock = max(clock, t)
            deliver(at: clock)
            guardCount += 1
            precondition(guardCount < 10_000_000, "simulation does not advance: an event repeats at \(clock)")
        }
        clock = max(clock, end)
    }

    package func advance(by span: Duration) { advance(to: clock + span) }

    /// Steps until `condition` holds or `limit` of virtual time has passed; whether it held.
    @discardableResult
    package func advance(until condition: () -> Bool, limit: Duration = .seconds(86_400)) -> Bool {
        let end = clock + limit
        while !condition() {
            let next = nextEventTime
            if real != nil, passRealTime(until: min(next ?? end, end)) { continue }
            guard let t = next, t <= end else {
                clock = max(clock, end)
                return condition()
            }
            clock = max(clock, t)
            deliver(at: clock)
        }
        return true
    }

    /// Everything due at `t`, in a fixed order: condition readings, action ends (by run id),
    /// process ends (by run id), then the wake-up.
    func deliver(at t: Instant) {
        if let frozenUntil {
            guard frozenUntil <= t else { return }
            thaw()
        }
        if conditionsReportDue {
            conditionsReportDue = false
            runtime?.send(.conditionsChanged(conditions))
        }
        if !actionRuns.isEmpty { deliverActionEnds(at: t) }
        // Which kinds of process events are due (most steps have none, or one end): the sorted
        // walks below are only taken when needed.
        var linesDue = false, endsDue = false, closesDue = false
        for p in processes.values {
            if p.exited {
                if p.resultsOpen, p.holder != nil, let at = p.holderCloses, at <= t { closesDue = true }
                continue
            }
            if let first = p.timed.first, first.at <= t, first.at <= p.endsAt { linesDue = true }
            if p.endsAt <= t { endsDue = true }
        }
        // Live results lines due now, before any end at the same instant (a line written just
        // before the exit is read before the exit is reported).
        for runID in linesDue ? processes.keys.sorted() : [] {
            guard frozenUntil == nil, var p = processes[runID], !p.exited, let first = p.timed.first, first.at <= t, first.at <= p.endsAt else { continue }
            let due = p.timed.prefix { $0.at <= t && $0.at <= p.endsAt }
            p.timed.removeFirst(due.count)
            processes[runID] = p
            guard runtime?.instance == p.instance else { continue }
            for item in due { runtime?.runResultsRead(p.order, Array((item.line + "\n").utf8)) }
        }
        // A line may have expired or killed a run (its end is due now): look again.
        if linesDue, !endsDue { endsDue = processes.values.contains { !$0.exited && $0.endsAt <= t } }
        func end(_ runID: Int64) {
            guard frozenUntil == nil, var p = processes[runID], !p.exited, p.endsAt <= t else { return }
            // Only the runtime that launched it hears of it; an orphan just ends.
            guard let runtime, runtime.instance == p.instance else {
                processes[runID] = nil
                return
            }
            // Its last results, then its exit: the runtime decides (the group's kill, the grace).
            if !p.results.isEmpty {
                var bytes: [UInt8] = []
                for line in p.results { bytes += line.utf8; bytes.append(UInt8(ascii: "\n")) }
                runtime.runResultsRead(p.order, bytes)
            }
            p.exited = true
            guard !p.children.isEmpty || p.holder != nil else {
                // Its only writer gone, the channel closes with it: one report, and the run's
                // processes are all gone.
                processes[runID] = nil
                runtime.runLeaderExited(runID, exit: p.exit, resultsClosed: true)
                return
            }
            if let model = p.holderModel, case let .closesAfter(span) = model { p.holderCloses = t + span }
            processes[runID] = p
            runtime.runLeaderExited(runID, exit: p.exit)
            closeIfUnheld(runID)
        }
        if endsDue {
            // By run id, over the processes alive now (an end may start or signal others). One
            // process alive (the common case) needs no sorted list.
            if processes.count == 1, let runID = processes.keys.first {
                end(runID)
            } else {
                for runID in processes.keys.sorted() { end(runID) }
            }
        }
        // Holders outside a group that close a results channel now.
        for runID in closesDue ? processes.keys.sorted() : [] {
            guard frozenUntil == nil, var p = processes[runID], p.exited, p.resultsOpen, p.holder != nil,
                  let at = p.holderCloses, at <= t else { continue }
            p.holder = nil
            processes[runID] = p
            closeIfUnheld(runID)
        }
        if frozenUntil == nil, let w = wakeUp, w <= t {
            wakeUp = nil
            runtime?.timerFired(clocks: readClocks())
        }
    }

    /// Once the leader has exited, no child is left in its group and no holder outside it
    /// keeps the results channel: the channel closes, and the runtime hears of it. A run with
    /// nothing left alive leaves the process table.
    func closeIfUnheld(_ runID: Int64) {
        guard var p = processes[runID], p.exited, p.resultsOpen, p.children.isEmpty, p.holder == nil else { return }
        p.resultsOpen = false
        processes[runID] = p.living.isEmpty ? nil : p
        if runtime?.instance == p.instance { runtime?.runResultsClosed(runID) }
    }

    /// What machines published, by path: the latest contents (a removal drops the path).
    package internal(set) var publications: [String: String] = [:]
    /// How many publications (writes and removals) were made.
    package internal(set) var publicationCount = 0

    /// Called for each publication (the cluster simulation counts them across shard terms).
    package var onPublish: ((Publication) -> Void)?
}
