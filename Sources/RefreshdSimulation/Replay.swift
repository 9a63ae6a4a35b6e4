import RefreshdConfig
import RefreshdCore

/// `simulate --replay FROM..TO` (issue 34): a recorded stretch of time as a scenario the real
/// engine runs again, with what the world did then.
///
/// Pure: the runs and the world's events a store recorded in, a scenario out. Nothing here
/// decides what refreshd does; the recorded events become the simulator's own faults, which
/// the same runtime meets as it met the world:
/// - a `stopping` record and the next `started`: refreshd down between them (`Fault.down`);
/// - a `started` that no stop precedes: a kill -9 at the last instant the store knew of (a
///   run's start or end, a world event) and a restart at the record (`Fault.kill`);
/// - a clock step: the wall clock stepped at the instant it was expected (`Fault.clockStep`);
/// - conditions: spans without power or network (`Fault.powerLoss`, `Fault.networkLoss`); a
///   start forgets them (the core starts from the defaults and records a first reading that
///   differs);
/// - an operator's pause and resume (`Fault.pause`), and the other orders from outside the job
///   files: a submit, a cancel, a launch or expiration now, a widget reload, an activity's
///   start, update or end, instances added or removed (`Fault.order`);
/// - a reload of the job files: said in the notes, not replayed (`reloadNotes`);
/// - each job's Nth run lasts, ends and writes its results lines as its Nth recorded run in
///   the period did (`Replay.lines`)
///   (`JobModel.replayed`; one refreshd interrupted lasts past the instant it was ended), an
///   unfinished one, or one past the recorded, drawn from the model calibrated from the
///   period's runs (`Calibration`).
///
/// ```swift
/// let setup = Replay.scenario(base, runs: runs, world: world, from: from, to: to)
/// let report = Simulation(scenario: setup.scenario).run()
/// ```
package enum Replay {
    /// A scenario to run, and what the replay could not reproduce (said to the user).
    package struct Setup: Sendable {
        package var scenario: Scenario
        /// Jobs whose recorded runs were used, by identifier.
        package var replayedJobs: [String]
        package var notes: [String]
    }

    /// `base` (the jobs as loaded, for the same or changed files) over `from..<to`, with the
    /// recorded runs and world events. `recordedFiles`: the jobs that ran, when `base` holds
    /// changed files (a what-if): a job keeps its recorded runs only where its command, action
    /// and `simulate:` block are those that ran (otherwise its runs would be another job's).
    package static func scenario(_ base: Scenario, runs: [RunRecord], world: [WorldEvent], from: Instant, to: Instant,
                                 recordedFiles: Scenario? = nil) -> Setup {
        var setup = base
        var notes: [String] = []
        let (start, faults) = faults(world: world, runs: runs, from: from, to: to)
        if start > from { notes.append("refreshd was not running at \(from.iso8601): the replay starts at its start, \(start.iso8601)") }
        setup.start = start
        setup.until = max(to, start + .milliseconds(1))
        setup.days = max(1, Int((setup.until!.milliseconds - start.milliseconds + 86_399_999) / 86_400_000))
        setup.faults = faults
        setup.widgetDaysInUTC = true
        let period = runs.filter { $0.started >= start && $0.started < to }
        let ran = Dictionary(grouping: period.sorted { $0.runID < $1.runID }, by: \.identifier)
        let calibrated = Calibration.derive(runs: period)
        let sameAs = recordedFiles.map { files in Dictionary(files.jobs.map { ($0.spec.identifier, $0) }, uniquingKeysWith: { a, _ in a }) }
        var replayed: [String] = []
        for index in setup.jobs.indices {
            let job = setup.jobs[index]
            if let sameAs {
                guard let was = sameAs[job.spec.identifier], was.spec.command == job.spec.command,
                      was.spec.action == job.spec.action, was.model == job.model else { continue }
            }
            // Its own runs, its providers' (`JOB#FAMILY`), its instances' and theirs.
            let mine = ran.filter { Self.launches($0.key, of: job.spec.identifier) }
            guard !mine.isEmpty else { continue }
            var one = setup
            one.jobs = [job]
            _ = one.apply(calibrated)
            setup.jobs[index].model = one.jobs[0].model
            setup.jobs[index].model.replayed = mine.mapValues { $0.map(replayedRun) }
            replayed.append(job.spec.identifier)
        }
        let declared = setup.jobs.map(\.spec.identifier)
        let unknown = Set(ran.keys).filter { id in !declared.contains { Self.launches(id, of: $0) } }
        if !unknown.isEmpty {
            notes.append("runs of jobs the files do not declare (not replayed): " + unknown.sorted().joined(separator: ", "))
        }
        notes += reloadNotes(world: world, from: start, to: to)
        notes.append("the replay starts from an empty state: requests pending at \(start.iso8601) are those a first start makes")
        return Setup(scenario: setup, replayedJobs: replayed.sorted(), notes: notes)
    }

    /// What the replay cannot reproduce of the job files' reloads in `from..<to`: it runs the
    /// whole period with one folder's files, and the store keeps which jobs a reload changed,
    /// not the files (they may hold secrets, and every version of every file is no bounded
    /// history): so a changed job's runs before its reload were another version's.
    static func reloadNotes(world: [WorldEvent], from: Instant, to: Instant) -> [String] {
        world.filter { $0.at >= from && $0.at < to }.sorted { $0.at < $1.at }.compactMap { event in
            guard case let .reload(changed) = event.what else { return nil }
            let shown = changed.prefix(10).joined(separator: ", ") + (changed.count > 10 ? " and \(changed.count - 10) more" : "")
            return "the job files were reloaded at \(event.at.iso8601) (added, changed or removed: \(shown)): the replay runs "
                + "the whole period with one set of files, so these jobs' runs on the other side of the reload follow files that did not run then"
        }
    }

    /// Whether `identifier` is a launch of job `job`'s: itself, one of its widget's providers
    /// (`JOB#FAMILY`), an instance of it (`JOB[KEY]`) or an instance's provider.
    static func launches(_ identifier: String, of job: String) -> Bool {
        let launched = identifier.firstIndex(of: "#").map { String(identifier[..<$0]) } ?? identifier
        return launched == job || InstanceName.split(launched)?.template == job
    }

    /// How a recorded run plays again; nil for a run unfinished in the record. Its results
    /// lines (kept with it, `run --keep-output`) are written again: a provider's timeline is
    /// the one it returned then, a job's activity lines and other lines those it wrote
    /// (`Replay.lines`), whatever its end (a failed run's live lines were applied as well).
    static func replayedRun(_ run: RunRecord) -> JobModel.ReplayedRun? {
        guard let ended = run.ended, let outcome = run.outcome else { return nil }
        let duration = ended.duration(since: run.started)
        let results = run.output.results
        switch outcome {
        case .success: return .init(duration: duration, exit: .exited(0), results: results)
        case .failure: return .init(duration: duration, exit: .exited(run.exitStatus ?? 1), results: results)
        case .crashed: return .init(duration: duration, exit: .signaled(run.signal ?? 11), results: results)
        case .expired:
            // Past its deadline, so that under the same allowance it expires again.
            return .init(duration: max(duration, run.deadline.duration(since: run.started) + .milliseconds(1)), exit: .exited(0),
                         results: results)
        case .interrupted:
            // Its own end is unknown; it ran at least until refreshd's stop ended it, so it
            // lasts past that instant and the replay's stop at the same instant finds it in
            // flight again.
            return .init(duration: duration + .milliseconds(1), exit: .exited(0), results: results, interruptedAt: ended)
        }
    }

    /// Where the replay starts (`from`, or refreshd's first start after it when it was down)
    /// and the recorded events as faults.
    static func faults(world: [WorldEvent], runs: [RunRecord], from: Instant, to: Instant) -> (start: Instant, faults: [Fault]) {
        let events = world.sorted { $0.at < $1.at }
        // The state at `from`: running (a start, or nothing recorded at all), conditions.
        var up = true
        var conditions = Conditions()
        for event in events where event.at < from {
            switch event.what {
            case .started: up = true; conditions = Conditions()
            case .stopping: up = false
            case let .conditions(c): conditions = c
            default: break
            }
        }
        if events.allSatisfy({ $0.at >= from }), let first = events.first(where: { $0.at >= from }), case .started = first.what {
            up = false  // nothing before: it first started in the period
        }
        var start = from
        if !up, let first = events.first(where: { $0.at >= from && $0.at < to && $0.what == .started }) {
            start = first.at
            up = true
            conditions = Conditions()
        }
        var faults: [Fault] = []
        var downSince: Instant?
        var lastStart = start
        var noPower: Instant? = conditions.externalPower ? nil : start
        var noNetwork: Instant? = conditions.network ? nil : start
        var paused: [String: Instant] = [:]
        func span(_ a: Instant, _ b: Instant) -> TimeSpan { TimeSpan(start: .at(a), duration: b.duration(since: a)) }
        func setConditions(_ c: Conditions, at t: Instant) {
            if c.externalPower, let since = noPower { faults.append(.powerLoss(span(since, t))); noPower = nil }
            if !c.externalPower, noPower == nil { noPower = t }
            if c.network, let since = noNetwork { faults.append(.networkLoss(span(since, t))); noNetwork = nil }
            if !c.network, noNetwork == nil { noNetwork = t }
        }
        for event in events where event.at >= start && event.at < to {
            switch event.what {
            case .started:
                if let since = downSince {
                    faults.append(.down(span(since, event.at)))
                } else if event.at > start {
                    // No stop before it: killed. The last instant the store knew of since the
                    // previous start.
                    // A run's results lines, saved as they were applied, say when it last wrote.
                    let known = runs.flatMap { [$0.started, $0.ended].compactMap { $0 } + lineTimes($0) }
                        + events.filter { $0.what != .started }.map(\.at)
                    let last = known.filter { $0 >= lastStart && $0 < event.at }.max() ?? lastStart
                    faults.append(.kill(at: .at(last), restartAfter: event.at.duration(since: last)))
                }
                downSince = nil
                lastStart = event.at
                setConditions(Conditions(), at: event.at)
            case .stopping:
                if downSince == nil { downSince = event.at }
            case let .clockStep(expected):
                faults.append(.clockStep(at: .at(max(start, expected)), by: event.at.duration(since: expected)))
            case let .conditions(c):
                setConditions(c, at: event.at)
            case let .pause(job):
                paused[job] = event.at
            case let .resume(job):
                let since = paused.removeValue(forKey: job) ?? start
                faults.append(.pause(job: job, at: .at(since), for: event.at.duration(since: since)))
            case let .order(order):
                faults.append(.order(order, at: .at(event.at)))
            case .reload, .activity:
                break  // the files are not kept: a note (`reloadNotes`); activities are compared
            }
        }
        if let since = downSince { faults.append(.down(span(since, to))) }
        setConditions(Conditions(), at: to)
        for (job, since) in paused.sorted(by: { $0.key < $1.key }) { faults.append(.pause(job: job, at: .at(since), for: nil)) }
        return (start, faults)
    }
}
