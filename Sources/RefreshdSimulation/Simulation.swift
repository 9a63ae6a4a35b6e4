import Foundation
import Logging
import RefreshdConfig
import RefreshdCore
import RefreshdRuntime
import RefreshdStore

/// Runs a scenario: the same runtime as `refreshd run`, on the simulated host with the in-memory
/// store, for days of virtual time in a fraction of a second, with the device model and the
/// faults applied at their instants and every invariant checked after every step.
///
/// Deterministic: the same scenario (jobs, start, seed, faults) gives the same report, byte for
/// byte. A violated invariant stops the run; the report says where, with the recent events.
package final class Simulation: @unchecked Sendable {
    package let scenario: Scenario
    let random: SeededRandom
    let zone: TimeZone
    let host: SimulatedHost
    let store: InMemoryStore
    let end: Instant
    /// Runs launched per job so far (the Nth run of a fault), across restarts.
    let runCounts = RunCounter()
    let journal = Journal()
    /// Every run, never pruned (the store keeps a month), for the report.
    let history = RunHistory()
    /// What providers returned, activity transitions, the widget and activity audits.
    let side = SideJournal()
    /// Failure and recovery notifications seen (issue 25), for the report.
    let notificationTally = NotificationTally()
    /// The jobs as loaded (the device's budget override applied).
    let specs: [JobSpec]
    /// The modelled built-in actions (staging, the playlist provider) and their container.
    let actions: SimulatedActions
    /// Each widget kind's budget as its job declares it (after the override).
    let budgets: [String: ReloadBudget]
    var budgetEmpty = false
    /// The last applied update's timestamp seen per activity (updates apply in order).
    var lastUpdate: [String: Instant] = [:]
    var publicationsChecked = -1
    /// Each widget publication's contents when it last passed the entry check.
    var checkedWidgetEntries: [String: String] = [:]
    /// The runtime and side-machine revision last checked, and the instant from which the
    /// 12 h visibility check (the one that reads the clock) could fail without a new event.
    var sideChecked: (runtime: ObjectIdentifier, revision: UInt64)?
    var sideCheckDueAt: Instant?
    var storeFull = false
    var violations: [SimulationReport.Violation] = []
    var faultLog: [SimulationReport.FaultRecord] = []
    var downSpans: [(Instant, Instant, String)] = []
    var downSince: Instant?
    /// Steps taken (events delivered), for the speed figures.
    package private(set) var steps = 0
    /// Whether observers get the per-run events (submitted, launched, finished, held). Off: three
    /// observations a run that only a violation's report reads (its recent events), so a run
    /// that ends in a violation is run again with them on (see `run`). On with `--exec`: real
    /// commands are not run twice.
    var routineEvents = false
    /// What must hold across a kill -9: pending requests committed before it, by identifier.
    var pendingAtCrash: [String: Instant]?
    var lastRunIDAtCrash: Int64 = 0
    var crashTime: Instant?

    /// Whether real commands run (`real`) instead of the jobs' models.
    package let executesCommands: Bool
    /// Asked before every step: true stops the run where it is (`simulate --exec` was sent
    /// SIGTERM or SIGINT); the report covers what was simulated until then.
    package var stopRequested: (@Sendable () -> Bool)?

    /// - Parameter real: with it, the jobs' real commands run there (`simulate --exec`: the
    ///   libuv host's process code, `ExecutedCommands`, which this module cannot see) instead of
    ///   their `simulate:` models, and built-in actions do their real work.
    package init(scenario: Scenario, real: (any RealCommands)? = nil) {
        self.scenario = scenario
        executesCommands = real != nil
        random = SeededRandom(seed: scenario.seed)
        zone = TimeZone(identifier: scenario.timeZone) ?? TimeZone(identifier: "UTC")!
        end = scenario.until ?? scenario.start + .seconds(Int64(scenario.days) * 86_400)
        let (specs, instanceModels) = Self.specs(of: scenario)
        // Built-in actions stay actions (the runtime runs them); their models give the simulated
        // host each run's behaviour. With --exec the real bodies run.
        let actions = real != nil ? SimulatedActions() : SimulatedActions.model(specs)
        self.actions = actions
        self.specs = specs
        budgets = Dictionary(specs.compactMap { spec in
            spec.widget.map { ($0.kind, $0.budget.map { ReloadBudget.limited($0) } ?? .unlimited) }
        }, uniquingKeysWith: { a, _ in a })
        // Real commands carry the instance in their environment, and the end of each run kills
        // every process naming it: one of their own per simulation, so that two at once (of
        // the same seed) never take each other's processes for leftovers.
        store = InMemoryStore(instanceID: String(format: "%016llx", real != nil ? UInt64.random(in: 1...UInt64.max) : scenario.seed))
        let runs = RunModels(scenario: scenario, specs: specs, instanceModels: instanceModels, actions: actions,
                             counter: runCounts, random: random, side: side, zone: zone)
        host = SimulatedHost(start: scenario.start, conditions: Conditions(externalPower: true, network: true)) { order, _ in
            runs.behaviour(order)
        }
        host.notificationReceiver = NotificationTally.receiver(scenario)
        if real == nil {
            host.actionBehaviour = { order, action in
                let run = runs.behaviour(order)
                if let staging = actions.stagingModel(order.identifier) {
                    return SimulatedActions.behaviour(run, whenExpired: staging.expiredResult(at: order.started),
                                                      ignoresExpiration: false)
                }
                // The playlist provider reads a few small files and never looks at `isExpired`:
                // one that overruns is abandoned when its grace ends.
                let provider = action.name == SimulatedActions.playlistProviderName
                return SimulatedActions.behaviour(run, whenExpired: ActionResult(success: false, log: ["\(action.name): stopped at its expiration"]),
                                                  ignoresExpiration: provider)
            }
        }
        if let real {
            routineEvents = true
            host.real = real
        }
        connectStore()
    }

    /// The jobs as the simulation runs them: the device's widget budget override applied, and a
    /// template's `simulate: {instances: N, failing: P}` drawn as N instances of keys from the
    /// seed, the first N * P of them failing every run (their models by identifier).
    static func specs(of scenario: Scenario) -> (specs: [JobSpec], instanceModels: [String: JobModel]) {
        var specs = scenario.jobs.map(\.spec)
        if let override = scenario.device.widgetBudget {
            for i in specs.indices where specs[i].widget != nil { specs[i].widget?.budget = override }
            for i in specs.indices where specs[i].template?.widget != nil { specs[i].template?.widget?.budget = override }
        }
        var instanceModels: [String: JobModel] = [:]
        for (i, job) in scenario.jobs.enumerated() {
            guard let count = job.model.instances, let template = specs[i].template else { continue }
            let records = Self.simulatedInstances(of: specs[i].identifier, parameters: template.parameters,
                                                  count: count, seed: scenario.seed)
            specs[i].instanceSource = InstanceSource(records)
            var failing = job.model
            failing.outcomes = JobModel.OutcomeWeights(success: 0, failure: 1, crash: 0)
            for record in records.prefix(Int((Double(count) * job.model.failing).rounded())) {
                instanceModels[record.identifier] = failing
            }
        }
        return (specs, instanceModels)
    }

    /// What the store's commits feed: the run history, the modelled actions' container, the
    /// journal's audit, and the injected store-full fault. Last in `init`: it needs `self`.
    private func connectStore() {
        // The store's closures reach the host only through `self`, unowned: the host holds the
        // runtime, the runtime the store, so a closure holding the host strongly was a cycle
        // that kept every simulation's store (a month of runs) alive: explored plans leaked
        // about 9 MB each, 10 GB for a thousand.
        let journal = self.journal
        for job in scenario.jobs {
            guard let widget = job.spec.widget else { continue }
            for family in widget.families { journal.providerWidgets["\(job.spec.identifier)#\(family)"] = "\(widget.kind)/\(family)" }
        }
        let history = self.history
        let actions = self.actions
        store.onCommit = { changes in
            history.fold(changes)
            actions.fold(changes)
        }
        store.commitFault = { [unowned self] _, changes in
            if self.storeFull { return InMemoryStore.Failure(.injected, "disk full (injected store-full fault)") }
            journal.audit(changes, at: self.host.clock)
            return nil
        }
    }

    /// `count` instances of a template, their keys 16 hex digits drawn from the seed (a
    /// bijection of the index: distinct, and the same for a seed), every parameter's value the
    /// key.
    static func simulatedInstances(of template: String, parameters: [String], count: Int, seed: UInt64) -> [InstanceRecord] {
        (0..<count).map { index in
            var z = seed &+ UInt64(index) &* 0x9E37_79B9_7F4A_7C15
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            z ^= z >> 31
            let key = String(format: "%016llx", z)
            return InstanceRecord(template: template, key: key,
                                  values: Dictionary(uniqueKeysWithValues: parameters.map { ($0, key) }))
        }
    }

    // MARK: Running

    /// Runs the whole scenario and returns its report; `keepingRuns: false` leaves each job's
    /// list of runs empty (the figures are all there), for explored plans whose runs nobody reads.
    ///
    /// - Parameter progress: called with the number of whole days simulated, each time virtual
    ///   time passes into a new one (24 h from the start), for a progress line.
    package func run(keepingRuns: Bool = true, progress: ((_ days: Int) -> Void)? = nil) -> SimulationReport {
        var external = externalEvents()
        startRuntime()
        check()
        var nextDay = scenario.start + .seconds(86_400)
        var daysDone = 0
        while violations.isEmpty, stopRequested?() != true {
            if let progress, host.clock >= nextDay {
                while host.clock >= nextDay {
                    daysDone += 1
                    nextDay = nextDay + .seconds(86_400)
                }
                progress(daysDone)
            }
            let nextExternal = external.first?.time
            let nextInternal = host.nextEventTime
            let next: Instant? = switch (nextExternal, nextInternal) {
            case let (a?, b?): min(a, b)
            case let (a, b): a ?? b
            }
            // Real commands running: virtual time runs with real time until then, or a real event.
            if executesCommands, host.passRealTime(until: min(next ?? end, end)) {
                steps += 1
                afterStep()
                continue
            }
            guard let t = next, t < end else { break }
            if let inner = nextInternal, inner <= t, nextExternal.map({ inner <= $0 }) ?? true {
                host.step()
                steps += 1
                afterStep()
            } else {
                let event = external.removeFirst()
                host.advance(to: event.time)
                apply(event)
                steps += 1
                afterStep()
            }
        }
        // The steps were checked by what they changed; the end once more in full.
        if violations.isEmpty, let runtime = host.runtime, !host.stopped, let v = runtime.checkInvariants().first {
            violations.append(.init(time: host.clock, invariant: v.invariant.rawValue, message: v.description,
                                    recent: journal.recent()))
        }
        if !violations.isEmpty, !routineEvents {
            // The per-run events were off, and the violation's report lists the events before
            // it: the same scenario again with them on. Deterministic, so it stops at the same
            // step with the same violation; only failing runs pay for the second pass. Should
            // it ever not, this run's report stands (without those events).
            let replay = Simulation(scenario: scenario)
            replay.routineEvents = true
            let report = replay.run(keepingRuns: keepingRuns)
            if let again = report.violations.first, let first = violations.first,
               again.time == first.time, again.invariant == first.invariant, again.message == first.message {
                return report
            }
        }
        host.advance(to: max(host.clock, min(end, host.clock)))
        if let since = downSince { downSpans.append((since, end, "down")) }
        return SimulationReport.build(self, keepingRuns: keepingRuns)
    }

    func afterStep() {
        if host.stopped, let runtime = host.runtime, runtime.failure != nil, !storeFull {
            // Stopped by a store failure whose span is over: the supervisor restarts it.
            _ = runtime
            host.crash()
            startRuntime()
        }
        check()
    }

    func makeRuntime() -> RefreshRuntime? {
        // Routine log lines (submitted, launched, finished) are off at this logger's level, and
        // `observe` below turns them on only for a replay (`routineEvents`).
        let configuration = SchedulerConfiguration(maxConcurrentRuns: scenario.maxConcurrentRuns, seed: scenario.seed)
        var logger = Logger(label: "simulate") { _ in SwiftLogNoOpLogHandler() }
        logger.logLevel = .critical
        do {
            let runtime = try host.start(store: store, options: .init(configuration: configuration,
                                                                      sharedContainer: scenario.sharedContainer, logger: logger,
                                                                      actions: executesCommands ? scenario.actions
                                                                          : SimulatedActions.binding.merging(scenario.actions)))
            // Real commands see refreshd's own environment under them, as under the daemon.
            if executesCommands { runtime.baseEnvironment = ProcessInfo.processInfo.environment }
            if case let .delayed(maximum) = scenario.device.discretion {
                runtime.setAdmissionPolicy(DiscretionPolicy(maximum: maximum, random: random))
            }
            let journal = self.journal
            let side = self.side
            let tally = self.notificationTally
            runtime.observe(includingRoutine: routineEvents) { observation in
                journal.record(observation)
                side.record(observation)
                tally.record(observation)
            }
            return runtime
        } catch {
            violations.append(.init(time: host.clock, invariant: "store-readable",
                                    message: "the store could not be read at a restart: \(error)",
                                    recent: journal.recent()))
            return nil
        }
    }

    func startRuntime() {
        if scenario.hooks.losePendingAfterKill, let before = pendingAtCrash {
            // The injected defect: the restore forgets one committed request (of a job that is
            // not on a calendar, where re-seeding would happen to recreate the same one).
            let plain = Set(scenario.jobs.filter { $0.spec.definition.schedule == nil }.map(\.spec.identifier))
            if let victim = before.keys.sorted().first(where: plain.contains) ?? before.keys.sorted().first {
                _ = try? store.apply([.deletePending(identifier: victim)])
            }
        }
        guard let runtime = makeRuntime() else { return }
        if let since = downSince {
            downSpans.append((since, host.clock, "down"))
            downSince = nil
        }
        runtime.setWidgetCountingDays(countingDays)
        if isLowPower(at: host.clock) { runtime.setLowPowerMode(true) }  // before the restore asks for reloads
        runtime.load(specs)
        if budgetEmpty { runtime.setWidgetBudgets(.limited(0)) }
        applyDevice(force: true)
        verifyNothingLost(runtime)
    }

    // MARK: Days in the scenario's zone

    /// The scenario zone's UTC offsets from a day before the start to two after the end: the
    /// widget counter days are the report's local days.
    var countingDays: CountingDays {
        if scenario.widgetDaysInUTC { return .utc }
        func seconds(_ t: Instant) -> Int64 {
            Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(t.milliseconds) / 1000)))
        }
        var t = scenario.start - .seconds(86_400)
        var offsets = [(from: t, seconds: seconds(t))]
        let last = end + .seconds(2 * 86_400)
        while let next = zone.nextDaylightSavingTimeTransition(after: Date(timeIntervalSince1970: Double(t.milliseconds) / 1000)) {
            t = Instant(milliseconds: Int64((next.timeIntervalSince1970 * 1000).rounded()))
            guard t < last else { break }
            offsets.append((from: t, seconds: seconds(t)))
        }
        return CountingDays(offsets: offsets)
    }

    func minuteOfDay(_ t: Instant) -> Int {
        let seconds = Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(t.milliseconds) / 1000)))
        let local = t.milliseconds / 1000 + seconds
        return Int(((local % 86_400) + 86_400) % 86_400 / 60)
    }

    func startOfDay(containing t: Instant) -> Instant {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let date = calendar.startOfDay(for: Date(timeIntervalSince1970: Double(t.milliseconds) / 1000))
        return Instant(milliseconds: Int64(date.timeIntervalSince1970 * 1000))
    }

    func nextDay(after day: Instant) -> Instant {
        startOfDay(containing: day + .seconds(86_400 + 7200))
    }

    func localMinute(_ minute: Int, day: Instant) -> Instant {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let base = Date(timeIntervalSince1970: Double(day.milliseconds) / 1000)
        let date = calendar.date(bySettingHour: minute / 60, minute: minute % 60, second: 0, of: base) ?? base
        return Instant(milliseconds: Int64(date.timeIntervalSince1970 * 1000))
    }

    func dayLabel(_ t: Instant) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = zone
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.string(from: Date(timeIntervalSince1970: Double(t.milliseconds) / 1000))
    }
}
